# Fault injection for TegraIface's reliability tests: the nth allocation, any ioctl with a chosen errno, opens, channel errors.
import ctypes, errno, os, pathlib, subprocess, sys
import pytest
from tegra_conformance.tegra import F, CTRL, PAGE, errno_of
from orin_emu.faults import MMUFault, SMException
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

ROOT = pathlib.Path(__file__).resolve().parents[2]

def test_nth_alloc_fails_with_enomem(k, orin):
  k.faults.alloc(nth=3)
  hs = [orin.create(PAGE) for _ in range(4)]
  orin.alloc(hs[0]); orin.alloc(hs[1])
  assert errno_of(lambda: orin.alloc(hs[2])) == errno.ENOMEM
  orin.alloc(hs[2]); orin.alloc(hs[3])   # one shot
  assert k.counts()["dram_bytes"] == 4 * PAGE

def test_any_ioctl_fails_with_chosen_errno_and_no_effect(k, orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(PAGE)
  k.faults.ioctl("NVGPU_AS_IOCTL_MAP_BUFFER_EX", errno.EFAULT, nth=2)
  va = orin.map(as_, buf)
  m = S.nvgpu_as_map_buffer_ex_args(compr_kind=-1, dmabuf_fd=orin.buffer(PAGE)[1].fd, page_size=PAGE)
  assert errno_of(lambda: as_.ioctl(I.NVGPU_AS_IOCTL_MAP_BUFFER_EX, m)) == errno.EFAULT and m.offset == 0
  assert k.counts()["gpu_mappings"] == 1 and va
  k.faults.ioctl(I.NVMAP_IOC_FREE, errno.EIO)   # by request number too
  assert errno_of(lambda: orin.free(h)) == errno.EIO

def test_open_fails_with_chosen_errno(k):
  k.faults.open(CTRL, errno.EACCES)
  with pytest.raises(PermissionError) as e: F(CTRL, os.O_RDWR)
  assert e.value.filename == CTRL
  F(CTRL, os.O_RDWR)

def test_channel_error_state_and_notifier(k, orin):
  as_, tsg, veid, (compute, sb), _ = orin.bring_up()
  h, note = orin.buffer(PAGE)
  compute.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=64, size=16, mem=note.fd))
  timedout = lambda: (compute.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, g:=S.nvgpu_get_param_args()), g.value)[1]
  assert timedout() == 0
  k.channel_error(sb.work_submit_token & 0xFFF, MMUFault(0xFE00200000))
  p = orin.cpu_map(note, PAGE)
  n = S.nvgpu_notification.from_buffer_copy(ctypes.string_at(p + 64, 16))
  assert timedout() == 1 and n.info32 == C.NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT and n.status == 0xFFFF and n.nanoseconds[0] | n.nanoseconds[1]
  k.channel_error(sb.work_submit_token & 0xFFF, SMException(0x10, va=0xFE00200000, pc=0xff55a2a830))
  rec = S.nvgpu_tsg_sm_error_state_record()
  args = S.nvgpu_tsg_read_single_sm_error_state_args(sm_id=0, record_mem=ctypes.addressof(rec), record_size=24)
  tsg.ioctl(I.NVGPU_TSG_IOCTL_READ_SINGLE_SM_ERROR_STATE, args)
  assert (rec.global_esr, rec.warp_esr, rec.warp_esr_pc) == (4, 0x10, 0xff55a2a830)
  assert S.nvgpu_notification.from_buffer_copy(ctypes.string_at(p + 64, 16)).info32 == C.NVGPU_CHANNEL_GR_EXCEPTION

def test_a_failed_set_error_notifier_leaves_the_channel_without_one(k, orin):
  # os/linux/ioctl_channel.c gk20a_init_error_notifier drops the old notifier before it checks the new one
  as_, tsg, veid, (compute, sb), _ = orin.bring_up()
  h, note = orin.buffer(PAGE)
  n = lambda mem: compute.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=0, size=16, mem=mem))
  n(note.fd)
  assert errno_of(lambda: n(orin.ctrl.fd)) == errno.EINVAL
  k.channel_error(sb.work_submit_token & 0xFFF, MMUFault(0xFE00200000))
  assert ctypes.string_at(orin.cpu_map(note, PAGE), 16) == bytes(16)

def test_faults_from_the_environment_reach_a_subprocess(tmp_path):
  code = ("import orin_emu.hook, errno; from tegra_conformance.tegra import Orin, errno_of; o = Orin(); h = o.create(4096); "
          "print(errno_of(lambda: o.alloc(h)), errno_of(lambda: o.alloc_as()))")
  env = {**os.environ, "ORIN_EMU_FAULTS": "alloc:1,ioctl:NVGPU_GPU_IOCTL_ALLOC_AS:EPERM", "ORIN_EMU_KMSG": str(tmp_path/"kmsg"),
         "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT/"tests"), os.environ.get("PYTHONPATH", "")])}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
  assert out.stdout.split() == [str(errno.ENOMEM), str(errno.EPERM)], out.stderr

def test_copy_from_user_of_any_length_faults_at_its_first_unreadable_page(k):
  # nvmap's list ioctls copy in a count the caller chose: a length no mapping covers is EFAULT there, as for any bad range
  import mmap
  from orin_emu.kernel import KernelError
  m = mmap.mmap(-1, 2 * PAGE)
  addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
  assert ctypes.CDLL(None).mprotect(ctypes.c_void_p(addr + PAGE), PAGE, 0) == 0   # PROT_NONE
  m[PAGE - 4:PAGE] = b"abcd"
  assert k.umem.read(addr + PAGE - 4, 4) == b"abcd"
  for n in (5, 1 << 44):
    with pytest.raises(KernelError) as e: k.umem.read(addr + PAGE - 4, n)
    assert e.value.errno == errno.EFAULT
