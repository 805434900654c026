# ctrl ioctls and the nvgpu dispatchers' copy back, as L4T r36.4's os/linux/ioctl_ctrl.c implements them (orin_emu/AUDIT.md).
import ctypes, errno, os
from tegra_conformance.tegra import F, CTRL, errno_of, read_only_arg
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

def test_a_fault_in_a_handlers_copy_returns_the_uncopied_count(orin):
  # gk20a_ctrl_ioctl_gpu_characteristics / gk20a_ctrl_get_tpc_masks: err = copy_to_user(...), the count of bytes not copied, is the
  # ioctl's return value, with no errno and nothing copied back
  r = S.nvgpu_gpu_get_characteristics(gpu_characteristics_buf_size=400, gpu_characteristics_buf_addr=8)
  assert orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, r) == 328 and r.gpu_characteristics_buf_size == 400
  t = S.nvgpu_gpu_get_tpc_masks_args(mask_buf_size=64, mask_buf_addr=8)
  assert orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_TPC_MASKS, t) == 4 * len(orin.tpc_masks()) and t.mask_buf_size == 64

def test_a_fault_in_the_dispatchers_copy_back(orin):
  # ctrl, TSG and channel dispatchers return copy_to_user's count; the AS dispatcher turns it into EFAULT
  with read_only_arg(S.nvgpu_gpu_l2_fb_args(l2_flush=1, fb_flush=1)) as p: assert orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_FLUSH_L2, p) == 5
  ch = orin.open_channel()
  with read_only_arg(S.nvgpu_get_param_args()) as p: assert ch.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, p) == 4
  as_ = orin.alloc_as()
  with read_only_arg(S.nvgpu_as_unmap_buffer_args(offset=0x1234000)) as p:
    assert errno_of(lambda: as_.ioctl(I.NVGPU_AS_IOCTL_UNMAP_BUFFER, p)) == errno.EFAULT

def test_alloc_as_ignores_reserved_and_unknown_flags(orin):
  # gk20a_ctrl_alloc_as / as.c gk20a_vm_alloc_share read neither the reserved field nor flags other than UNIFIED_VA
  a = S.nvgpu_alloc_as_args(flags=C.NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA | 0x100, reserved=7, va_range_start=0x200000, va_range_end=0xFF00000000)
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)
  assert a.as_fd > 0

def test_open_tsg_share_rules(orin):
  # gk20a_ctrl_open_tsg with CONFIG_NVGPU_TSG_SHARING: other flag bits are ignored; a share needs a source device id and a token,
  # and neither may be given without SHARE
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_OPEN_TSG, t:=S.nvgpu_gpu_open_tsg_args(flags=0x2))
  assert t.tsg_fd > 0
  share = C.NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE
  for kw in (dict(source_device_instance_id=1), dict(flags=share, share_token=5), dict(flags=share, source_device_instance_id=1),
             dict(flags=share, source_device_instance_id=1, share_token=0x1234567)):   # no such token
    assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_OPEN_TSG, S.nvgpu_gpu_open_tsg_args(**kw))) == errno.EINVAL, kw

def test_open_channel_on_the_gr_runlist(orin):
  # __gk20a_channel_open: -1 is the GR runlist; an id must be one of this GPU instance's runlists
  assert orin.open_channel(-1).fd > 0 and orin.open_channel(0).fd > 0
  assert errno_of(lambda: orin.open_channel(runlist=-2)) == errno.EINVAL

def test_tpc_masks_short_buffer(orin):
  # gk20a_ctrl_get_tpc_masks: mask_buf_size 0 only asks for the size; a short buffer gets what fits
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_TPC_MASKS, a:=S.nvgpu_gpu_get_tpc_masks_args())
  masks, buf = orin.tpc_masks(), (ctypes.c_uint32 * 2)(0xdead, 0xdead)
  assert a.mask_buf_size == 4 * len(masks) and len(masks) >= 1
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_TPC_MASKS, S.nvgpu_gpu_get_tpc_masks_args(mask_buf_size=4, mask_buf_addr=ctypes.addressof(buf)))
  assert list(buf) == [masks[0], 0xdead]

def test_each_ctrl_open_has_its_device_instance_id(orin):
  # gk20a_ctrl_dev_open numbers every ctrl open; GET_CHARACTERISTICS reports the caller's (the id a TSG share names)
  other = F(CTRL, os.O_RDWR | os.O_CLOEXEC)
  c = S.nvgpu_gpu_characteristics()
  other.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, S.nvgpu_gpu_get_characteristics(gpu_characteristics_buf_size=ctypes.sizeof(c),
                                                                                    gpu_characteristics_buf_addr=ctypes.addressof(c)))
  mine, _ = orin.characteristics()
  assert mine.device_instance_id and c.device_instance_id > mine.device_instance_id

def test_open_channel_runs_out_of_channels(orin):
  # channel.c nvgpu_channel_open_new finds no free channel: __gk20a_channel_open's "failed to get f", ENOMEM (ga10b has 512)
  chans = []
  while (err:=errno_of(lambda: chans.append(orin.open_channel()))) is None: assert len(chans) <= 512
  assert err == errno.ENOMEM and chans
