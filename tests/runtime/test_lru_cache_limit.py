# device: LRUAllocator's cache_limit bounds the bytes its cache keeps; a buffer freed beyond it is freed at once, a reused one leaves the
# count. Upstream this belongs in test/unit/ beside the other allocator tests: an allocator of plain objects, no device.
from tinygrad.device import LRUAllocator

class Counting(LRUAllocator):
  def __init__(self, **kwargs):
    self.live = 0
    super().__init__(None, **kwargs)
  def _alloc(self, size, options): self.live += 1; return object()
  def _free(self, opaque, options): self.live -= 1

MB = 1 << 20

def test_cache_keeps_at_most_its_limit():
  a = Counting(cache_limit=10 * MB)
  bufs = [a.alloc(4 * MB) for _ in range(4)]
  for b in bufs: a.free(b, 4 * MB)
  assert (a.cached, a.live) == (8 * MB, 2)   # two kept for reuse, two given back
  a.alloc(4 * MB)
  assert (a.cached, a.live) == (4 * MB, 2)   # reused from the cache
  a.free_cache()
  assert (a.cached, a.live) == (0, 1)

def test_no_limit_keeps_everything():
  a = Counting()
  for b in [a.alloc(4 * MB) for _ in range(4)]: a.free(b, 4 * MB)
  assert a.live == 4 and sum(len(v) for v in a.cache.values()) == 4
