# A GPU address space (nvgpu vm_gk20a) behind an AS fd: user range [start, end) from the buddy allocator, the kernel's own 4 GiB
# above it (common/mm/vm.c nvgpu_vm_init_vma: [va_range_end, va_range_end + channel kernel_size)), ALLOC_SPACE areas, MAP_BUFFER_EX
# mappings, and the GPU-VA -> memory translation the GPU room uses (the memory interface, README.md).
from __future__ import annotations
import bisect, errno
import numpy as np
from orin_emu.faults import MMUFault
from orin_emu.kernel.buddy import Buddy
from orin_emu.kernel.files import IoctlFile, KernelError
from orin_emu.kernel.memory import PAGE
from orin_emu.kernel.uapi import consts, limits

KERNEL_VA = 4 << 30
MAP_FLAGS_OK = (consts.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET | consts.NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE
                | consts.NVGPU_AS_MAP_BUFFER_FLAGS_UNMAPPED_PTE | consts.NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS
                | consts.NVGPU_AS_MAP_BUFFER_FLAGS_L3_ALLOC | consts.NVGPU_AS_MAP_BUFFER_FLAGS_SYSTEM_COHERENT
                | consts.NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW | (3 << 10))
FIXED = consts.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET

class KernelBuffer:
  """Memory nvgpu allocates for itself (nvgpu_dma_alloc_sys): GR context buffers, a subcontext header. What the firmware keeps there
  is not modelled: the GPU room reads zeros."""
  def __init__(self, size:int): self.size = size
  def get(self): return self
  def put(self): pass
  def view(self, off:int=0, n:int|None=None) -> np.ndarray: return np.zeros(self.size - off if n is None else n, np.uint8)

class Mapping:
  def __init__(self, va:int, size:int, buf, boff:int, flags:int, kind:int, area=None, name:str|None=None):
    self.va, self.size, self.buf, self.boff, self.flags, self.kind = va, size, buf.get(), boff, flags, kind
    self.area, self.name, self.kernel, self.refs, self.va_allocated = area, name, name is not None, 1, area is None
    self.view = buf.view(boff, size)
  @property
  def access(self) -> int: return (self.flags >> 10) & 3

class Area:
  def __init__(self, addr:int, size:int, sparse:bool): self.addr, self.size, self.sparse, self.maps = addr, size, sparse, set()

class GpuMemory:
  """The memory interface: lookup(va) -> (base_va, uint8 view of the whole mapping). Reads an immutable snapshot, so the GPU thread never locks."""
  def __init__(self): self.snap: tuple[list[int], list[Mapping], list[Area]] = ([], [], [])
  def lookup(self, va:int) -> tuple[int, np.ndarray]:
    starts, maps, areas = self.snap
    if (i:=bisect.bisect_right(starts, va) - 1) >= 0 and va < (m:=maps[i]).va + m.size: return m.va, m.view
    for a in areas:   # a sparse area reads zeros and drops writes where nothing is mapped
      if a.sparse and a.addr <= va < a.addr + a.size: return va & ~(PAGE - 1), np.zeros(PAGE, np.uint8)
    raise MMUFault(va)

