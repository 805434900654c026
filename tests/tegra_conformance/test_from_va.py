# NVMAP_IOC_FROM_VA: an nvmap handle over the process's own memory, mapped for the GPU with MAP_BUFFER_EX like any other buffer
# (nvmap_ioctl.c nvmap_ioctl_create_from_va, nvmap_handle.c nvmap_create_handle_from_va, nvmap_alloc.c nvmap_alloc_handle_from_va;
# the rules are L4T r36.4 nvmap's, not yet run on an Orin).
import ctypes, errno, mmap, os, pytest
from tegra_conformance.tegra import CTRL, F, PAGE, errno_of, proc_fds, libc
from orin_emu.kernel.uapi import consts as C

RW, CPU_AREA = mmap.PROT_READ | mmap.PROT_WRITE, (1 << 40, 1 << 48)   # 48-bit user addresses fit the 49-bit GPU aperture

@pytest.fixture
def anon():
  """Anonymous private pages of the process, as the CPU device allocates them; unmapped after the test."""
  got = []
  def make(pages:int, prot:int=RW) -> int:
    got.append((p:=libc.mmap(None, pages * PAGE, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0), pages * PAGE))
    return p
  yield make
  for p, n in got: libc.munmap(p, n)

def cpu_as(orin):
  """An AS reaching the CPU's 48-bit addresses, the part above 1 TiB reserved so only fixed mappings land there."""
  as_ = orin.alloc_as(end=CPU_AREA[1])
  orin.alloc_space(as_, CPU_AREA[1] - CPU_AREA[0], CPU_AREA[0])
  return as_

def test_from_va_buffer_maps_at_its_cpu_address(orin, anon):
  p = anon(4)
  ctypes.memmove(p, b"cpu bytes", 9)
  as_ = cpu_as(orin)
  h = orin.from_va(p, 4 * PAGE)
  assert h >= 0x7FFFFFFF   # nvmap_id_array.c: IDs from U32_MAX / 2 up
  buf = orin.get_fd(h)
  assert orin.map(as_, buf, C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, p) == p
  assert ctypes.string_at(p, 9) == b"cpu bytes"   # creating and mapping the handle leaves the user's data alone
  assert orin.map(as_, orin.buffer(PAGE)[1]) < CPU_AREA[0]   # kernel-chosen VAs stay below the reserved part
  orin.unmap(as_, p)
  orin.free(h)

def test_from_va_rules(orin, anon):
  # nvmap_create_handle_from_va: page-aligned VA, a mapping at or above it, writable unless RO; nvmap_alloc_handle_from_va turns any
  # failure to pin a page into EINVAL
  p = anon(4)
  libc.munmap(p + 3 * PAGE, PAGE)
  assert errno_of(lambda: orin.from_va(p + 8, PAGE)) == errno.EINVAL                      # not page aligned
  assert errno_of(lambda: orin.from_va(0x7FFFFFFFF000 | 1 << 47, PAGE)) == errno.EINVAL   # no mapping at or above it
  assert errno_of(lambda: orin.from_va(p, 4 * PAGE)) == errno.EINVAL                      # runs past the mapping
  assert errno_of(lambda: orin.from_va(p, 0, size64=1 << 50)) == errno.ENOMEM              # more than the machine's memory
  libc.munmap(p + PAGE, PAGE)
  assert errno_of(lambda: orin.from_va(p, 3 * PAGE)) == errno.EINVAL                      # a hole inside the range
  assert errno_of(lambda: orin.from_va(p + PAGE, PAGE)) == errno.EINVAL                   # starts in the hole
  ro = anon(1, mmap.PROT_READ)
  assert errno_of(lambda: orin.from_va(ro, PAGE)) == errno.EINVAL                         # read-only memory without the RO flag
  orin.free(orin.from_va(ro, PAGE, ro=True))
  h = orin.from_va(p, PAGE)
  assert errno_of(lambda: orin.alloc(h)) == errno.EEXIST                                  # it already has its pages
  orin.free(h)

def test_from_va_pins_with_foll_force(orin, anon):
  # nvmap_priv.h nvmap_get_user_pages pins with FOLL_FORCE: only the first mapping's permissions are checked, a read-only private
  # page after it is pinned for writing (copy on write), executable memory is fine; a VM_PFNMAP mapping (the usermode page) is not
  p = anon(2)
  libc.mprotect(p + PAGE, PAGE, mmap.PROT_READ)
  orin.free(orin.from_va(p, 2 * PAGE))
  x = anon(1, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
  orin.free(orin.from_va(x, PAGE))
  ctrl = F(CTRL, os.O_RDWR | os.O_CLOEXEC)
  u = ctrl.mmap(0, PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)
  assert errno_of(lambda: orin.from_va(u, PAGE)) == errno.EINVAL
  libc.munmap(u, PAGE)

def test_from_va_read_only_handle(orin, anon):
  # an RO handle's dma-buf file is O_RDONLY (nvmap_dmabuf.c __dma_buf_export): no shared writable CPU mapping (mm/mmap.c, EACCES), and
  # a read-write GPU mapping is refused (common/mm/vm.c nvgpu_vm_map "RW mapping requested for RO buffer"); read-only ones are fine
  p = anon(1)
  as_ = cpu_as(orin)
  h = orin.from_va(p, PAGE, ro=True)
  buf = orin.get_fd(h)
  try: buf.mmap(0, PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0); raise AssertionError("writable mapping of an RO handle")
  except OSError as e: assert "Permission denied" in str(e)
  assert errno_of(lambda: orin.map(as_, buf, C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET | 2 << 10, p)) == errno.EINVAL
  assert orin.map(as_, buf, C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, p) == p
  orin.unmap(as_, p)
  orin.free(h)

def test_from_va_size_zero_takes_the_rest_of_the_mapping(orin, anon):
  p = anon(5) + PAGE
  libc.munmap(p - PAGE, PAGE); libc.munmap(p + 3 * PAGE, PAGE)   # holes on both sides: a 3-page VMA no neighbour merges with
  as_ = cpu_as(orin)
  fixed = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET
  for size64, pages in ((0, 2), (PAGE, 1)):   # size 0 and size64 0: up to the end of the VMA; else size64
    h = orin.from_va(p + PAGE, 0, size64=size64)
    buf = orin.get_fd(h)
    assert errno_of(lambda: orin.map(as_, buf, fixed, p + PAGE, mapping_size=(pages + 1) * PAGE)) == 22   # beyond the handle
    assert orin.map(as_, buf, fixed, p + PAGE, mapping_size=pages * PAGE) == p + PAGE
    orin.unmap(as_, p + PAGE)
    orin.free(h)

def test_from_va_map_free_cycles_keep_counts_flat(orin, anon):
  p = anon(16)
  as_ = cpu_as(orin)
  def cycle():
    h = orin.from_va(p, 16 * PAGE)
    buf = orin.get_fd(h)
    orin.map(as_, buf, C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, p)
    del buf
    orin.unmap(as_, p)
    orin.free(h)
  cycle()
  before = proc_fds()
  for _ in range(300): cycle()
  assert proc_fds() == before
  h = orin.from_va(p, 16 * PAGE)   # the VA is free again for the next fixed mapping
  assert orin.map(as_, orin.get_fd(h), C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, p) == p
