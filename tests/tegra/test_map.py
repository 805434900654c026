# TegraIface.map(): HCQ needs another device's buffer at its own address on the GPU, and CPU memory lies far above the Tegra GPU's
# 40-bit address space (docs/tegra-address-space.md). map() refuses and says so; CPU<->NV copies go through the CPU views instead.
import numpy as np, pytest
from tinygrad import Tensor
from tinygrad.device import Buffer, BufferSpec
from tinygrad.dtype import dtypes

def cpu_buffer(data:np.ndarray) -> Buffer:
  return Buffer("CPU", data.size, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated() \
    .copy_from(Buffer("PYTHON", data.size, dtypes.uint8, opaque=memoryview(data)))

def test_map_of_a_cpu_buffer_is_refused_with_the_reason(dev):
  cpu = cpu_buffer(np.arange(16, dtype=np.uint8))
  with pytest.raises(RuntimeError, match=f"cannot map CPU buffer at {cpu._buf.va_addr:#x} for the GPU: above Tegra's GPU VAs"):
    dev.allocator.map(cpu)

@pytest.mark.parametrize("size", [1, 4096, 3 * 4096 + 17])
def test_copies_between_cpu_and_nv(dev, size):
  data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
  on_gpu = Tensor(data, device="CPU").to("NV").realize()
  np.testing.assert_equal(on_gpu.numpy(), data)
  np.testing.assert_equal((on_gpu + 1).to("CPU").numpy(), data + 1)
