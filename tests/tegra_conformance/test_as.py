# AS ioctls: MAP_BUFFER_EX, UNMAP_BUFFER and VM areas, as L4T r36.4's os/linux/vm.c, common/mm/vm.c and vm_area.c implement them
# (orin_emu/AUDIT.md; the placement rules are in test_memory.py).
import errno
from tegra_conformance.tegra import PAGE, errno_of
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

FIXED, AREA = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET, 0x100000000
COMPRESSIBLE = 0x6   # any kind other than -1: the mapping's key kind (comptags or not)

def area_as(orin):
  as_ = orin.alloc_as(end=0xFF00000000)
  orin.alloc_space(as_, 1 << 24, AREA)
  return as_

def test_a_mapping_is_keyed_by_the_compressible_kind(orin):
  # os/linux/vm.c nvgpu_vm_find_mapping with common/mm/vm.c nvgpu_vm_map_check_attributes' key kind: compr_kind when given
  as_, (_, buf) = orin.alloc_as(end=0xFF00000000), orin.buffer(2 * PAGE)
  va = orin.map(as_, buf, compr=COMPRESSIBLE, incompr=0)
  assert orin.map(as_, buf, compr=-1, incompr=0) != va
  assert orin.map(as_, buf, compr=COMPRESSIBLE, incompr=0) == va

def test_fixed_map_sizes(orin):
  # nvgpu_vm_new_mapping: mapping_size 0 means the whole buffer, so a buffer offset then runs past its end; the size is rounded up
  # to 4 KiB; an unaligned buffer offset fails in the page-table update (ENOMEM)
  as_, (_, buf) = area_as(orin), orin.buffer(2 * PAGE)
  assert errno_of(lambda: orin.map(as_, buf, FIXED, AREA, buffer_offset=PAGE)) == errno.EINVAL
  assert orin.map(as_, buf, FIXED, AREA, buffer_offset=PAGE, mapping_size=PAGE) == AREA
  assert orin.map(as_, buf, FIXED, AREA + 0x10000, mapping_size=0x1800) == AREA + 0x10000
  assert errno_of(lambda: orin.map(as_, buf, FIXED, AREA + 0x11000, mapping_size=PAGE)) == errno.EINVAL   # 0x2000 long: overlaps
  assert errno_of(lambda: orin.map(as_, buf, FIXED, AREA + 0x20000, buffer_offset=0x800, mapping_size=PAGE)) == errno.ENOMEM
  assert errno_of(lambda: orin.map(as_, buf, FIXED, AREA + 0x30800)) == errno.EINVAL   # the VA must be page aligned

def test_fixed_map_placement_is_checked_before_the_kind(orin):
  # nvgpu_vm_map: nvgpu_vm_area_validate_buffer runs before nvgpu_vm_do_map finds no usable kind
  as_, (_, buf) = area_as(orin), orin.buffer(PAGE)
  assert errno_of(lambda: orin.map(as_, buf, FIXED, 0x10000000, compr=-1, incompr=-1)) == errno.EINVAL   # no area there
  assert errno_of(lambda: orin.map(as_, buf, FIXED, AREA, compr=-1, incompr=-1)) == errno.ENOMEM
  assert orin.map(as_, buf, FIXED, AREA) == AREA   # the failed map left nothing behind

def test_free_space_drops_one_reference_of_each_mapping(orin):
  # vm_area.c nvgpu_vm_area_free: a mapping made twice survives its area (and keeps the VA) until the last UNMAP_BUFFER
  as_, (_, buf) = area_as(orin), orin.buffer(PAGE)
  orin.map(as_, buf, FIXED, AREA + PAGE); orin.map(as_, buf, FIXED, AREA + PAGE)
  orin.free_space(as_, AREA)
  orin.alloc_space(as_, 1 << 24, AREA)
  _, other = orin.buffer(PAGE)
  assert errno_of(lambda: orin.map(as_, other, FIXED, AREA + PAGE)) == errno.EINVAL   # overlapping buffer map requested
  orin.unmap(as_, AREA + PAGE)
  assert orin.map(as_, other, FIXED, AREA + PAGE) == AREA + PAGE

def test_map_access_and_tegra_raw(orin):
  # nvgpu_vm_map_buffer: access type 3 does not exist (nvgpu_vm_translate_map_access); nothing enables NVGPU_SUPPORT_TEGRA_RAW
  as_, (_, buf) = orin.alloc_as(), orin.buffer(PAGE)
  assert errno_of(lambda: orin.map(as_, buf, flags=3 << 10)) == errno.EINVAL
  assert errno_of(lambda: orin.map(as_, buf, flags=C.NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW)) == errno.EINVAL
  assert orin.map(as_, buf, flags=1 << 10) and orin.map(as_, buf, flags=2 << 10)   # read-only, read-write

def test_bind_channel_needs_a_channel(orin):
  # os/linux/ioctl_as.c gk20a_as_ioctl_bind_channel: nvgpu_channel_get_from_file finds none
  assert errno_of(lambda: orin.bind_as(orin.alloc_as(), orin.ctrl)) == errno.EINVAL

def test_legacy_32_bit_alloc_space(orin):
  # os/linux/ioctl_as.c NVGPU32_AS_IOCTL_ALLOC_SPACE: a 32-bit page count, otherwise the same as ALLOC_SPACE
  as_ = orin.alloc_as()
  as_.ioctl(I.NVGPU32_AS_IOCTL_ALLOC_SPACE, a:=S.nvgpu32_as_alloc_space_args(pages=16, page_size=PAGE, flags=1, offset=AREA))
  assert a.offset == AREA
  assert errno_of(lambda: as_.ioctl(I.NVGPU32_AS_IOCTL_ALLOC_SPACE, S.nvgpu32_as_alloc_space_args(pages=1, page_size=1 << 16))) == errno.EINVAL
