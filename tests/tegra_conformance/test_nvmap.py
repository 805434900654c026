# nvmap ioctls and dma-buf mappings, as L4T r36.4's nvmap (drivers/video/tegra/nvmap in linux-nv-oot) implements them
# (orin_emu/AUDIT.md; FROM_VA is in test_from_va.py).
import ctypes, errno, mmap, os
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import PAGE, WC, errno_of
from orin_emu.kernel.uapi import structs as S, ioctls as I, consts as C

def test_alloc_heap_rules(orin):
  # nvmap_ioctl.c nvmap_ioctl_alloc asks nvmap_dev.c is_nvmap_memory_available first (no heap, or one the Orin lacks: ENOMEM, even
  # for an allocated handle); nvmap_alloc.c nvmap_alloc_handle then refuses to mix an exclusive heap. GENERIC is served as IOVMM
  # because the Orin has no GENERIC carveout (nvmap_dev.c nvmap_probe)
  h = orin.create(PAGE)
  for heap, err in ((0, errno.ENOMEM), (C.NVMAP_HEAP_CARVEOUT_IVM, errno.ENOMEM), (1 << 31, errno.ENOMEM),
                    (C.NVMAP_HEAP_CARVEOUT_IVM | C.NVMAP_HEAP_IOVMM, errno.EINVAL)):
    assert errno_of(lambda: orin.alloc(h, heap=heap)) == err, hex(heap)
  orin.alloc(h, heap=C.NVMAP_HEAP_CARVEOUT_GENERIC)
  assert errno_of(lambda: orin.alloc(h, heap=0)) == errno.ENOMEM and errno_of(lambda: orin.alloc(h)) == errno.EEXIST
  p = orin.cpu_map(orin.get_fd(h), PAGE)
  ctypes.memmove(p, b"generic", 7)
  assert ctypes.string_at(p, 7) == b"generic"
  hcq.FileIOInterface.munmap(p, PAGE)

def test_free_closes_a_dmabuf_fd_given_as_the_handle(orin):
  # nvmap_ioctl.c nvmap_ioctl_free: an argument that is a dma-buf fd is closed (SYS_CLOSE); another fd is left alone
  _, buf = orin.buffer(PAGE)
  orin.free(buf.fd)
  assert errno_of(lambda: os.fstat(buf.fd)) == errno.EBADF
  del buf.fd   # closed already
  orin.free(orin.ctrl.fd)
  os.fstat(orin.ctrl.fd)

def test_get_fd_of_an_nvmap_dmabuf_fd_is_einval(orin):
  # nvmap_ioctl.c nvmap_ioctl_getfd: not an ID, so a dma-buf fd, which nvmap_dmabuf.c nvmap_dmabuf_duplicate_gen_fd refuses to
  # duplicate when it is nvmap's own
  _, buf = orin.buffer(PAGE)
  assert errno_of(lambda: orin.get_fd(buf.fd)) == errno.EINVAL

def test_dmabuf_mmap_of_an_unallocated_handle(orin):
  # dma-buf.c dma_buf_mmap_internal checks the bounds, then nvmap_dmabuf.c __nvmap_map finds no CPU-accessible heap
  buf = orin.get_fd(orin.create(PAGE))
  mm = lambda n: buf.mmap(0, n, mmap.PROT_READ, mmap.MAP_SHARED, 0)
  for n, msg in ((2 * PAGE, "Invalid argument"), (PAGE, "Operation not permitted")):
    try: mm(n); raise AssertionError(n)
    except OSError as e: assert msg in str(e), (n, e)

def test_cache_maintenance_range_must_stay_in_the_mapping(orin):
  # nvmap_cache.c __nvmap_cache_maint: len beyond the end of the VMA is EADDRNOTAVAIL
  h, buf = orin.buffer(2 * PAGE)
  p = orin.cpu_map(buf, 2 * PAGE)
  op = lambda addr, n: orin.nvmap.ioctl(I.NVMAP_IOC_CACHE_64, S.nvmap_cache_op_64(addr=addr, handle=h, len=n, op=2))
  op(p + PAGE, PAGE)
  assert errno_of(lambda: op(p + PAGE, PAGE + 1)) == errno.EADDRNOTAVAIL
  hcq.FileIOInterface.munmap(p, 2 * PAGE)

def test_cache_list_rules(orin):
  # nvmap_ioctl.c nvmap_ioctl_cache_maint_list: nr 0 and NULL arrays are EINVAL, an unknown handle EINVAL, an unallocated one EPERM;
  # the op is not checked (nvmap_cache.c does no list maintenance on Tegra234)
  h, _ = orin.buffer(PAGE, WC)
  ids, offs, sizes = (ctypes.c_uint32 * 1)(h), (ctypes.c_uint32 * 1)(0), (ctypes.c_uint32 * 1)(PAGE)
  def cl(nr=1, op=0, handles=ctypes.addressof(ids), offsets=ctypes.addressof(offs)):
    orin.nvmap.ioctl(I.NVMAP_IOC_CACHE_LIST, S.nvmap_cache_op_list(handles=handles, offsets=offsets, sizes=ctypes.addressof(sizes), nr=nr, op=op))
  cl(); cl(op=7)
  assert errno_of(lambda: cl(nr=0)) == errno.EINVAL and errno_of(lambda: cl(offsets=0)) == errno.EINVAL
  assert errno_of(lambda: cl(handles=8)) == errno.EFAULT
  ids[0] = 0x7ffff0
  assert errno_of(cl) == errno.EINVAL
  ids[0] = orin.create(PAGE)
  assert errno_of(cl) == errno.EPERM
  ids2, offs2, sizes2 = (ctypes.c_uint32 * 2)(h, orin.create(PAGE)), (ctypes.c_uint32 * 2)(), (ctypes.c_uint32 * 2)(PAGE, PAGE)
  orin.alloc(ids2[1], cache=WC | C.NVMAP_HANDLE_CACHE_SYNC_AT_RESERVE)
  mix = S.nvmap_cache_op_list(handles=ctypes.addressof(ids2), offsets=ctypes.addressof(offs2), sizes=ctypes.addressof(sizes2), nr=2)
  assert errno_of(lambda: orin.nvmap.ioctl(I.NVMAP_IOC_CACHE_LIST, mix)) == errno.EINVAL   # one with CACHE_SYNC_AT_RESERVE, one without

def test_available_heaps_copy_failure_is_einval(orin):
  # nvmap_ioctl.c nvmap_ioctl_get_available_heaps returns EINVAL, not EFAULT, when it cannot write the answer
  assert errno_of(lambda: orin.nvmap.ioctl(I.NVMAP_IOC_GET_AVAILABLE_HEAPS, 8)) == errno.EINVAL

def test_tag_label_is_cut_to_its_maximum_length(orin):
  # nvmap_ioctl.c nvmap_ioctl_set_tag_label: len is capped at NVMAP_TAG_LABEL_MAXLEN before the label is read; len 0 removes it
  label = ctypes.create_string_buffer(b"t" * 40)
  orin.nvmap.ioctl(I.NVMAP_IOC_SET_TAG_LABEL, S.nvmap_set_tag_label(tag=0x0901, len=0xFFFFFFFF, addr=ctypes.addressof(label)))
  orin.nvmap.ioctl(I.NVMAP_IOC_SET_TAG_LABEL, S.nvmap_set_tag_label(tag=0x0901, len=0, addr=0))
