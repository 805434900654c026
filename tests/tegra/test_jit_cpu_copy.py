# A JIT that copies CPU tensors to the GPU: upstream's HCQ graph takes the copy in and has the copy engine read the CPU buffer at
# its own address, which TegraIface.map() makes valid on the GPU (upstream test_jit's test_copy_inside_jit).
import numpy as np
from tinygrad import Tensor, TinyJit

def test_jit_with_cpu_to_gpu_copy(dev):
  @TinyJit
  def add(x, y): return (x.to("NV") + y).realize()
  for _ in range(4):
    a, b = Tensor.rand(16, 16, device="CPU").realize(), Tensor.rand(16, 16, device="NV").realize()
    np.testing.assert_allclose(add(a, b).numpy(), a.numpy() + b.numpy(), rtol=1e-6)
