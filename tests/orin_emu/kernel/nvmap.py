# nvmap: handles (IDs from 0x80000000 up), their memory in emulated DRAM, and dma-buf fds (tegra-facts.md §1.1, §2.8).
from __future__ import annotations
import errno, os
from orin_emu.kernel.files import File, IoctlFile, KernelError, NotEmulated
from orin_emu.kernel.memory import PAGE, user_vmas, view
from orin_emu.kernel.uapi import consts, limits, ioc_type, ioc_nr, ioc_size, ioc_dir, IOC_READ, IOC_WRITE

HEAP_EXCLUSIVE = consts.NVMAP_HEAP_CARVEOUT_IVM | consts.NVMAP_HEAP_CARVEOUT_VIDMEM
MAX_NUMNODES = 1   # L4T kernels for Orin are built without NUMA (unconfirmed); the check lets -1 and 0..MAX_NUMNODES through
TAG_WARNING = ("WARNING: All NvMap Allocations must have a tag to identify the subsystem allocating memory."
               "Please pass the tag to the API call NvRmMemHanldeAllocAttr() or relevant.")

def comm() -> str:
  with open("/proc/self/comm") as f: return f.read().strip()

class Buffer:
  """An nvmap handle and its dma-buf: memory lives while the handle, a dma-buf fd, a GPU mapping, a channel pin or a CPU mmap holds it.
  A FROM_VA buffer is the process's own pages at user_va instead of DRAM: the kernel pins them, the emulator views them in place, so
  a GPU access after the process unmapped them crashes the emulator where the Orin would still reach the pinned pages."""
  def __init__(self, k, hid:int, size:int):
    self.k, self.id, self.size, self.phys, self.user_va, self.refs = k, hid, size, None, None, 1
    self.flags = self.heap = self.align = 0
    self.cpu_mapped = False   # only a buffer that was ever mmapped needs the /proc/self/maps check at release
    self.client: NvmapFile|None = None
  @property
  def cache(self) -> int: return self.flags & 3
  @property
  def allocated(self) -> bool: return self.phys is not None or self.user_va is not None
  def view(self, off:int=0, n:int|None=None):
    n = self.size - off if n is None else n
    return view(self.user_va + off, n) if self.user_va is not None else self.k.dram.view(self.phys + off, n)
  def get(self): self.refs += 1; return self
  def put(self):
    self.refs -= 1
    if self.refs == 0: self.k.release_buffer(self)

class DmaBufFile(File):
  kind = "dmabuf"
  def __init__(self, k, buf:Buffer): super().__init__(k); self.buf = buf.get()
  def ioctl(self, req:int, arg:int) -> int:
    if ioc_type(req) == ord("b"): raise NotEmulated(f"dma-buf ioctl 0x{req:08X} is served by the real kernel but not emulated")
    raise KernelError(errno.ENOTTY)
  def mmap(self, addr, size, prot, flags, off):
    if self.buf.user_va is not None: raise NotEmulated("mmap of a FROM_VA buffer's dma-buf is served by the real nvmap but not emulated")
    if self.buf.phys is None: raise KernelError(errno.EINVAL)   # nvmap refuses to map an unallocated handle (unconfirmed errno)
    if off + size > self.buf.size: raise KernelError(errno.EINVAL)   # dma_buf_mmap_internal: beyond the buffer
    if self.buf.cache == consts.NVMAP_HANDLE_UNCACHEABLE and not self.buf.client.uc_warned:
      self.buf.client.uc_warned = True
      self.k.klog.nvmap("nvmap_pgprot", f"PID {os.getpid()}: {comm()}: TAG: 0x{self.buf.flags >> 16:04x} WARNING: NVMAP_HANDLE_WRITE_COMBINE "
                        "should be used in place of NVMAP_HANDLE_UNCACHEABLE on ARM64", 4)
    self.buf.cpu_mapped = True
    return self.k.dram.map_into(addr, size, prot, flags, self.buf.phys + off)
  def release(self): self.buf.put()

