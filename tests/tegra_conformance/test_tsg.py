# TSG ioctls: subcontexts, channel binds and SM error states, as L4T r36.4's os/linux/ioctl_tsg.c and common/fifo/tsg.c implement
# them (orin_emu/AUDIT.md).
import ctypes, errno
from tegra_conformance.tegra import PAGE, WC, errno_of
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

SYNC = C.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC
def max_veids(orin) -> int: return orin.characteristics()[0].max_veid_count_per_tsg
def delete(tsg, veid): tsg.ioctl(I.NVGPU_TSG_IOCTL_DELETE_SUBCONTEXT, S.nvgpu_tsg_delete_subcontext_args(veid=veid))

def test_bind_creates_only_veid0_implicitly(orin):
  # tsg.c nvgpu_tsg_create_sync_subcontext_internal: binding to VEID 0 creates the SYNC subcontext with the channel's VM; any other
  # VEID must come from CREATE_SUBCONTEXT (nvgpu_tsg_validate_ch_subctx_vm: "channel VM does not match with subcontext VM")
  as_, tsg, _, ch = orin.tsg_channel(veid=0)
  orin.bind_as(as_, ch)
  assert errno_of(lambda: orin.bind_tsg(tsg, ch, 5)) == errno.EINVAL
  orin.bind_tsg(tsg, ch, 0)
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=SYNC)) == errno.ENOSPC   # VEID 0 is taken now
  assert orin.subcontext(tsg, as_) == 1

def test_veid0_bind_of_a_channel_without_an_address_space(orin):
  # the implicit SYNC subcontext takes the channel's VM even when it has none, and a VM-less channel matches it
  _, tsg, _, ch = orin.tsg_channel(veid=0)
  orin.bind_tsg(tsg, ch, 0)
  (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
  assert errno_of(lambda: orin.setup_bind(ch, userd, ring)) == errno.EINVAL   # not bound to an address space
  assert orin.timedout(ch) == 0   # in a TSG: serviceable

def test_a_failed_bind_still_reserves_veid0(orin):
  # gk20a_tsg_ioctl_bind_channel_ex creates the SYNC subcontext before nvgpu_tsg_bind_channel finds the channel in another TSG
  as_, tsg, veid, ch = orin.tsg_channel()
  orin.bind_as(as_, ch); orin.bind_tsg(tsg, ch, veid)
  other = orin.open_tsg()
  assert errno_of(lambda: orin.bind_tsg(other, ch, 0)) == errno.EINVAL
  assert errno_of(lambda: orin.subcontext(other, as_, typ=SYNC)) == errno.ENOSPC

def test_legacy_bind_uses_the_veid_a_failed_ex_bind_left(orin):
  # gk20a_tsg_ioctl_bind_channel_ex stores the subcontext id in the channel before it fails; BIND_CHANNEL (an int) binds with it
  as_, tsg, veid, ch = orin.tsg_channel()
  orin.bind_as(as_, ch)
  assert errno_of(lambda: orin.bind_tsg(tsg, ch, veid + 3)) == errno.EINVAL   # never created
  assert errno_of(lambda: tsg.ioctl(I.NVGPU_TSG_IOCTL_BIND_CHANNEL, ctypes.c_int32(ch.fd))) == errno.EINVAL
  assert errno_of(lambda: tsg.ioctl(I.NVGPU_TSG_IOCTL_BIND_CHANNEL, ctypes.c_int32(-1))) == errno.EINVAL
  fresh = orin.open_channel()
  orin.bind_as(as_, fresh)
  tsg.ioctl(I.NVGPU_TSG_IOCTL_BIND_CHANNEL, ctypes.c_int32(fresh.fd))   # VEID 0, created implicitly
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=SYNC)) == errno.ENOSPC

def test_async_subcontexts_fall_back_to_veid0(orin):
  # tsg.c nvgpu_tsg_create_async_subcontext: when VEIDs 1..max-1 are taken, ASYNC takes the SYNC VEID 0
  as_, tsg, n = orin.alloc_as(), orin.open_tsg(), max_veids(orin)
  assert [orin.subcontext(tsg, as_) for _ in range(n - 1)] == list(range(1, n))
  assert orin.subcontext(tsg, as_) == 0
  assert errno_of(lambda: orin.subcontext(tsg, as_)) == errno.ENOSPC

