# Host <-> device copies on unified memory: direct copies through the CPU view, correct at every size.
import numpy as np, pytest
from tinygrad.device import BufferSpec

@pytest.mark.parametrize("size", [1, 3, 4096, 4097, (1 << 20) + 5, 64 << 20])
def test_copy_roundtrip(dev, size):
  buf = dev.allocator.alloc(size, BufferSpec())
  try:
    src = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    dev.allocator._copyin(buf, memoryview(src))
    out = np.zeros(size, np.uint8)
    dev.allocator._copyout(memoryview(out), buf)
    np.testing.assert_equal(out, src)
  finally: dev.allocator.free(buf, size, BufferSpec())

def test_copies_do_not_use_the_copy_engine(dev):
  buf, data = dev.allocator.alloc(4096, BufferSpec()), memoryview(bytearray(range(256)) * 16)
  before = dev.timeline_value
  dev.allocator._copyin(buf, data)
  dev.allocator._copyout(out:=memoryview(bytearray(4096)), buf)
  assert dev.timeline_value == before and out == data
  dev.allocator.free(buf, 4096, BufferSpec())