class NvmapFile(IoctlFile):
  """One nvmap client: the handle refs it holds (ID -> Buffer); closing it drops them all."""
  kind, MAGIC, LAST = "nvmap", "N", limits["NVMAP_IOC_MAXNR"]
  HANDLERS = {"NVMAP_IOC_CREATE": "create", "NVMAP_IOC_CREATE_64": "create64", "NVMAP_IOC_ALLOC": "alloc", "NVMAP_IOC_FREE": "free",
              "NVMAP_IOC_FROM_VA": "from_va",
              "NVMAP_IOC_GET_FD": "get_fd", "NVMAP_IOC_CACHE": "cache", "NVMAP_IOC_CACHE_64": "cache", "NVMAP_IOC_CACHE_LIST": "cache_list",
              "NVMAP_IOC_GET_AVAILABLE_HEAPS": "available_heaps", "NVMAP_IOC_SET_TAG_LABEL": "set_tag_label"}
  def __init__(self, k):
    super().__init__(k)
    self.handles: dict[int, Buffer] = {}
    self.tag_warned = self.uc_warned = False

  def ioctl(self, req:int, arg:int) -> int:
    # nvmap_ioctl: wrong magic or nr above MAXNR is ENOTTY; each handler copies its own arguments (only on success back)
    if ioc_type(req) != ord(self.MAGIC) or ioc_nr(req) > self.LAST: raise KernelError(errno.ENOTTY)
    if (name:=self.handler_name(req)) is None: return self.unknown(req)
    if name == "NVMAP_IOC_FREE": self.k.faults.check_ioctl(name, req); self.free(arg); return 0
    buf = bytearray(self.k.umem.read(arg, ioc_size(req)) if ioc_dir(req) & IOC_WRITE else ioc_size(req))
    return self.call(req, buf, write_back=lambda: ioc_dir(req) & IOC_READ and self.k.umem.write(arg, bytes(buf)))

  def mmap(self, addr, size, prot, flags, off): raise KernelError(errno.EPERM)   # nvmap_dev.c: the client fd itself maps nothing

  def unknown(self, req:int) -> int:
    self.k.klog.nvmap("nvmap_ioctl", f"Unknown NVMAP_IOC = 0x{req:x}", 4)
    raise KernelError(errno.ENOTTY)

  def _new(self, size:int) -> Buffer:
    if size == 0: raise KernelError(errno.EINVAL)
    b = self.k.new_buffer((size + PAGE - 1) & ~(PAGE - 1))
    b.client = self
    self.handles[b.id] = b
    return b
  def create(self, a): a.handle = self._new(a.size).id
  def create64(self, a): a.handle64 = self._new(a.size64).id   # CREATE_64 returns the handle at offset 0

  def alloc(self, a):
    # nvmap_ioctl_alloc's order, then nvmap_alloc_handle's
    if a.align & (a.align - 1) or a.handle == 0: raise KernelError(errno.EINVAL)
    if a.numa_nid > MAX_NUMNODES or (a.numa_nid != -1 and a.numa_nid < 0):
      self.k.klog.nvmap("nvmap_ioctl_alloc", f"numa id:{a.numa_nid} is invalid")
      raise KernelError(errno.EINVAL)
    if (b:=self.handles.get(a.handle)) is None: raise KernelError(errno.EINVAL)
    self.k.faults.check_alloc()
    if b.allocated: raise KernelError(errno.EEXIST)
    self._tag_check(a.flags, "nvmap_alloc_handle")
    if a.heap_mask == 0 or (a.heap_mask & HEAP_EXCLUSIVE and a.heap_mask & ~HEAP_EXCLUSIVE): raise KernelError(errno.EINVAL)
    if not a.heap_mask & consts.NVMAP_HEAP_IOVMM: raise KernelError(errno.ENOMEM)   # only IOVMM is emulated; 1<<31 gives ENOMEM on the Orin
    b.phys = self.k.alloc_dram(b.size, max(a.align, PAGE))
    b.flags = a.flags & ~consts.NVMAP_HANDLE_KIND_SPECIFIED
    b.heap, b.align = a.heap_mask, max(a.align, PAGE)

  def _tag_check(self, flags:int, func:str):
    if (flags >> 16) == 0 and not self.tag_warned:
      self.tag_warned = True
      self.k.klog.nvmap(func, f"PID {os.getpid()}: {comm()}: {TAG_WARNING}")

  def from_va(self, a):
    # nvmap_ioctl_create_from_va: nvmap_create_handle_from_va's checks, then nvmap_alloc_handle_from_va pins the pages (L4T nvmap_handle.c,
    # nvmap_alloc.c). find_vma gives the first mapping that ends above va, which need not contain it.
    if a.va % PAGE: raise KernelError(errno.EINVAL)
    vmas = user_vmas()
    if (vma:=next((v for v in vmas if v[1] > a.va), None)) is None: raise KernelError(errno.EINVAL)
    size = a.size or a.size64 or vma[1] - a.va
    if size > self.k.dram.size: raise KernelError(errno.ENOMEM)   # "exuberantly large": more than the machine's memory
    # executable memory is refused by newer nvmap (unconfirmed for r36.4); read-only memory needs the RO flag
    if "x" in vma[2] or ("w" not in vma[2] and not a.flags & consts.NVMAP_HANDLE_RO): raise KernelError(errno.EINVAL)
    b = self._new(size)
    # get_user_pages must pin every page (for writing unless RO): a hole or a read-only page in the range fails the whole handle with
    # ENOMEM, the errno L4T's alloc_handle_from_va returns for a short pin (newer nvmap may pass get_user_pages' own errno: unconfirmed)
    need, pos = "r" if a.flags & consts.NVMAP_HANDLE_RO else "w", a.va
    for s, e, perms in vmas:
      if e <= pos or pos >= a.va + b.size: continue
      if s > pos or need not in perms: break
      pos = e
    if pos < a.va + b.size: self.free(b.id); raise KernelError(errno.ENOMEM)
    self._tag_check(a.flags, "nvmap_alloc_handle_from_va")
    b.user_va, b.flags, b.heap, b.align = a.va, a.flags, consts.NVMAP_HEAP_IOVMM, PAGE
    a.handle = b.id

  def free(self, hid:int):
    # the argument is the handle itself, truncated to int; 0 or unknown IDs return 0
    if (b:=self.handles.pop(hid & 0xFFFFFFFF, None)) is not None: b.put()

  def get_fd(self, a):
    if (b:=self.handles.get(a.handle)) is None: b = self.k.dmabuf(a.handle).buf   # not a handle: a dma-buf fd to duplicate
    a.fd = self.k.install(DmaBufFile(self.k, b), same_file_as=self.k.dmabuf_fd_of(b))

  def cache(self, a):
    if a.addr == 0 or not 0 <= a.op <= 2: raise KernelError(errno.EINVAL)
    if (b:=self.handles.get(a.handle)) is None: raise KernelError(errno.EINVAL)
    owner = self.k.cpu_mapping_owner(a.addr)
    if owner is None: raise KernelError(errno.EADDRNOTAVAIL)
    if owner is not b: raise KernelError(errno.EFAULT)
    self.k.stats["nvmap_cache_ops"] += 1   # Orin is IO-coherent: nothing to do but count

  def cache_list(self, a):
    if not 0 <= a.op <= 2: raise KernelError(errno.EINVAL)
    for i in range(a.nr):
      if int.from_bytes(self.k.umem.read(a.handles + 4 * i, 4), "little") not in self.handles: raise KernelError(errno.EINVAL)
    self.k.stats["nvmap_cache_ops"] += 1

  def available_heaps(self, a): a.heaps = 0x10000004   # observed on the Orin: FSI and VPR only, yet IOVMM works

  def set_tag_label(self, a): self.k.tag_labels[a.tag] = self.k.umem.read(a.addr, a.len).decode(errors="replace") if a.len else ""

  def release(self):
    for b in self.handles.values(): b.put()
    self.handles.clear()
