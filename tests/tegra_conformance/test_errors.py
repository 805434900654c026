# Error paths of the dispatchers and handlers: errno, and no output copied back on failure (orin_emu/AUDIT.md has the sources).
import errno, os
from tegra_conformance.tegra import F, PAGE, WC, errno_of
from orin_emu.kernel.uapi import IOC, structs as S, ioctls as I, consts as C

EINVAL, ENOTTY, ENOMEM, EEXIST, EBADF, ENOSPC = errno.EINVAL, errno.ENOTTY, errno.ENOMEM, errno.EEXIST, errno.EBADF, errno.ENOSPC

def test_ctrl_dispatcher(orin):
  buf = bytearray(16)
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("A"), 5, 16), buf)) == EINVAL   # wrong magic
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("G"), 0, 16), buf)) == EINVAL   # nr 0
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("G"), 45, 16), buf)) == EINVAL  # above NVGPU_GPU_IOCTL_LAST
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("G"), 5, 265), bytearray(265))) == EINVAL   # above the max argument size
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("G"), 11, 16), buf)) == ENOTTY  # OPEN_CHANNEL declared as 16 bytes: another request
  assert errno_of(lambda: orin.ctrl.ioctl(IOC(3, ord("G"), 44, 8), bytearray(8))) == ENOTTY

def test_other_dispatchers(orin):
  as_, tsg, ch = orin.alloc_as(), orin.open_tsg(), orin.open_channel()
  for f, magic, last, maxsz in ((as_, "A", 14, 40), (tsg, "T", 21, 32), (ch, "H", 128, 104)):
    assert errno_of(lambda: f.ioctl(IOC(3, ord("G"), 1, 8), bytearray(8))) == EINVAL
    assert errno_of(lambda: f.ioctl(IOC(3, ord(magic), last + 1, 8), bytearray(8))) == EINVAL
    assert errno_of(lambda: f.ioctl(IOC(3, ord(magic), 1, maxsz + 8), bytearray(maxsz + 8))) == EINVAL
    assert errno_of(lambda: f.ioctl(IOC(3, ord(magic), 4, 8), bytearray(8))) == ENOTTY
  assert errno_of(lambda: tsg.ioctl(I.NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES, S.nvgpu_tsg_read_all_sm_error_state_args())) == ENOTTY

def test_nvmap_dispatcher(orin):
  assert errno_of(lambda: orin.nvmap.ioctl(IOC(3, ord("G"), 0, 8), bytearray(8))) == ENOTTY   # wrong magic
  assert errno_of(lambda: orin.nvmap.ioctl(IOC(3, ord("N"), 108, 8), bytearray(8))) == ENOTTY
  assert errno_of(lambda: orin.nvmap.ioctl(IOC(3, ord("N"), 0, 16), bytearray(16))) == ENOTTY  # CREATE with the wrong size

def test_nvmap_create_alloc_free(orin):
  assert errno_of(lambda: orin.create(0)) == EINVAL
  h = orin.create(100)
  assert errno_of(lambda: orin.alloc(0x7fff1234)) == EINVAL                      # unknown handle
  assert errno_of(lambda: orin.alloc(h, align=3 * PAGE)) == EINVAL               # not a power of two
  assert errno_of(lambda: orin.alloc(h, numa=5)) == EINVAL
  assert errno_of(lambda: orin.alloc(h, heap=0)) == ENOMEM                       # is_nvmap_memory_available: no heap
  assert errno_of(lambda: orin.alloc(h, heap=1 << 31)) == ENOMEM                 # the old "SYSMEM" mask
  orin.alloc(h)
  assert errno_of(lambda: orin.alloc(h)) == EEXIST
  orin.free(h); orin.free(h); orin.free(0)                                       # unknown and 0 IDs: 0
  assert errno_of(lambda: orin.alloc(h)) == EINVAL                               # gone after FREE

def test_nvmap_get_fd_lookup_errors(orin):
  closed = os.open("/dev/null", os.O_RDONLY); os.close(closed)
  assert errno_of(lambda: orin.get_fd(closed)) == EBADF                          # not a handle and not an fd
  assert errno_of(lambda: orin.get_fd(orin.ctrl.fd)) == EINVAL                   # an fd, but not a dma-buf
  h, buf = orin.buffer(PAGE)
  orin.free(h)
  assert errno_of(lambda: orin.get_fd(buf.fd)) == EINVAL                         # nvmap's own dma-buf fd is not duplicated
  assert errno_of(lambda: orin.get_fd(h)) == EBADF                               # a freed handle: taken as fd (int)h < 0

