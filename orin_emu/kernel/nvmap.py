# nvmap: handle IDs, their memory in emulated DRAM (or the process's own pages for FROM_VA) and dma-buf fds. Each handler names the
# function it mirrors, as a path under drivers/video/tegra/nvmap/ of github.com/OE4T/linux-nv-oot, branch l4t/l4t-r36.4 (README.md).
from __future__ import annotations
import errno, os
from orin_emu.kernel.files import File, IoctlFile, KernelError, NotEmulated
from orin_emu.kernel.memory import PAGE, user_vmas, view
from orin_emu.kernel.uapi import consts, limits, ioc_type, ioc_nr, ioc_size, ioc_dir, IOC_READ, IOC_WRITE

HEAP_EXCLUSIVE = (consts.NVMAP_HEAP_CARVEOUT_IVM, consts.NVMAP_HEAP_CARVEOUT_VIDMEM)   # nvmap_alloc.c heap_policy_excl
# nvmap_dev.c nvmap_probe: with no GENERIC carveout (GET_AVAILABLE_HEAPS on an Orin: OBSERVED.md) GENERIC requests become IOVMM
SYSTEM_HEAPS = consts.NVMAP_HEAP_IOVMM | consts.NVMAP_HEAP_CARVEOUT_GENERIC
CARVEOUTS = 0x10000004   # VPR and FSI: the carveouts an Orin has (OBSERVED.md); their memory is not emulated
MAX_NUMNODES = 1   # CONFIG_NUMA is assumed off in L4T's kernel config (not in these sources); -1 and 0..MAX_NUMNODES pass
TAG_LABEL_MAXLEN = 31   # nvmap_priv.h NVMAP_TAG_LABEL_MAXLEN: 63 - sizeof(struct nvmap_tag_entry) on arm64
KERNEL_SPACE = 1 << 48  # access_ok: user pointers end at TASK_SIZE (48-bit VA)
TAG_WARNING = ("WARNING: All NvMap Allocations must have a tag to identify the subsystem allocating memory."
               "Please pass the tag to the API call NvRmMemHanldeAllocAttr() or relevant. ")

def comm() -> str:
  with open("/proc/self/comm") as f: return f.read().strip()

class Buffer:
  """An nvmap handle and its dma-buf: memory lives while the handle, a dma-buf fd, a GPU mapping, a channel pin or a CPU mmap holds it.
  A FROM_VA buffer is the process's own pages at user_va instead of DRAM: the kernel pins them, the emulator views them in place, so
  a GPU access after the process unmapped them crashes the emulator where the Orin would still reach the pinned pages."""
  def __init__(self, k, hid:int, size:int, ro:bool=False):
    self.k, self.id, self.size, self.phys, self.user_va, self.refs, self.ro = k, hid, size, None, None, 1, ro
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
    # the dma-buf file of a read-only handle is O_RDONLY (nvmap_dmabuf.c __dma_buf_export): mm/mmap.c do_mmap refuses a shared
    # writable mapping; then dma-buf.c dma_buf_mmap_internal's bounds, then nvmap_dmabuf.c __nvmap_map
    b, write = self.buf, bool(prot & 2)
    if b.ro and write and flags & 1: raise KernelError(errno.EACCES)
    if off + size > b.size: raise KernelError(errno.EINVAL)
    if not b.allocated: raise KernelError(errno.EPERM)   # heap_type 0 is no CPU-accessible heap
    if b.ro and write: raise KernelError(errno.EPERM)
    if b.user_va is not None: raise NotEmulated("mmap of a FROM_VA buffer's dma-buf is served by the real nvmap but not emulated")
    if b.cache == consts.NVMAP_HANDLE_UNCACHEABLE and not b.client.uc_warned:   # nvmap_priv.h nvmap_pgprot, once per owning client
      b.client.uc_warned = True
      self.k.klog.nvmap("nvmap_pgprot", f"PID {os.getpid()}: {comm()}: TAG: 0x{b.flags >> 16:04x} WARNING: NVMAP_HANDLE_WRITE_COMBINE "
                        "should be used in place of NVMAP_HANDLE_UNCACHEABLE on ARM64")
    b.cpu_mapped = True
    return self.k.dram.map_into(addr, size, prot, flags, b.phys + off)
  def release(self): self.buf.put()

