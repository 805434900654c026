# NVMAP_IOC_FROM_VA: an nvmap handle over the process's own memory, mapped for the GPU with MAP_BUFFER_EX like any other buffer
# (tegra-facts.md §2.8, 7.13; the rules are L4T nvmap's, not yet run on an Orin).
import ctypes, ctypes.util, mmap, pytest
from tegra_conformance.tegra import PAGE, errno_of, proc_fds
from orin_emu.kernel.uapi import consts as C

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
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
  assert h & 0x80000000
  buf = orin.get_fd(h)
  assert orin.map(as_, buf, C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, p) == p
  assert ctypes.string_at(p, 9) == b"cpu bytes"   # creating and mapping the handle leaves the user's data alone
  assert orin.map(as_, orin.buffer(PAGE)[1]) < CPU_AREA[0]   # kernel-chosen VAs stay below the reserved part
  orin.unmap(as_, p)
  orin.free(h)

def test_from_va_rules(orin, anon):
  p = anon(4)
  libc.munmap(p + 3 * PAGE, PAGE)
  einval, enomem = 22, 12
  assert errno_of(lambda: orin.from_va(p + 8, PAGE)) == einval                      # not page aligned
  assert errno_of(lambda: orin.from_va(0x7FFFFFFFF000 | 1 << 47, PAGE)) == einval   # no mapping at or above it
  assert errno_of(lambda: orin.from_va(p, 4 * PAGE)) in (einval, enomem)           # runs past the mapping (EINVAL on older nvmap)
  libc.munmap(p + PAGE, PAGE)
  assert errno_of(lambda: orin.from_va(p, 3 * PAGE)) in (einval, enomem)           # a hole inside the range
  ro = anon(1, mmap.PROT_READ)
  assert errno_of(lambda: orin.from_va(ro, PAGE)) == einval                         # read-only memory without the RO flag
  orin.free(orin.from_va(ro, PAGE, ro=True))
  h = orin.from_va(p, PAGE)
  assert errno_of(lambda: orin.alloc(h)) == 17                                      # EEXIST: it already has its pages
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
