# nvmap buffers, dma-buf fds, CPU mappings and GPU VA placement (nvmap's ioctls, nvgpu's os/linux/vm.c and common/mm/vm.c; the VAs
# first seen on an Orin are in orin_emu/OBSERVED.md).
import ctypes, mmap, os
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import PAGE, WC, LOCAL_WINDOW, SHARED_WINDOW, SEED_END, USER_END, errno_of, proc_fds
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

GiB, MiB = 1 << 30, 1 << 20
def in_windows(va, size): return any(va < w + GiB and w < va + size for w in (LOCAL_WINDOW, SHARED_WINDOW))

def test_handles_are_ids_and_get_fd_makes_a_new_fd_each_call(orin):
  h = orin.create(PAGE)
  orin.alloc(h)
  assert h >= 0x7FFFFFFF   # nvmap_id_array.c nvmap_id_array_id_alloc: IDs from U32_MAX / 2 up (observed: 0x80000d3f)
  before = proc_fds()
  fds = [orin.get_fd(h) for _ in range(3)]
  assert len({f.fd for f in fds}) == 3 and proc_fds() == before + 3
  assert len({os.fstat(f.fd).st_ino for f in fds}) == 1 != len({os.fstat(f.fd).st_ino for f in (fds[0], orin.buffer(PAGE)[1])})   # one dma-buf file
  del fds
  assert proc_fds() == before
  orin.free(h)

def test_first_mappings_are_placed_top_down_as_on_the_orin(orin):
  as_ = orin.alloc_as(end=SEED_END)
  got = [orin.map(as_, orin.buffer(size)[1]) for size in (PAGE, PAGE, 64 << 10, MiB, 16 * MiB, 64 * MiB)]
  assert got == [0xFFFFA00000, 0xFFFFA01000, 0xFFFFA10000, 0xFFFFB00000, 0xFFFE200000, 0xFFF8200000]   # observed on the Orin

def test_large_model_lands_in_shared_window_without_reservation(orin):
  as_ = orin.alloc_as(end=SEED_END)
  vas = [orin.map(as_, orin.buffer(512 * MiB)[1]) for _ in range(10)]
  assert 0xFE00200000 in vas   # where a 512 MiB buffer landed on an Orin (OBSERVED.md), inside the shared window
  assert any(in_windows(va, 512 * MiB) for va in vas)

def test_large_model_avoids_windows_with_fixed_reservations(orin):
  as_ = orin.alloc_as(windows=True)
  vas = [orin.map(as_, orin.buffer(512 * MiB)[1]) for _ in range(10)]
  assert not any(in_windows(va, 512 * MiB) for va in vas)

def test_alloc_space_fixed_offset_returns_it_and_fixed_maps_go_inside(orin):
  as_ = orin.alloc_as()
  assert orin.alloc_space(as_, GiB, SHARED_WINDOW) == SHARED_WINDOW
  _, buf = orin.buffer(2 * PAGE)
  fixed = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET
  assert orin.map(as_, buf, fixed, SHARED_WINDOW + 0x10000) == SHARED_WINDOW + 0x10000
  assert errno_of(lambda: orin.map(as_, buf, fixed, SHARED_WINDOW + 0x11000)) == 22   # overlapping buffer map requested
  assert errno_of(lambda: orin.map(as_, buf, fixed, 0x10000000)) == 22                # fixed offset mapping without space allocation
  assert errno_of(lambda: orin.map(as_, buf, fixed, SHARED_WINDOW + GiB - PAGE)) == 22   # overflows the area
  assert errno_of(lambda: orin.alloc_space(as_, PAGE, SHARED_WINDOW + GiB - PAGE)) == 12   # already taken
  as_.ioctl(I.NVGPU_AS_IOCTL_FREE_SPACE, S.nvgpu_as_free_space_args(offset=0x1234000))   # unknown: 0, nothing happens
  as_.ioctl(I.NVGPU_AS_IOCTL_FREE_SPACE, S.nvgpu_as_free_space_args(offset=SHARED_WINDOW))
  assert orin.alloc_space(as_, GiB, SHARED_WINDOW) == SHARED_WINDOW   # freed with its mapping

