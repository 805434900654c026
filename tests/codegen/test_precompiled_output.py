# a precompiled @function returning what a custom kernel of its body wrote: the kernel writes the call's output, no copy kernel
import numpy as np
from tinygrad import Tensor, UOp, GlobalCounters
from tinygrad.function import function
from tinygrad.uop.ops import KernelInfo

def add_one(B:UOp, A:UOp) -> UOp:
  i = UOp.range(A.numel(), 0)
  return B[i].store(A[i] + 1).end(i).sink(arg=KernelInfo(name=f"add_one_{A.numel()}"))

@function(precompile=True)
def f(x:Tensor) -> Tensor:
  out = Tensor.invalids(x.numel(), dtype=x.dtype)
  out = Tensor.custom_kernel(out, x.flatten(), fxn=add_one)[0]
  return out.reshape(x.shape).contiguous()

def test_precompiled_custom_kernel_output_is_not_copied():
  x = Tensor(np.arange(8, dtype=np.float32).reshape(2, 4)).realize()
  out = f(x)
  GlobalCounters.reset()
  out.realize()
  assert GlobalCounters.kernel_count == 1
  np.testing.assert_equal(out.numpy(), np.arange(8, dtype=np.float32).reshape(2, 4) + 1)

def test_precompiled_custom_kernel_output_twice():
  x = Tensor(np.arange(8, dtype=np.float32).reshape(2, 4)).realize()
  a, b = f(x), f(x + 1)
  GlobalCounters.reset()
  Tensor.realize(a, b)
  assert GlobalCounters.kernel_count == 3
  np.testing.assert_equal(a.numpy(), np.arange(8, dtype=np.float32).reshape(2, 4) + 1)
  np.testing.assert_equal(b.numpy(), np.arange(8, dtype=np.float32).reshape(2, 4) + 2)
