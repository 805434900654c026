# Channel ioctls, as L4T r36.4's os/linux/ioctl_channel.c, linux-channel.c, common/fifo/channel.c and common/gr/gr_setup.c implement
# them (orin_emu/AUDIT.md).
import ctypes, errno, os
from tegra_conformance.tegra import PAGE, WC, errno_of
from orin_emu.kernel.uapi import structs as S, ioctls as I

def bound_channel(orin, setup=False):
  as_, tsg, veid, ch = orin.tsg_channel()
  orin.bind_as(as_, ch); orin.bind_tsg(tsg, ch, veid); orin.wdt(ch)
  if setup:
    (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
    orin.keep += [ring, userd]
    orin.setup_bind(ch, userd, ring)
  return as_, tsg, veid, ch

def test_a_channel_is_timed_out_until_it_is_in_a_tsg(orin):
  # channel.c: a new channel is unserviceable until nvgpu_tsg_bind_channel; GET_TIMEDOUT reports nvgpu_channel_check_unserviceable
  as_, tsg, veid, ch = orin.tsg_channel()
  assert orin.timedout(ch) == 1
  orin.bind_as(as_, ch); orin.bind_tsg(tsg, ch, veid)
  assert orin.timedout(ch) == 0

def test_setup_bind_takes_the_ring_before_the_userd(orin):
  # linux-channel.c nvgpu_channel_alloc_usermode_buffers: the ring's dma-buf is looked up, size-checked and mapped first
  _, _, _, ch = bound_channel(orin)
  (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
  closed = os.open("/dev/null", os.O_RDONLY); os.close(closed)
  class Closed: fd = closed
  assert errno_of(lambda: orin.setup_bind(ch, Closed, orin.ctrl)) == errno.EINVAL   # the ring is no dma-buf
  assert errno_of(lambda: orin.setup_bind(ch, orin.ctrl, Closed)) == errno.EBADF    # the ring fd is not open
  assert errno_of(lambda: orin.setup_bind(ch, Closed, ring)) == errno.EBADF
  unallocated = orin.get_fd(orin.create(8192))
  assert errno_of(lambda: orin.setup_bind(ch, userd, unallocated)) == errno.EINVAL   # nothing to pin
  orin.setup_bind(ch, userd, ring)

def test_alloc_obj_ctx_leaves_obj_id_and_flags_alone(orin):
  # gk20a_channel_ioctl ALLOC_OBJ_CTX writes no output field: obj_id and flags come back as they went in
  _, _, _, ch = bound_channel(orin, setup=True)
  ch.ioctl(I.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, o:=S.nvgpu_alloc_obj_ctx_args(class_num=0xC7C0, obj_id=7))
  assert (o.obj_id, o.flags) == (7, 0)

def test_alloc_obj_ctx_classes(orin):
  # hal/class/class_ga10b.c ga10b_class_is_valid: ga10b's classes and the older ones it falls back to; graphics classes only on VEID 0
  # (tsg.c nvgpu_tsg_validate_class_veid_pbdma)
  _, _, _, ch = bound_channel(orin, setup=True)
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC6C0)) == errno.EINVAL   # AMPERE_COMPUTE_A (GA100), not valid on ga10b
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC797)) == errno.EINVAL   # AMPERE_B (3D) on an async VEID
  orin.alloc_obj(ch, 0xC5C0)   # TURING_COMPUTE_A

def test_error_notifier_offset_wrap_and_unallocated_buffer(orin):
  # gk20a_init_error_notifier: offset + 16 must neither pass the buffer's end nor wrap; the buffer is vmapped
  _, _, _, ch = bound_channel(orin)
  _, buf = orin.buffer(PAGE)
  n = lambda mem, off=0: ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=off, size=16, mem=mem))
  n(buf.fd)
  assert errno_of(lambda: n(orin.ctrl.fd)) == errno.EINVAL
  assert errno_of(lambda: n(buf.fd, off=2**64 - 8)) == errno.EINVAL   # offset + 16 wraps
  unallocated = orin.get_fd(orin.create(PAGE))
  assert errno_of(lambda: n(unallocated.fd)) == errno.ENOMEM   # an unallocated buffer cannot be vmapped
  n(buf.fd)

def test_timeouts_are_stored_unchecked(orin):
  # gk20a_channel_ioctl SET_TIMEOUT / SET_TIMEOUT_EX set the ctxsw timeout with no check
  ch = orin.open_channel()
  ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_TIMEOUT, ctypes.c_uint32(0xFFFFFFFF))
  ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_TIMEOUT_EX, S.nvgpu_set_timeout_ex_args(timeout=0, flags=0xFFFFFFFF))
