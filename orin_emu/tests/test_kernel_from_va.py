# FROM_VA buffers in the kernel room: the GPU's view (the memory interface, README.md) is the process's own pages, and they live as nvmap buffers do.
import ctypes, mmap
import numpy as np
from orin_emu.kernel.uapi import consts as C
from tegra_conformance.tegra import PAGE

FIXED = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET

def user_pages(n:int):
  m = mmap.mmap(-1, n * PAGE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
  return m, ctypes.addressof(ctypes.c_char.from_buffer(m))

def test_gpu_sees_the_cpu_bytes_at_the_same_address(k, orin):
  m, p = user_pages(2)
  m[PAGE:PAGE + 4] = b"host"
  as_ = orin.alloc_as(end=1 << 48)
  orin.alloc_space(as_, (1 << 48) - (1 << 40), 1 << 40)
  h = orin.from_va(p, 2 * PAGE)
  assert orin.map(as_, orin.get_fd(h), FIXED, p) == p
  base, view = k.files[as_.fd].vm.mem.lookup(p + PAGE + 2)
  assert base == p and len(view) == 2 * PAGE and bytes(view[PAGE:PAGE + 4]) == b"host"
  view[:3] = np.frombuffer(b"gpu", np.uint8)   # a GPU write is a CPU-visible store to the very same page
  assert m[:3] == b"gpu"
  orin.unmap(as_, p); orin.free(h)
  del view, base
  m.close()

def test_from_va_buffer_outlives_its_handle_like_any_buffer(k, orin):
  m, p = user_pages(1)
  as_ = orin.alloc_as()
  h = orin.from_va(p, PAGE)
  va = orin.map(as_, orin.get_fd(h))   # a kernel-chosen VA works too: the GPU then sees the pages at another address
  orin.free(h)
  assert k.counts()["buffers"] == 1 and k.counts()["handles"] == 0 and k.counts()["dram_bytes"] == 0   # pinned user pages, no DRAM
  m[:2] = b"ok"
  assert bytes(k.files[as_.fd].vm.mem.lookup(va)[1][:2]) == b"ok"
  orin.unmap(as_, va)
  assert k.counts()["buffers"] == 0

def test_from_va_map_cycles_leave_nothing(k, orin):
  m, p = user_pages(4)
  as_ = orin.alloc_as(end=1 << 48)
  orin.alloc_space(as_, (1 << 48) - (1 << 40), 1 << 40)
  base = k.counts()
  for _ in range(200):
    h = orin.from_va(p, 4 * PAGE)
    orin.map(as_, orin.get_fd(h), FIXED, p)
    orin.unmap(as_, p); orin.free(h)
  assert k.counts() == base

def test_from_va_untagged_warns_once(k, orin):
  m, p = user_pages(1)
  orin.free(orin.from_va(p, PAGE, tag=0))
  assert sum("must have a tag" in ln for ln in k.klog.lines()) == 1
  try: orin.get_fd(orin.from_va(p, PAGE, tag=0)).mmap(0, PAGE, mmap.PROT_READ, mmap.MAP_SHARED, 0)
  except Exception as e: assert "not emulated" in str(e)   # the Orin would map the pinned pages; the emulator says it cannot
  else: raise AssertionError("mmap of a FROM_VA dma-buf should be refused as not emulated")
