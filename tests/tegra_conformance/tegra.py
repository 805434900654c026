# A hand-driven ga10b for the conformance tests: TegraIface's bring-up steps (ops_nv.py TegraIface) as raw ioctls, nothing cached.
import contextlib, ctypes, ctypes.util, mmap, os
import tinygrad.runtime.support.hcq as hcq
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

CTRL, PAGE, WC, INNER_CACHEABLE, TAG = "/dev/nvgpu/igpu0/ctrl", 0x1000, 1, 2, 0x0900
# TegraIface's address space: nvgpu maps its own buffers (rings, GR context) in the 4 GiB above the end, and those must stay below 2^40
# (docs/tegra-address-space.md). The VAs first seen on an Orin (orin_emu/OBSERVED.md) were placed in the seed's, ending at SEED_END.
USER_START, USER_END, SEED_END = 0x200000, 0xFF00000000, 0xFFFFE00000
SM_PER_TPC = 2   # nvgpu include/nvgpu/hw/ga10b/hw_proj_ga10b.h proj_scal_litter_num_sm_per_tpc_v
LOCAL_WINDOW, SHARED_WINDOW = 0xFD00000000, 0xFE00000000

def F(*a, **kw): return hcq.FileIOInterface(*a, **kw)   # looked up per call: the seam replaces the class inside hcq
def errno_of(fn) -> int|None:
  try: fn()
  except OSError as e: return e.errno
  return None
