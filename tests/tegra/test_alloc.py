# TegraIface allocations: tags, and what a failed one gives back.
import errno, os, re, pytest
from tinygrad.device import BufferSpec
from tegra_kernel import kernel_log, emu_kernel

def test_allocations_are_tagged(dev):
  # nvmap logs "All NvMap Allocations must have a tag" once per client that allocates untagged memory
  dev.allocator.free(dev.allocator.alloc(4096, BufferSpec(nolru=True)), 4096, BufferSpec(nolru=True))
  assert not [ln for ln in kernel_log() if "must have a tag" in ln and f"PID {os.getpid()}:" in ln]

def test_a_failed_cpu_mapping_names_its_cause_and_leaks_nothing(dev):
  # the CPU view of a buffer is an mmap of its dma-buf at the buffer's GPU VA; when that mmap fails for want of memory (or of
  # vm.max_map_count) the error says so, not that the address is taken, and the nvmap handle and GPU mapping are given back
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's fault injection")
  before = k.counts()
  for _ in range(2): k.faults.mmap("dmabuf", errno.ENOMEM)   # the allocator retries once after emptying its cache
  with pytest.raises(MemoryError) as e: dev.allocator.alloc(1 << 20, BufferSpec(nolru=True))   # Allocator.alloc names the cause in __cause__
  cause = str(e.value.__cause__)
  assert re.search(r"cannot map GPU VA 0x[0-9a-f]+ \(0x100000 bytes\) for the CPU: .*Cannot allocate memory", cause), cause
  assert "already uses" not in cause and k.counts() == before