class Vm:
  def __init__(self, k, start:int, end:int):
    self.k, self.start, self.end, self.refs = k, start, end, 1
    self.user, self.kern = Buddy(start, end - start), Buddy(end, KERNEL_VA)
    self.maps: dict[int, Mapping] = {}
    self.areas: dict[int, Area] = {}
    self.mem = GpuMemory()
    k.vms.add(self)

  def _publish(self):
    ms = sorted(self.maps.values(), key=lambda m: m.va)
    self.mem.snap = ([m.va for m in ms], ms, list(self.areas.values()))

  def area_at(self, va:int) -> Area|None: return next((a for a in self.areas.values() if a.addr <= va < a.addr + a.size), None)

  def map(self, buf, flags:int, kind:int, boff:int, size:int, va:int, pte_kind:bool=True) -> int:
    # common/mm/vm.c nvgpu_vm_map: an existing mapping is reused (os/linux/vm.c nvgpu_vm_find_mapping: non-fixed, the lowest mapping of
    # this dma-buf with this kind, if its flags match too; fixed, the one at va), else nvgpu_vm_new_mapping checks the size,
    # vm_area.c nvgpu_vm_area_validate_buffer places a fixed one and nvgpu_vm_do_map fails last (pte_kind: a usable kind exists)
    if not flags & FIXED:
      if (m:=next((m for m in sorted(self.maps.values(), key=lambda m: m.va) if m.buf is buf and m.kind == kind and not m.kernel), None)) \
          and m.flags == flags: m.refs += 1; return m.va
    elif (m:=self.maps.get(va)) is not None and m.buf is buf and m.flags == flags and m.kind == kind: m.refs += 1; return va
    size = (size or buf.size) + PAGE - 1 & ~(PAGE - 1)
    if size > buf.size or boff > buf.size - size: raise KernelError(errno.EINVAL)
    if not flags & FIXED:
      if (va:=self.user.alloc(size)) is None: raise KernelError(errno.ENOMEM)
      area = None
    else:
      if va % PAGE: raise self.k.fail("nvgpu_vm_area_validate_buffer", f"map offset must be buffer page size aligned 0x{va:x}")
      if (area:=self.area_at(va)) is None:
        raise self.k.fail("nvgpu_vm_area_validate_buffer", "fixed offset mapping without space allocation", level="WRN")
      if va + size > area.addr + area.size:
        raise self.k.fail("nvgpu_vm_area_validate_buffer", "fixed offset mapping size overflows va node", level="WRN")
      if any(m.va < va + size and va < m.va + m.size for m in self.maps.values()):
        raise self.k.fail("nvgpu_vm_area_validate_buffer", "overlapping buffer map requested", level="WRN")
    if not pte_kind or boff % PAGE:
      if area is None: self.user.free_addr(va)
      if not pte_kind: raise self.k.fail("nvgpu_vm_do_map", "No comptags and no incompressible fallback kind", errno.ENOMEM)
      self.k.klog.nvgpu("nvgpu_gmmu_map_locked", 0, "ERR", f"failed to update ptes on map, err={-errno.EINVAL}")   # common/mm/gmmu/page_table.c
      raise self.k.fail("nvgpu_gmmu_map_locked", f"nvgpu_gmmu_map_locked: failed with err={-errno.EINVAL}", errno.ENOMEM)
    self.maps[va] = m = Mapping(va, size, buf, boff, flags, kind, area)
    if area is not None: area.maps.add(va)
    self._publish()
    return m.va

  def map_kernel(self, buf, name:str, read_only=False) -> Mapping:
    """common/mm/gmmu/page_table.c nvgpu_gmmu_map: the kernel's own mappings (GPFIFO ring, GR context buffers) come from the kernel VMA
    [end, end + 4 GiB) whatever their priv flag (GMMU_PAGE_SIZE_KERNEL), page-rounded, and are not reported to userspace."""
    size = (buf.size + PAGE - 1) & ~(PAGE - 1)
    if (va:=self.kern.alloc(size)) is None: raise KernelError(errno.ENOMEM)
    self.maps[va] = m = Mapping(va, size, buf, 0, 1 << 10 if read_only else 0, 0, name=name)
    self._publish()
    return m
  def kernel_maps(self) -> list[tuple[str, int, int]]: return [(m.name, m.va, m.size) for m in self.maps.values() if m.kernel]   # in map order

  def _drop(self, m:Mapping):
    del self.maps[m.va]
    if m.area is not None: m.area.maps.discard(m.va)
    if m.kernel: self.kern.free_addr(m.va)
    elif m.va_allocated: self.user.free_addr(m.va)   # a fixed mapping's VA belongs to its area (mapped_buffer->va_allocated)
    self._publish()
    m.buf.put()

  def unmap(self, va:int):
    # common/mm/vm.c nvgpu_vm_unmap: only the exact VA a map returned; anything else is silently ignored. A fixed mapping still mapped
    # more than once is waited on for 100 ms (nvgpu_vm_unmap_sync_buffer, not emulated), then warned about and unmapped once anyway
    if (m:=self.maps.get(va)) is None or m.kernel: return
    if m.flags & FIXED and m.refs > 1: self.k.fail("nvgpu_vm_unmap", f"{m.refs} references remaining on 0x{m.va:x}", level="WRN")
    m.refs -= 1
    if m.refs == 0: self._drop(m)
  def unmap_kernel(self, m:Mapping): self._drop(m)

  def alloc_space(self, pages:int, page_size:int, flags:int, offset:int) -> int:
    if page_size != PAGE: raise KernelError(errno.EINVAL)   # no big pages on ga10b: 4 KiB is the only page size
    size = pages * page_size
    if flags & consts.NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET: addr = self.user.alloc_fixed(offset, size) if size else None
    else: addr = self.user.alloc(size) if size else None
    if addr is None: raise KernelError(errno.ENOMEM)
    self.areas[addr] = Area(addr, size, bool(flags & consts.NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE))
    self._publish()
    return addr

  def free_space(self, offset:int):
    # common/mm/vm_area.c nvgpu_vm_area_free: the area containing offset (none: return 0); it drops one reference of every mapping
    # inside it, so one mapped twice stays mapped (and keeps its VA) until its last UNMAP_BUFFER
    if (a:=self.area_at(offset)) is None: return
    for va in list(a.maps):
      if (m:=self.maps.get(va)) is not None:
        a.maps.discard(va); m.area, m.refs = None, m.refs - 1
        if m.refs == 0: self._drop(m)
    del self.areas[a.addr]
    self.user.free_addr(a.addr)
    self._publish()

  def get(self): self.refs += 1; return self
  def put(self):
    self.refs -= 1
    if self.refs: return
    for m in list(self.maps.values()): self._drop(m)
    self.areas.clear(); self._publish()
    self.k.vms.discard(self)

class AsFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "as", "A", limits["NVGPU_AS_IOCTL_LAST"], limits["NVGPU_AS_IOCTL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_AS_IOCTL_BIND_CHANNEL": "bind_channel", "NVGPU_AS_IOCTL_ALLOC_SPACE": "alloc_space",
              "NVGPU32_AS_IOCTL_ALLOC_SPACE": "alloc_space", "NVGPU_AS_IOCTL_FREE_SPACE": "free_space",
              "NVGPU_AS_IOCTL_MAP_BUFFER_EX": "map_buffer_ex", "NVGPU_AS_IOCTL_UNMAP_BUFFER": "unmap_buffer"}
  def __init__(self, k, vm:Vm): super().__init__(k); self.vm = vm
  def release(self): self.vm.put()

  def bind_channel(self, a):
    # os/linux/ioctl_as.c gk20a_as_ioctl_bind_channel, common/mm/vm.c nvgpu_vm_bind_channel: the channel holds a VM reference
    ch = self.k.channel(a.channel_fd)
    if ch.vm is not None: raise KernelError(errno.EINVAL)
    ch.vm = self.vm.get()

  # os/linux/ioctl_as.c gk20a_as_ioctl_alloc_space, gk20a_as_ioctl_free_space -> common/mm/vm_area.c
  def alloc_space(self, a): a.offset = self.vm.alloc_space(a.pages, a.page_size, a.flags, a.offset)
  def free_space(self, a): self.vm.free_space(a.offset)

  def map_buffer_ex(self, a):
    # os/linux/vm.c nvgpu_vm_map_buffer (argument checks, nvgpu_vm_translate_map_access, TEGRA_RAW, nvgpu_vm_translate_linux_flags),
    # nvgpu_vm_map_linux (the dma-buf's file mode, the pin), then common/mm/vm.c nvgpu_vm_map (Vm.map)
    try: buf = self.k.dmabuf(a.dmabuf_fd).buf
    except KernelError:
      self.k.klog.nvgpu("nvgpu_vm_map_buffer", 0, "WRN", f"nvgpu_vm_map_buffer: fd {a.dmabuf_fd} is not a dmabuf"); raise
    fixed, fn = a.flags & FIXED, "nvgpu_vm_map_buffer"
    if not fixed and (a.buffer_offset or a.offset): raise self.k.fail(fn, "Regular map with addr/buf offset is not supported!")
    if a.mapping_size and not fixed: raise self.k.fail(fn, "map_size && non-fixed-mapping!")
    if a.mapping_size > buf.size or a.buffer_offset > buf.size - a.mapping_size:
      raise self.k.fail(fn, f"buf size {buf.size:x} < (offset({a.buffer_offset:x}) + map_size({a.mapping_size:x}))")
    if (access:=(a.flags >> 10) & 3) == 3:
      self.k.klog.nvgpu("nvgpu_vm_translate_map_access", 0, "ERR", "Invalid map access specified 3")
      raise self.k.fail(fn, "map access translation failed")
    if a.flags & consts.NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW:   # NVGPU_SUPPORT_TEGRA_RAW is set by no code in this tree
      raise self.k.fail(fn, "TEGRA_RAW requested when not supported.")
    if a.flags & ~MAP_FLAGS_OK: raise self.k.fail("nvgpu_vm_translate_linux_flags", f"Extra flags: 0x{a.flags & ~MAP_FLAGS_OK:x}")
    if a.flags & consts.NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS:
      self.k.klog.nvgpu("nvgpu_vm_translate_linux_flags", 0, "WRN", "Ignoring deprecated flag: NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS")
    self.k.pin(buf, "nvgpu_vm_map_linux", "WRN")
    if buf.ro and access == 2: raise self.k.fail("nvgpu_vm_map", "RW mapping requested for RO buffer")   # a read-only dma-buf file
    # the mapping's key kind is the compressible one when given; comptags are not emulated, so the PTEs get the incompressible kind
    # and a map without one fails (common/mm/vm.c nvgpu_vm_do_map)
    kind = a.compr_kind if a.compr_kind != consts.NV_KIND_INVALID else a.incompr_kind
    flags = a.flags & ~consts.NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS
    a.offset = self.vm.map(buf, flags, kind, a.buffer_offset, a.mapping_size, a.offset, pte_kind=0 <= a.incompr_kind <= 0xFF)

  def unmap_buffer(self, a): self.vm.unmap(a.offset)   # os/linux/ioctl_as.c gk20a_as_ioctl_unmap_buffer: always 0

  def copy_back(self, arg:int, data:bytes) -> int:
    # os/linux/ioctl_as.c gk20a_as_dev_ioctl, unlike the other nvgpu dispatchers, turns a failed copy back into EFAULT
    if self.k.umem.copy_to_user(arg, data): raise KernelError(errno.EFAULT)
    return 0

