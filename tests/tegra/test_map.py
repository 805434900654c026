# TegraIface.map(): a CPU buffer reaches the GPU at its own address (NVMAP_IOC_FROM_VA, then MAP_BUFFER_EX at that VA), and the
# mapping goes away with the buffer (tests/tegra_conformance/test_from_va.py has the raw NVMAP_IOC_FROM_VA rules).
import gc, os
import numpy as np, pytest
from tinygrad.device import Buffer, BufferSpec
from tinygrad.dtype import dtypes
from tegra_kernel import emu_kernel

def gpu_copy_of(dev, cpu:Buffer) -> Buffer:
  """The GPU's copy engine reads the CPU buffer at the CPU's own address, as upstream's HCQ graph copies do."""
  local = Buffer("NV", cpu.size, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated()
  dev.allocator.map(cpu._buf)
  dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(local._buf.va_addr, cpu._buf.va_addr, cpu.size) \
                       .signal(dev.timeline_signal, dev.timeline_value).submit(dev)
  dev.timeline_signal.wait(dev.timeline_value)
  dev.timeline_value += 1
  return local

def cpu_buffer(data:np.ndarray) -> Buffer:
  return Buffer("CPU", data.size, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated().copyin(memoryview(data))

def counts() -> dict:
  """What a leak would grow: the emulated kernel's handles, GPU mappings and fds; on a Jetson, the process's fds and CPU mappings."""
  gc.collect()
  if (k:=emu_kernel()) is not None: return k.counts()
  with open("/proc/self/maps") as f: return {"proc_fds": len(os.listdir("/proc/self/fd")), "cpu_mappings": len(f.readlines())}

@pytest.mark.parametrize("size", [1, 4096, 3 * 4096 + 17])
def test_gpu_copies_from_a_mapped_cpu_buffer(dev, size):
  data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
  np.testing.assert_equal(gpu_copy_of(dev, cpu_buffer(data)).numpy(), data)

def test_map_free_cycles_leave_nothing(dev):
  data = np.arange(3 * 4096, dtype=np.uint8)
  gpu_copy_of(dev, cpu_buffer(data)).deallocate()   # warm-up: the LRU-free NV side and the queues exist before counting
  before = counts()
  for _ in range(100):
    cpu = cpu_buffer(data)
    out = gpu_copy_of(dev, cpu)
    assert out.numpy()[-1] == data[-1]
    out.deallocate(); cpu.deallocate()
  assert counts() == before

def test_cpu_memory_below_the_cpu_area_is_refused(dev):
  # a CPU buffer at a low address would collide with kernel-chosen GPU VAs: map() says so instead of mapping it elsewhere
  low = Buffer("CPU", 4096, dtypes.uint8, options=BufferSpec(external_ptr=0x10000000)).ensure_allocated()
  with pytest.raises(RuntimeError, match="cannot map CPU buffer at 0x10000000"): dev.allocator.map(low._buf)