def test_alloc_space_rules(orin):
  as_ = orin.alloc_as()
  assert errno_of(lambda: orin.alloc_space(as_, 64 << 10, page_size=64 << 10)) == 22   # no big pages on ga10b
  va = orin.alloc_space(as_, MiB, flags=0)
  assert va % MiB == 0 and 0x200000 <= va < USER_END

def test_remap_of_same_dmabuf_is_refcounted(orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(PAGE)
  other = orin.get_fd(h)
  va = orin.map(as_, buf)
  assert orin.map(as_, other) == va   # same dma-buf, same flags and kind: same mapping
  orin.unmap(as_, va)
  _, b2 = orin.buffer(PAGE)
  assert orin.map(as_, b2) != va      # still mapped once
  orin.unmap(as_, va)
  orin.unmap(as_, va)                 # nothing mapped there any more: still 0
  orin.unmap(as_, 0x1234000)

def test_mapping_outlives_fd_and_handle(orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(PAGE)
  va = orin.map(as_, buf)
  del buf
  orin.free(h)
  _, b2 = orin.buffer(PAGE)
  assert orin.map(as_, b2) != va   # the VA is still taken by the live mapping

def test_cpu_mappings_of_one_buffer_alias(orin):
  h, a = orin.buffer(2 * PAGE, WC)
  b = orin.get_fd(h)
  pa, pb = orin.cpu_map(a, 2 * PAGE), orin.cpu_map(b, 2 * PAGE)
  assert pa != pb
  ctypes.memmove(pa + PAGE + 5, b"orin", 4)
  assert ctypes.string_at(pb + PAGE + 5, 4) == b"orin"
  hcq.FileIOInterface.munmap(pa, 2 * PAGE)
  assert ctypes.string_at(pb + PAGE + 5, 4) == b"orin"
  hcq.FileIOInterface.munmap(pb, 2 * PAGE)

def test_cpu_mapping_keeps_memory_after_free(orin):
  h, a = orin.buffer(PAGE)
  p = orin.cpu_map(a, PAGE)
  ctypes.memmove(p, b"kept", 4)
  del a
  orin.free(h)
  h2, b = orin.buffer(PAGE)
  q = orin.cpu_map(b, PAGE)
  assert ctypes.string_at(p, 4) == b"kept" and ctypes.string_at(q, 4) == b"\0\0\0\0"   # new buffers start zeroed, the old one is intact
  hcq.FileIOInterface.munmap(p, PAGE); hcq.FileIOInterface.munmap(q, PAGE)
  orin.free(h2)

def test_dmabuf_mmap_bounds(orin):
  _, a = orin.buffer(PAGE)
  try: a.mmap(0, 2 * PAGE, mmap.PROT_READ, mmap.MAP_SHARED, 0); raise AssertionError("mapped beyond the buffer")
  except OSError as e: assert "Invalid argument" in str(e)

def test_create_64_returns_handle_at_offset_0(orin):
  orin.nvmap.ioctl(I.NVMAP_IOC_CREATE_64, c:=S.nvmap_create_handle(size64=5 << 30))
  assert c.handle64 >= 0x7FFFFFFF
  orin.free(c.handle64)

def test_thousand_alloc_free_cycles_keep_counts_flat(orin):
  as_ = orin.alloc_as(windows=True)
  def cycle():
    h, buf = orin.buffer(64 << 10)
    va = orin.map(as_, buf)
    p = orin.cpu_map(buf, 64 << 10)
    ctypes.memset(p, 1, 64)
    orin.unmap(as_, va); hcq.FileIOInterface.munmap(p, 64 << 10)
    del buf
    orin.free(h)
    return va
  first = cycle()
  before = proc_fds()
  vas = {cycle() for _ in range(1000)}
  assert proc_fds() == before and vas == {first}   # no fd left behind, and the VA comes back every time

def test_cache_maintenance_on_mapped_buffers(orin):
  # nvmap_cache.c __nvmap_cache_maint: an address must lie in a CPU mapping (a dma-buf mmap is an nvmap VMA: nvmap_dmabuf.c
  # __nvmap_map) of that very handle
  h, buf = orin.buffer(2 * PAGE)
  h2, other = orin.buffer(PAGE)
  p, q = orin.cpu_map(buf, 2 * PAGE), orin.cpu_map(other, PAGE)
  op = lambda addr, handle=h, o=2, n=64: orin.nvmap.ioctl(I.NVMAP_IOC_CACHE_64, S.nvmap_cache_op_64(addr=addr, handle=handle, len=n, op=o))
  op(p + PAGE)
  assert errno_of(lambda: op(0)) == 22 and errno_of(lambda: op(p, o=3)) == 22 and errno_of(lambda: op(p, handle=0x7fff0000)) == 22
  assert errno_of(lambda: op(ctypes.addressof(ctypes.c_int()))) == 99   # EADDRNOTAVAIL: not an nvmap mapping
  assert errno_of(lambda: op(q)) == 14                                  # EFAULT: another handle's mapping
  hcq.FileIOInterface.munmap(p, 2 * PAGE); hcq.FileIOInterface.munmap(q, PAGE)

def test_available_heaps_and_tag_label(orin):
  orin.nvmap.ioctl(I.NVMAP_IOC_GET_AVAILABLE_HEAPS, a:=S.nvmap_available_heaps())
  assert a.heaps == 0x10000004   # observed: FSI and VPR only, yet IOVMM allocations work
  label = ctypes.create_string_buffer(b"tinygrad")
  orin.nvmap.ioctl(I.NVMAP_IOC_SET_TAG_LABEL, S.nvmap_set_tag_label(tag=0x0900, len=8, addr=ctypes.addressof(label)))

def test_freeing_everything_restores_the_fresh_placement(orin):
  as_ = orin.alloc_as(end=SEED_END)
  bufs = [orin.buffer(size)[1] for size in (PAGE, 3 * PAGE, 64 << 10, MiB, 16 * MiB, PAGE)]
  vas = [orin.map(as_, b) for b in bufs]
  for va in reversed(vas[::2]): orin.unmap(as_, va)
  for va in vas[1::2]: orin.unmap(as_, va)
  assert orin.map(as_, orin.buffer(4 * MiB)[1]) == 0xFFFFA00000   # the split 4 MiB block at the top merged back whole
  assert orin.map(as_, bufs[4]) == 0xFFFE200000

def test_placement_with_reserved_areas(orin):
  # Derived from nvgpu's buddy allocator (not observed on an Orin: the observed VAs above had no ALLOC_SPACE). The AS starts at 2 MiB,
  # so a fixed area's edges split blocks down to 2 MiB, and the smallest free blocks, where small buffers go first, sit at those edges.
  as_ = orin.alloc_as(windows=True)   # TegraIface's layout: the first buffers go just above the shared window, not to the top
  assert [orin.map(as_, orin.buffer(size)[1]) for size in (PAGE, PAGE, 64 << 10)] == [0xFE40000000, 0xFE40001000, 0xFE40010000]
  as_ = orin.alloc_as(end=1 << 48, windows=True)   # a 48-bit address space with everything above 1 TiB reserved (for fixed mappings only)
  orin.alloc_space(as_, (1 << 48) - (1 << 40), 1 << 40)
  assert [orin.map(as_, orin.buffer(size)[1]) for size in (PAGE, PAGE, 64 << 10, MiB)] == [0xFFFFE00000, 0xFFFFE01000, 0xFFFFE10000, 0xFFFFF00000]