def test_alloc_as_rules(orin):
  for kw in (dict(start=0), dict(end=0), dict(start=0x201000), dict(end=0xFFFFE01000), dict(start=0xFFFFE00000, end=0x200000)):
    assert errno_of(lambda: orin.alloc_as(**kw)) == EINVAL, kw
  a = S.nvgpu_alloc_as_args(big_page_size=64 << 10, flags=2, va_range_start=0x200000, va_range_end=0xFFFFE00000)
  assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)) == EINVAL
  a = S.nvgpu_alloc_as_args(flags=2, va_range_start=0x200000, va_range_end=0xFFFFE00000, va_range_split=0x100000000)
  assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)) == EINVAL
  a.as_fd = -7
  assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)) == EINVAL and a.as_fd == -7   # nothing copied back

def test_open_rules(orin):
  assert errno_of(lambda: F("/dev/nvgpu/igpu0/as", os.O_RDWR)) == EINVAL
  assert errno_of(lambda: orin.open_channel(runlist=7)) == EINVAL
  t = S.nvgpu_gpu_open_tsg_args(share_token=5)
  assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_OPEN_TSG, t)) == EINVAL

def test_map_buffer_ex_errors(orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(2 * PAGE)
  closed = os.open("/dev/null", os.O_RDONLY); os.close(closed)
  class Fd: fd = closed
  assert errno_of(lambda: orin.map(as_, Fd)) == EBADF
  assert errno_of(lambda: orin.map(as_, orin.ctrl)) == EINVAL
  assert errno_of(lambda: orin.map(as_, buf, flags=0x2)) == EINVAL                       # extra flags
  assert errno_of(lambda: orin.map(as_, buf, flags=3 << 10)) == EINVAL                   # no such access type
  assert errno_of(lambda: orin.map(as_, buf, offset=0x10000000)) == EINVAL               # regular map with an address
  assert errno_of(lambda: orin.map(as_, buf, buffer_offset=PAGE)) == EINVAL              # regular map with a buffer offset
  assert errno_of(lambda: orin.map(as_, buf, mapping_size=PAGE)) == EINVAL               # map_size && non-fixed-mapping
  fixed = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET
  assert errno_of(lambda: orin.map(as_, buf, fixed, 0x10000000, PAGE, 2 * PAGE)) == EINVAL   # beyond the dma-buf
  assert errno_of(lambda: orin.map(as_, buf, compr=-1, incompr=-1)) == ENOMEM            # no comptags and no fallback kind
  m = S.nvgpu_as_map_buffer_ex_args(flags=0x2, compr_kind=-1, dmabuf_fd=buf.fd, page_size=PAGE, offset=0x5000)
  assert errno_of(lambda: as_.ioctl(I.NVGPU_AS_IOCTL_MAP_BUFFER_EX, m)) == EINVAL and m.offset == 0x5000   # no VA copied back
  unallocated = orin.get_fd(orin.create(PAGE))
  assert errno_of(lambda: orin.map(as_, unallocated)) == EINVAL

def test_tsg_bind_rules(orin):
  as_, tsg, veid, ch = orin.tsg_channel()
  assert errno_of(lambda: orin.bind_tsg(tsg, ch, veid)) == EINVAL                        # no AS yet: VM mismatch
  orin.bind_as(as_, ch)
  assert errno_of(lambda: orin.bind_as(as_, ch)) == EINVAL                               # already bound to an AS
  c, _ = orin.characteristics()
  assert errno_of(lambda: orin.bind_tsg(tsg, ch, c.max_veid_count_per_tsg)) == EINVAL
  assert errno_of(lambda: orin.bind_tsg(tsg, orin.ctrl, veid)) == EINVAL                 # not a channel
  other_as = orin.alloc_as()
  ch2 = orin.open_channel(); orin.bind_as(other_as, ch2)
  assert errno_of(lambda: orin.bind_tsg(tsg, ch2, veid)) == EINVAL                       # subcontext VM is another AS
  orin.bind_tsg(tsg, ch, veid)
  assert errno_of(lambda: orin.bind_tsg(orin.open_tsg(), ch, 0)) == EINVAL               # already in a TSG

def test_subcontext_rules(orin):
  as_, tsg = orin.alloc_as(), orin.open_tsg()
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=2)) == EINVAL
  assert errno_of(lambda: orin.subcontext(tsg, orin.ctrl)) == EINVAL
  assert orin.subcontext(tsg, as_) == 1 and orin.subcontext(tsg, as_) == 2
  assert orin.subcontext(tsg, as_, typ=C.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC) == 0
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=C.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC)) == ENOSPC