def proc_fds() -> int: return len(os.listdir("/proc/self/fd"))

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes, libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t], [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

@contextlib.contextmanager
def read_only_arg(arg):
  """The argument struct in a page below 2 GiB mapped read-only, as the int fcntl.ioctl passes as a pointer: the kernel can read it,
  its copy back faults."""
  for hint in range(0x40000000, 0x80000000, 0x1000000):
    if (p:=libc.mmap(hint, PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x100000, -1, 0)) == hint: break
    if p not in (None, 0xFFFFFFFFFFFFFFFF): libc.munmap(p, PAGE)   # a kernel without MAP_FIXED_NOREPLACE put it elsewhere
  else: raise RuntimeError("no free page below 2 GiB")
  ctypes.memmove(p, bytes(arg), ctypes.sizeof(arg))
  libc.mprotect(p, PAGE, mmap.PROT_READ)
  try: yield p
  finally: libc.munmap(p, PAGE)

def kernel_log():
  """/dev/kmsg opened as dmesg opens it (non-blocking) and drained; the returned function gives the records logged since, as
  (priority, text). Reading the kernel log needs root or kernel.dmesg_restrict=0 on a Jetson."""
  f = F("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
  def new():
    recs = (f.read(binary=True) or b"").decode(errors="replace").splitlines()
    return [(int(r.split(",", 1)[0]) & 7, r.split(";", 1)[1]) for r in recs if not r.startswith(" ")]
  new()
  return new

class Orin:
  def __init__(self):
    self.nvmap, self.ctrl, self.keep = F("/dev/nvmap", os.O_RDWR | os.O_SYNC | os.O_CLOEXEC), F(CTRL, os.O_RDWR | os.O_CLOEXEC), []
  def close(self):
    self.keep.clear()
    del self.nvmap, self.ctrl

  def characteristics(self, size=ctypes.sizeof(S.nvgpu_gpu_characteristics)):
    c = S.nvgpu_gpu_characteristics()
    r = S.nvgpu_gpu_get_characteristics(gpu_characteristics_buf_size=size, gpu_characteristics_buf_addr=ctypes.addressof(c))
    self.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, r)
    return c, r

  def tpc_masks(self) -> list[int]:
    buf = (ctypes.c_uint32 * 32)()
    self.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_TPC_MASKS, a:=S.nvgpu_gpu_get_tpc_masks_args(mask_buf_size=128, mask_buf_addr=ctypes.addressof(buf)))
    return list(buf[:a.mask_buf_size // 4])
  def sm_count(self) -> int: return SM_PER_TPC * sum(bin(m).count("1") for m in self.tpc_masks())

  def alloc_as(self, start=USER_START, end=USER_END, windows=False):
    a = S.nvgpu_alloc_as_args(flags=C.NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA, va_range_start=start, va_range_end=end)
    self.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)
    as_ = F(fd=a.as_fd)
    if windows:
      for w in (LOCAL_WINDOW, SHARED_WINDOW): self.alloc_space(as_, 1 << 30, w)
    return as_
  def alloc_space(self, as_, size, offset=None, flags=None, page_size=PAGE):
    fl = C.NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET if flags is None and offset is not None else (flags or 0)
    a = S.nvgpu_as_alloc_space_args(pages=size // page_size, page_size=page_size, flags=fl, offset=offset or 0)
    as_.ioctl(I.NVGPU_AS_IOCTL_ALLOC_SPACE, a)
    return a.offset
  def free_space(self, as_, offset): as_.ioctl(I.NVGPU_AS_IOCTL_FREE_SPACE, S.nvgpu_as_free_space_args(offset=offset))

  def create(self, size:int) -> int:
    self.nvmap.ioctl(I.NVMAP_IOC_CREATE, c:=S.nvmap_create_handle(size=size))
    return c.handle
  def alloc(self, h:int, cache=INNER_CACHEABLE, tag=TAG, heap=None, align=PAGE, numa=0):
    heap = C.NVMAP_HEAP_IOVMM if heap is None else heap
    self.nvmap.ioctl(I.NVMAP_IOC_ALLOC, S.nvmap_alloc_handle(handle=h, heap_mask=heap, flags=tag << 16 | cache, align=align, numa_nid=numa))
  def get_fd(self, h:int):
    self.nvmap.ioctl(I.NVMAP_IOC_GET_FD, g:=S.nvmap_create_handle(handle=h))
    return F(fd=g.fd)
  def free(self, h:int): self.nvmap.ioctl(I.NVMAP_IOC_FREE, ctypes.c_int32(h).value)   # the handle has bit 31 set: pass it signed
  def from_va(self, va:int, size:int, cache=INNER_CACHEABLE, tag=TAG, size64=0, ro=False) -> int:
    a = S.nvmap_create_handle_from_va(va=va, size=size, flags=tag << 16 | cache | (C.NVMAP_HANDLE_RO if ro else 0))
    a.size64 = size64
    self.nvmap.ioctl(I.NVMAP_IOC_FROM_VA, a)
    return a.handle
  def buffer(self, size:int, cache=INNER_CACHEABLE):
    h = self.create(size); self.alloc(h, cache); return h, self.get_fd(h)

  def map(self, as_, dmabuf, flags=0, offset=0, buffer_offset=0, mapping_size=0, compr=-1, incompr=0) -> int:
    m = S.nvgpu_as_map_buffer_ex_args(flags=flags, compr_kind=compr, incompr_kind=incompr, dmabuf_fd=dmabuf.fd, page_size=PAGE,
                                      buffer_offset=buffer_offset, mapping_size=mapping_size, offset=offset)
    as_.ioctl(I.NVGPU_AS_IOCTL_MAP_BUFFER_EX, m)
    return m.offset
  def unmap(self, as_, va:int): as_.ioctl(I.NVGPU_AS_IOCTL_UNMAP_BUFFER, S.nvgpu_as_unmap_buffer_args(offset=va))
  def cpu_map(self, dmabuf, size:int) -> int: return dmabuf.mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)

  def open_tsg(self):
    self.ctrl.ioctl(I.NVGPU_GPU_IOCTL_OPEN_TSG, t:=S.nvgpu_gpu_open_tsg_args())
    return F(fd=t.tsg_fd)
  def subcontext(self, tsg, as_, typ=C.NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC) -> int:
    tsg.ioctl(I.NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, s:=S.nvgpu_tsg_create_subcontext_args(type=typ, as_fd=as_.fd))
    return s.veid
  def open_channel(self, runlist=-1):
    self.ctrl.ioctl(I.NVGPU_GPU_IOCTL_OPEN_CHANNEL, c:=S.nvgpu_gpu_open_channel_args(channel_fd=runlist))
    return F(fd=c.channel_fd)
  def bind_as(self, as_, ch): as_.ioctl(I.NVGPU_AS_IOCTL_BIND_CHANNEL, S.nvgpu_as_bind_channel_args(channel_fd=ch.fd))
  def tsg_channel(self, as_=None, veid=None):
    """an AS, a TSG with an ASYNC subcontext on it (veid None) or none, and a fresh channel bound to neither"""
    as_ = as_ or self.alloc_as()
    tsg = self.open_tsg()
    return as_, tsg, (self.subcontext(tsg, as_) if veid is None else veid), self.open_channel()
  def bind_tsg(self, tsg, ch, veid):
    tsg.ioctl(I.NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, S.nvgpu_tsg_bind_channel_ex_args(channel_fd=ch.fd, subcontext_id=veid))
  def wdt(self, ch, status=C.NVGPU_IOCTL_CHANNEL_DISABLE_WDT): ch.ioctl(I.NVGPU_IOCTL_CHANNEL_WDT, S.nvgpu_channel_wdt_args(wdt_status=status))
  def setup_bind(self, ch, userd, gpfifo, entries=1024, flags=0xA, **kw):
    ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SETUP_BIND, sb:=S.nvgpu_channel_setup_bind_args(num_gpfifo_entries=entries, flags=flags, userd_dmabuf_fd=userd.fd,
             gpfifo_dmabuf_fd=gpfifo.fd, **kw))
    return sb
  def timedout(self, ch) -> int:
    ch.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, g:=S.nvgpu_get_param_args())
    return g.value
  def alloc_obj(self, ch, cls, obj_id=0):
    ch.ioctl(I.NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, o:=S.nvgpu_alloc_obj_ctx_args(class_num=cls, obj_id=obj_id))
    return o

  def channel(self, as_, tsg, veid, entries=1024, setup=True):
    """open, AS bind, TSG bind, watchdog off, dedicated ring and USERD buffers, SETUP_BIND."""
    ch = self.open_channel()
    self.bind_as(as_, ch); self.bind_tsg(tsg, ch, veid); self.wdt(ch)
    (_, ring), (_, userd) = self.buffer(max(PAGE, entries * 8), WC), self.buffer(PAGE, WC)
    self.keep += [ring, userd]
    return ch, (self.setup_bind(ch, userd, ring, entries) if setup else None), ring, userd

  def bring_up(self, end=USER_END):
    as_ = self.alloc_as(end=end, windows=True)
    tsg = self.open_tsg()
    veid = self.subcontext(tsg, as_)
    compute, sb0, *_ = self.channel(as_, tsg, veid)
    copy, sb1, *_ = self.channel(as_, tsg, veid)
    self.alloc_obj(compute, 0xC7C0); self.alloc_obj(copy, 0xC7B5)
    return as_, tsg, veid, (compute, sb0), (copy, sb1)