class NvmapFile(IoctlFile):
  """One nvmap client: the handle IDs it holds (ID -> Buffer); closing it drops them all. nvmap is built with
  NVMAP_CONFIG_HANDLE_AS_ID (Makefile.memory.configs): handles are IDs in a per-client xarray, not fds."""
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
    # nvmap_dev.c nvmap_ioctl: wrong magic or nr above MAXNR is ENOTTY, a pointer outside user space EFAULT; each handler copies its
    # own argument in and out, and a failed copy out frees what it created (nvmap_ioctl.c nvmap_install_fd)
    if ioc_type(req) != ord(self.MAGIC) or ioc_nr(req) > self.LAST: raise KernelError(errno.ENOTTY)
    if ioc_dir(req) and not 0 <= arg < KERNEL_SPACE - ioc_size(req): raise KernelError(errno.EFAULT)
    if (name:=self.handler_name(req)) is None: return self.unknown(req)
    if name == "NVMAP_IOC_FREE": self.k.faults.check_ioctl(name, req); return self.free(arg)
    buf = bytearray(self.k.umem.read(arg, ioc_size(req)) if ioc_dir(req) & IOC_WRITE else ioc_size(req))
    handles, fds = set(self.handles), set(self.k.files)
    try: return self.call(req, buf, arg)
    except KernelError as e:
      if e.errno != errno.EFAULT: raise
      for hid in set(self.handles) - handles: self.handles.pop(hid).put()
      for fd in set(self.k.files) - fds: self.k.close(fd)
      if name != "NVMAP_IOC_GET_AVAILABLE_HEAPS": raise
      self.k.klog.nvmap("nvmap_ioctl_get_available_heaps", "copy_to_user failed")
      raise KernelError(errno.EINVAL) from None   # nvmap_ioctl.c nvmap_ioctl_get_available_heaps

  def copy_back(self, arg:int, data:bytes) -> int:
    self.k.umem.write(arg, data)
    return 0

  def mmap(self, addr, size, prot, flags, off): raise KernelError(errno.EPERM)   # nvmap_dev.c nvmap_map: the client fd maps nothing

  def unknown(self, req:int) -> int:
    self.k.klog(f"Unknown NVMAP_IOC = 0x{req:x}", 4)   # nvmap_dev.c has no pr_fmt: a bare pr_warn
    raise KernelError(errno.ENOTTY)

  def _new(self, size:int, ro:bool=False) -> Buffer:
    # nvmap_handle.c nvmap_create_handle: size 0 is EINVAL, the size is rounded up to pages; nvmap_id_array.c hands out the ID
    if size == 0: raise KernelError(errno.EINVAL)
    b = self.k.new_buffer((size + PAGE - 1) & ~(PAGE - 1), ro)
    b.client = self
    self.handles[b.id] = b
    return b
  # nvmap_ioctl.c nvmap_ioctl_create: CREATE takes a 32-bit size, CREATE_64 a 64-bit one and returns the ID at offset 0
  def create(self, a): a.handle = self._new(a.size).id
  def create64(self, a): a.handle64 = self._new(a.size64).id

  def _memory_available(self, size:int, heap:int) -> bool:
    # nvmap_dev.c is_nvmap_memory_available: no heap, or neither system memory nor a carveout this Orin has, is "no memory"
    if heap & SYSTEM_HEAPS: return size <= self.k.dram.size
    return bool(heap & CARVEOUTS)

  def alloc(self, a):
    # nvmap_ioctl.c nvmap_ioctl_alloc's checks, then nvmap_alloc.c nvmap_alloc_handle's
    if a.align & (a.align - 1) or a.handle == 0: raise KernelError(errno.EINVAL)
    if a.numa_nid > MAX_NUMNODES or (a.numa_nid != -1 and a.numa_nid < 0):
      self.k.klog.nvmap("nvmap_ioctl_alloc", f"numa id:{a.numa_nid} is invalid")
      raise KernelError(errno.EINVAL)
    if (b:=self.handles.get(a.handle)) is None: raise KernelError(errno.EINVAL)
    if not self._memory_available(b.size, a.heap_mask): raise KernelError(errno.ENOMEM)
    self.k.faults.check_alloc()
    if b.allocated: raise KernelError(errno.EEXIST)
    self._tag_check(a.flags, "nvmap_alloc_handle")
    for excl in HEAP_EXCLUSIVE:
      if a.heap_mask & excl and a.heap_mask & ~excl:
        self.k.klog(f"nvmap_alloc_handle: {comm()} alloc mixes exclusive heap {excl} and other heaps", 3)
        raise KernelError(errno.EINVAL)
    if a.heap_mask & CARVEOUTS: raise NotEmulated(f"nvmap carveout heaps (heap_mask 0x{a.heap_mask:x}) are not emulated")
    b.phys = self.k.alloc_dram(b.size, max(a.align, PAGE))
    b.flags = a.flags & ~consts.NVMAP_HANDLE_KIND_SPECIFIED
    b.heap, b.align = consts.NVMAP_HEAP_IOVMM, max(a.align, PAGE)

  def _tag_check(self, flags:int, func:str):
    # nvmap_alloc.c: the first untagged allocation of a client is reported; that file's pr_fmt is "<function>: "
    if (flags >> 16) == 0 and not self.tag_warned:
      self.tag_warned = True
      self.k.klog(f"{func}: PID {os.getpid()}: {comm()}: {TAG_WARNING}", 3)

  def from_va(self, a):
    # nvmap_ioctl.c nvmap_ioctl_create_from_va: nvmap_handle.c nvmap_create_handle_from_va's checks (find_vma gives the first mapping
    # that ends above va, which need not contain it), then nvmap_alloc.c nvmap_alloc_handle_from_va, which reports an untagged
    # allocation first and turns any pinning failure into EINVAL
    if a.va % PAGE: raise KernelError(errno.EINVAL)
    vmas = user_vmas()
    if (vma:=next((v for v in vmas if v[1] > a.va), None)) is None: raise KernelError(errno.EINVAL)
    size = a.size or a.size64 or vma[1] - a.va
    if size > self.k.dram.size: raise KernelError(errno.ENOMEM)   # more than the machine's memory
    ro = bool(a.flags & consts.NVMAP_HANDLE_RO)
    if "w" not in vma[2] and not ro: raise KernelError(errno.EINVAL)
    b = self._new(size, ro)
    self._tag_check(a.flags, "nvmap_alloc_handle_from_va")
    if (pinned:=self._pin_user_pages(vmas, a.va, b.size // PAGE, ro)) != b.size // PAGE:
      err = -errno.EFAULT if pinned == 0 else -errno.ENOMEM
      self.k.klog(f"nvmap_get_user_pages: get_user_pages requested/got: {b.size // PAGE}/{pinned if pinned else err}]", 3)
      self.k.klog(f"nvmap_alloc_handle_from_va: alloc_handle_from_va failed {err}", 3)
      self.free(b.id)
      raise KernelError(errno.EINVAL)
    b.user_va, b.flags, b.heap, b.align = a.va, a.flags, consts.NVMAP_HEAP_IOVMM, PAGE
    a.handle = b.id

  def _pin_user_pages(self, vmas, va:int, pages:int, ro:bool) -> int:
    # nvmap_priv.h nvmap_get_user_pages: get_user_pages with FOLL_FORCE (and FOLL_WRITE unless RO), which (mm/gup.c check_vma_flags)
    # pins any page of a private mapping, of a shared one for writing only if it is writable, and no page of a VM_IO/VM_PFNMAP one such
    # as the usermode register page. It stops at the first page it cannot pin: the count pinned
    pos, end = va, va + pages * PAGE
    for s, e, perms, ino in vmas:
      if e <= pos: continue
      if s > pos or ino == self.k.usermode.ino or ("p" not in perms and not ro and "w" not in perms): break
      pos = min(e, end)
      if pos == end: break
    return (pos - va) // PAGE

  def free(self, arg:int) -> int:
    # nvmap_ioctl.c nvmap_ioctl_free: the argument is the ID itself (0: nothing); then, if it is also a dma-buf fd, that fd is closed
    if arg == 0: return 0
    if (b:=self.handles.pop(arg & 0xFFFFFFFF, None)) is not None: b.put()
    if (fd:=arg & 0xFFFFFFFF) < 1 << 31 and self.k.owns(fd) and isinstance(self.k.files[fd], DmaBufFile): self.k.close(fd)
    return 0

  def get_fd(self, a):
    # nvmap_ioctl.c nvmap_ioctl_getfd: a handle ID gets a new fd of the handle's one dma-buf; anything else is looked up as a dma-buf
    # fd, which nvmap_dmabuf.c nvmap_dmabuf_duplicate_gen_fd duplicates only when it is not nvmap's own
    if (b:=self.handles.get(a.handle)) is None:
      self.k.dmabuf(a.handle)
      raise KernelError(errno.EINVAL)   # every dma-buf here is an nvmap one
    a.fd = self.k.install(DmaBufFile(self.k, b), same_file_as=self.k.dmabuf_fd_of(b))

  def cache(self, a):
    # nvmap_ioctl.c nvmap_ioctl_cache_maint -> nvmap_cache.c __nvmap_cache_maint: the address range must lie in a CPU mapping of that
    # very handle (an nvmap VMA: dma-buf mmaps are, nvmap_dmabuf.c __nvmap_map sets nvmap_vma_ops)
    if a.addr == 0 or not 0 <= a.op <= 2: raise KernelError(errno.EINVAL)
    if (b:=self.handles.get(a.handle)) is None: raise KernelError(errno.EINVAL)
    owner, vma_end = self.k.cpu_mapping_owner(a.addr)
    if owner is None or a.len > vma_end - a.addr: raise KernelError(errno.EADDRNOTAVAIL)
    if owner is not b: raise KernelError(errno.EFAULT)
    self.k.stats["nvmap_cache_ops"] += 1   # Orin is IO-coherent: nothing to do but count

  def cache_list(self, a):
    # nvmap_ioctl.c nvmap_ioctl_cache_maint_list; the op itself is not checked, and nvmap_cache.c nvmap_do_cache_maint_list does
    # nothing on Tegra234 (IO-coherent)
    if a.nr == 0 or a.nr > 0xFFFFFFFF // 4: raise KernelError(errno.EINVAL)
    if not a.handles or not a.offsets or not a.sizes:
      self.k.klog.nvmap("nvmap_ioctl_cache_maint_list", "pointers are invalid"); raise KernelError(errno.EINVAL)
    elem = 8 if a.op & consts.NVMAP_ELEM_SIZE_U64 & 0xFFFFFFFF else 4
    for what, addr, n in (("handles", a.handles, 4), ("offsets", a.offsets, elem), ("sizes", a.sizes, elem)):
      try: data = self.k.umem.read(addr, a.nr * n)
      except KernelError: self.k.klog.nvmap("nvmap_ioctl_cache_maint_list", f"Can't copy from user pointer op.{what}"); raise
      if what == "handles": ids = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    bufs = []
    for i, hid in enumerate(ids):
      if (b:=self.handles.get(hid)) is None:
        self.k.klog.nvmap("nvmap_ioctl_cache_maint_list", f"invalid handle_ptr[{i}] = {hid}"); raise KernelError(errno.EINVAL)
      if not b.allocated:
        self.k.klog.nvmap("nvmap_ioctl_cache_maint_list", "heap 0 can't be accessed from cpu"); raise KernelError(errno.EPERM)
      bufs.append(b)
    if len({bool(b.flags & consts.NVMAP_HANDLE_CACHE_SYNC_AT_RESERVE) for b in bufs}) > 1:
      self.k.klog.nvmap("nvmap_ioctl_cache_maint_list", "incorrect CACHE_SYNC_AT_RESERVE mix of handles"); raise KernelError(errno.EINVAL)
    self.k.stats["nvmap_cache_ops"] += 1

  def available_heaps(self, a):
    # nvmap_ioctl.c nvmap_ioctl_get_available_heaps: the carveouts only (IOVMM is not one); a failed copy out is EINVAL (ioctl above)
    a.heaps = CARVEOUTS

  def set_tag_label(self, a):
    # nvmap_ioctl.c nvmap_ioctl_set_tag_label, nvmap_tag.c nvmap_define_tag / nvmap_remove_tag: the label is cut to its maximum length
    if (n:=min(a.len, TAG_LABEL_MAXLEN)) == 0: self.k.tag_labels.pop(a.tag, None)
    else: self.k.tag_labels[a.tag] = self.k.umem.read(a.addr, n).decode(errors="replace")

  def release(self):
    for b in self.handles.values(): b.put()
    self.handles.clear()