def test_setup_bind_checks_in_order(orin):
  as_, tsg, veid, ch = orin.tsg_channel()
  (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
  sb = lambda **kw: errno_of(lambda: orin.setup_bind(ch, kw.pop("userd", userd), kw.pop("ring", ring), **kw))
  assert sb(entries=1000) == EINVAL and sb(entries=1) == EINVAL
  assert sb() == EINVAL                                                                  # not bound to an address space
  orin.bind_as(as_, ch)
  assert sb() == EINVAL                                                                  # not bound to a TSG
  orin.bind_tsg(tsg, ch, veid)
  assert sb() == EINVAL                                                                  # deterministic with the watchdog on
  orin.wdt(ch)
  assert sb(flags=C.NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT) == EINVAL          # usermode needs deterministic
  class Zero: fd = 0
  assert sb(userd=Zero) == EINVAL and sb(ring=Zero) == EINVAL
  assert sb(userd_dmabuf_offset=PAGE) == EINVAL and sb(gpfifo_dmabuf_offset=PAGE) == EINVAL
  assert sb(ring=orin.ctrl) == EINVAL
  assert sb(entries=2048) == EINVAL                                                      # the ring buffer is too small for 2048 entries
  bad = S.nvgpu_channel_setup_bind_args(num_gpfifo_entries=1024, flags=0xA, userd_dmabuf_fd=userd.fd, gpfifo_dmabuf_fd=0, work_submit_token=0xdead)
  assert errno_of(lambda: ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SETUP_BIND, bad)) == EINVAL and bad.work_submit_token == 0xdead   # no token on failure
  assert orin.setup_bind(ch, userd, ring).work_submit_token != 0xdead
  assert sb() == EEXIST
  assert errno_of(lambda: orin.wdt(ch, C.NVGPU_IOCTL_CHANNEL_ENABLE_WDT)) == EINVAL      # deterministic channel: only DISABLE

def test_wdt_needs_exactly_one_of_enable_disable(orin):
  ch = orin.open_channel()
  assert errno_of(lambda: orin.wdt(ch, 0)) == EINVAL and errno_of(lambda: orin.wdt(ch, 3)) == EINVAL
  orin.wdt(ch, C.NVGPU_IOCTL_CHANNEL_ENABLE_WDT); orin.wdt(ch)

def test_alloc_obj_ctx_rules(orin):
  as_, tsg, veid, ch = orin.tsg_channel()
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC7C0)) == EINVAL                          # no address space
  orin.bind_as(as_, ch)
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC6C0)) == EINVAL                          # not a ga10b class
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC7C0)) == EINVAL                          # not in a TSG

def test_error_notifier_rules(orin):
  ch = orin.open_channel()
  h, buf = orin.buffer(PAGE)
  n = lambda mem, off: ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=off, size=16, mem=mem))
  assert errno_of(lambda: n(0, 0)) == EINVAL and errno_of(lambda: n(orin.ctrl.fd, 0)) == EINVAL
  assert errno_of(lambda: n(buf.fd, PAGE - 8)) == EINVAL
  n(buf.fd, PAGE - 16)

def test_bad_argument_pointer_is_efault(orin):
  assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_FLUSH_L2, 8)) == errno.EFAULT   # the dispatcher's copy_from_user
  assert errno_of(lambda: orin.nvmap.ioctl(I.NVMAP_IOC_CREATE, 8)) == errno.EFAULT

def test_handle_does_not_fit_c_int(orin):
  h = orin.create(PAGE)
  try: orin.nvmap.ioctl(I.NVMAP_IOC_FREE, h); raise AssertionError("fcntl took an unsigned handle")
  except OverflowError: pass
  orin.free(h)
