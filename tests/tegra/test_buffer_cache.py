# tinygrad's buffer cache (LRUAllocator) keeps freed buffers for reuse. On the Orin a buffer is system RAM (nvmap IOVMM pages), so the
# cache holds at most NV_LRU_LIMIT_MB (512 MiB by default) of it; an allocation that fails for want of memory empties it and retries.
from tinygrad.device import BufferSpec
from tegra_kernel import emu_kernel

MB = 1 << 20

def test_cache_holds_at_most_its_bound(dev):
  dev.allocator.free_cache()
  bufs = [dev.allocator.alloc(64 * MB + i * 4096) for i in range(12)]   # 12 sizes, so nothing is reused: 768 MiB freed into the cache
  k = emu_kernel()
  held = k.counts()["dram_bytes"] if k is not None else None
  for i, b in enumerate(bufs): dev.allocator.free(b, 64 * MB + i * 4096)
  cached = sum(size * len(v) for (size, _), v in dev.allocator.cache.items())
  assert 448 * MB < cached <= 512 * MB, cached >> 20
  if k is not None: assert held - k.counts()["dram_bytes"] == 768 * MB + 66 * 4096 - cached   # what the cache does not hold is freed
  dev.allocator.free_cache()

def test_enomem_empties_the_cache_and_retries(dev):
  if (k:=emu_kernel()) is None: import pytest; pytest.skip("needs the emulated kernel's fault injection")
  dev.allocator.free_cache()
  for i in range(4): dev.allocator.free(dev.allocator.alloc(8 * MB + i * 4096), 8 * MB + i * 4096)
  before = k.counts()["dram_bytes"]
  k.faults.alloc()   # the next nvmap allocation fails with ENOMEM, as on a Jetson whose RAM is taken
  buf = dev.allocator.alloc(16 * MB, BufferSpec(nolru=True))
  assert not any(dev.allocator.cache.values()) and k.counts()["dram_bytes"] == before - 32 * MB - 6 * 4096 + 16 * MB
  dev.allocator.free(buf, 16 * MB, BufferSpec(nolru=True))