def test_delete_subcontext_rules(orin):
  # tsg.c nvgpu_tsg_user_delete_subcontext: EINVAL past the VEID count or with channels bound; a VEID not reserved is no error
  as_, tsg, veid, ch = orin.tsg_channel()
  orin.bind_as(as_, ch); orin.bind_tsg(tsg, ch, veid)
  assert errno_of(lambda: delete(tsg, max_veids(orin))) == errno.EINVAL
  assert errno_of(lambda: delete(tsg, veid)) == errno.EINVAL
  delete(tsg, 0); delete(tsg, veid + 1)
  other = orin.subcontext(tsg, as_)
  delete(tsg, other)
  assert orin.subcontext(tsg, as_) == other   # free again

def test_subcontext_type_and_vm(orin):
  as_, tsg = orin.alloc_as(), orin.open_tsg()
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=7)) == errno.EINVAL
  assert errno_of(lambda: orin.subcontext(tsg, orin.open_tsg())) == errno.EINVAL   # an fd, but not an AS

def read_sm(tsg, sm, size=24, addr=None):
  rec = (ctypes.c_uint8 * 32)(*[0xAA] * 32)
  a = S.nvgpu_tsg_read_single_sm_error_state_args(sm_id=sm, record_mem=ctypes.addressof(rec) if addr is None else addr, record_size=size)
  ret = tsg.ioctl(I.NVGPU_TSG_IOCTL_READ_SINGLE_SM_ERROR_STATE, a)
  return ret, a.record_size, bytes(rec)

def test_sm_error_state_is_bounded_by_the_sms_the_gpu_has(orin):
  # tsg.c nvgpu_tsg_get_sm_error_state: sm_id < g->ops.gr.init.get_no_of_sm, i.e. SMs per TPC x the TPCs in GET_TPC_MASKS (gated TPCs
  # do not count), not num_gpc x num_tpc_per_gpc x 2
  tsg, n = orin.open_tsg(), orin.sm_count()
  assert read_sm(tsg, n - 1)[:2] == (0, 24)
  assert errno_of(lambda: read_sm(tsg, n)) == errno.EINVAL

def test_sm_error_state_record_size(orin):
  # gk20a_tsg_ioctl_read_single_sm_error_state: at most the record is copied and its size reported; size 0 copies nothing
  tsg = orin.open_tsg()
  ret, size, rec = read_sm(tsg, 0, size=32)
  assert (ret, size, rec[:24], rec[24:]) == (0, 24, bytes(24), b"\xaa" * 8)
  ret, size, rec = read_sm(tsg, 0, size=8)
  assert (ret, size, rec[:8], rec[8:]) == (0, 8, bytes(8), b"\xaa" * 24)
  assert read_sm(tsg, 0, size=0)[1:] == (0, b"\xaa" * 32)
  assert read_sm(tsg, 0, addr=8)[:2] == (24, 24)   # copy_to_user failed: the uncopied count is returned, nothing copied back

def test_a_tsg_holds_at_most_128_channels(orin):
  # tsg.c nvgpu_tsg_bind_channel: g->ops.runlist.get_max_channels_per_tsg (hw_ram_ga10b.h ram_rl_entry_tsg_length_max_v, 128)
  as_, tsg, veid = orin.alloc_as(), orin.open_tsg(), 0
  chans = [orin.open_channel() for _ in range(129)]
  for ch in chans: orin.bind_as(as_, ch)
  for ch in chans[:128]: orin.bind_tsg(tsg, ch, veid)
  assert errno_of(lambda: orin.bind_tsg(tsg, chans[128], veid)) == errno.EINVAL
  tsg.ioctl(I.NVGPU_IOCTL_TSG_DISABLE, 0); tsg.ioctl(I.NVGPU_IOCTL_TSG_ENABLE, 0)   # os/linux/ioctl_tsg.c: no argument, no check
