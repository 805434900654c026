# TegraIface allocations: sizes, alignment, cache modes.
import os, pytest
from tinygrad.device import BufferSpec
from tegra_kernel import nvmap_buffer, kernel_log

@pytest.mark.parametrize("size,align", [(4096, 4096), ((8 << 20) - 4096, 4096), (8 << 20, 2 << 20), ((64 << 20) + 4096, 2 << 20)])
def test_large_allocations_are_2mib_aligned(dev, size, align):
  buf = dev.allocator.alloc(size, BufferSpec(nolru=True))
  try: assert nvmap_buffer(buf.meta.hMemory).align == align
  finally: dev.allocator.free(buf, size, BufferSpec(nolru=True))

def test_allocations_are_tagged(dev):
  # nvmap logs "All NvMap Allocations must have a tag" once per client that allocates untagged memory
  dev.allocator.free(dev.allocator.alloc(4096, BufferSpec(nolru=True)), 4096, BufferSpec(nolru=True))
  assert not [ln for ln in kernel_log() if "must have a tag" in ln and f"PID {os.getpid()}:" in ln]
