# A JIT that copies CPU tensors to the GPU (upstream test_jit's test_copy_inside_jit): the GPU cannot map CPU memory at its own
# address on Tegra (tests/tegra/test_map.py), and the HCQ graph must leave the copy out (the CPU device is no HCQ device since upstream
# 6b35220622 "cpu hcq2"), so it runs as a plain copy.
import numpy as np
from tinygrad import Tensor, TinyJit

def test_jit_with_cpu_to_gpu_copy(dev):
  @TinyJit
  def add(x, y): return (x.to("NV") + y).realize()
  for _ in range(4):
    a, b = Tensor.rand(16, 16, device="CPU").realize(), Tensor.rand(16, 16, device="NV").realize()
    np.testing.assert_allclose(add(a, b).numpy(), a.numpy() + b.numpy(), rtol=1e-6)
