# Device nodes and sysfs as a Jetson user-space backend sees them, and the emulator's loud failures.
import ctypes, errno, os, pytest
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import F, PAGE, errno_of
from orin_emu.kernel import NotEmulated
from orin_emu.kernel.uapi import structs as S, ioctls as I

DEVFREQ = "/sys/class/devfreq/17000000.gpu"

def test_nodes_exist_and_list(k):
  assert all(hcq.FileIOInterface.exists(p) for p in ("/dev/nvmap", "/dev/nvgpu/igpu0/ctrl", DEVFREQ + "/max_freq"))
  assert set(F("/dev/nvgpu/igpu0").listdir()) >= {"ctrl", "as", "channel", "tsg", "power", "dbg", "prof"}
  dev = F("/dev").listdir()
  assert {"nvmap", "nvgpu", "kmsg"} <= set(dev) and len(dev) == len(set(dev)) and F("/sys/class/devfreq").listdir() == ["17000000.gpu"]
  assert hcq.FileIOInterface.readlink(DEVFREQ).endswith("/devfreq/17000000.gpu")

def test_devfreq_reads_and_root_only_writes(k):
  assert int(F(DEVFREQ + "/max_freq").read()) == k.characteristics.max_freq
  assert "nvhost_podgov" in F(DEVFREQ + "/available_governors").read()
  assert errno_of(lambda: F(DEVFREQ + "/cur_freq", os.O_WRONLY)) == errno.EACCES   # no store method: EACCES even for root
  if os.geteuid() != 0: assert errno_of(lambda: F(DEVFREQ + "/min_freq", os.O_WRONLY)) == errno.EACCES
  else:
    F(DEVFREQ + "/min_freq", os.O_WRONLY).write(F(DEVFREQ + "/max_freq").read())
    assert F(DEVFREQ + "/min_freq").read() == F(DEVFREQ + "/max_freq").read() == F(DEVFREQ + "/cur_freq").read()

def test_requests_the_driver_serves_but_the_emulator_does_not_are_loud(k, orin):
  ch = orin.open_channel()
  with pytest.raises(NotEmulated): ch.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT, S.nvgpu_get_user_syncpoint_args())

def test_dispatcher_copies_outputs_back_only_on_success(k):
  from orin_emu.kernel import KernelError
  from orin_emu.kernel.nvgpu import CtrlFile
  class LateFailure(CtrlFile):   # a handler that fills an output field and then fails, as kernel handlers can
    HANDLERS = {**CtrlFile.HANDLERS, "NVGPU_GPU_IOCTL_OPEN_TSG": "fail_late"}
    def fail_late(self, a): a.tsg_fd = 99; raise KernelError(errno.EIO)
  f = F(fd=k.install(LateFailure(k)))
  t = S.nvgpu_gpu_open_tsg_args(tsg_fd=7)
  assert errno_of(lambda: f.ioctl(I.NVGPU_GPU_IOCTL_OPEN_TSG, t)) == errno.EIO and t.tsg_fd == 7

def test_immutable_ioctl_argument_returns_the_new_bytes_like_fcntl(k, orin):
  out = orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, bytes(S.nvgpu_gpu_get_characteristics()))
  assert isinstance(out, bytes) and S.nvgpu_gpu_get_characteristics.from_buffer_copy(out).gpu_characteristics_buf_size == 328

def test_characteristics_are_configurable(k, monkeypatch):
  from orin_emu.kernel import reset
  monkeypatch.setenv("ORIN_EMU_CHARACTERISTICS", "num_gpc=2,max_veid_count_per_tsg=0x10")
  c = reset(num_tpc_per_gpc=2).characteristics
  assert (c.num_gpc, c.gpc_mask, c.num_tpc_per_gpc, c.max_veid_count_per_tsg, c.arch) == (2, 3, 2, 16, 0x170)

def test_an_orin_with_gated_tpcs_has_fewer_sms(k, monkeypatch):
  # the SM count comes from the TPCs each GPC has (GET_TPC_MASKS), not num_gpc x num_tpc_per_gpc x 2: here 2 x (4 + 3) SMs
  from orin_emu.kernel import reset
  from tegra_conformance.tegra import Orin
  monkeypatch.setenv("ORIN_EMU_TPC_MASKS", "0xf,0x7")
  assert reset(num_gpc=2).sm_count == 14
  o = Orin()
  tsg, c = o.open_tsg(), o.characteristics()[0]
  assert o.tpc_masks() == [0xF, 0x7] and o.sm_count() == 14 < c.num_gpc * c.num_tpc_per_gpc * 2
  rec = S.nvgpu_tsg_sm_error_state_record()
  read = lambda sm: tsg.ioctl(I.NVGPU_TSG_IOCTL_READ_SINGLE_SM_ERROR_STATE, S.nvgpu_tsg_read_single_sm_error_state_args(
    sm_id=sm, record_mem=ctypes.addressof(rec), record_size=24))
  read(13)
  assert errno_of(lambda: read(14)) == errno.EINVAL
  assert k.sm_count == 8 and reset(tpc_masks=[0x3]).tpc_masks == [0x3, 0]   # the default Orin: 1 GPC of 4 TPCs; masks pad to max_gpc_count

def test_immutable_ioctl_argument_longer_than_fcntl_allows(k, orin):
  with pytest.raises(ValueError): orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, bytes(1025))

def test_static_mmap_of_an_emulated_fd_maps_the_buffer(k, orin):
  import ctypes, mmap
  h, buf = orin.buffer(PAGE)
  p = orin.cpu_map(buf, PAGE)
  q = hcq.FileIOInterface._mmap(0, PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, buf.fd, 0)   # the fd number alone, as the fork did
  ctypes.memmove(p, b"same", 4)
  assert ctypes.string_at(q, 4) == b"same"
  hcq.FileIOInterface.munmap(p, PAGE); hcq.FileIOInterface.munmap(q, PAGE)
