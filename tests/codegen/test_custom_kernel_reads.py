# A custom kernel's output is its buffer after the kernel: later kernels read it where it was written, also through a contiguous or in
# several orders, not a copy of it first (patch "schedule: a custom kernel's output is read where it was written")
import numpy as np
from tinygrad import Tensor, UOp
from tinygrad.uop.ops import KernelInfo

def add_one(B:UOp, A:UOp) -> UOp:
  i = UOp.range(A.size, 0)
  return B.flatten()[i].store(A.flatten()[i] + 1).end(i).sink(arg=KernelInfo(name="add_one"))

def read_twice() -> tuple[Tensor, np.ndarray]:
  a = Tensor.arange(16).float().reshape(4, 4).contiguous().realize()
  b = Tensor.empty(4, 4).custom_kernel(a, fxn=add_one)[0]
  return b.contiguous() * 2 + b.T, (a.numpy() + 1) * 2 + (a.numpy() + 1).T

def test_no_copy_of_a_custom_kernels_output():
  names = [e.ast.arg.name if e.ast.arg is not None else "" for e in read_twice()[0].schedule()]
  assert names[0] == "add_one"
  assert len(names) == 2  # the custom kernel and the one that reads its output twice

def test_values():
  c, want = read_twice()
  np.testing.assert_equal(c.numpy(), want)

def add_one_twice() -> Tensor:
  # a one-dimensional output has no reshape over its buffer: read in place all the same
  a = Tensor.arange(16).float().contiguous().realize()
  return Tensor.empty(16).custom_kernel(Tensor.empty(16).custom_kernel(a, fxn=add_one)[0], fxn=add_one)[0]

def test_custom_kernel_reads_a_custom_kernels_output():
  assert [e.ast.arg.name if e.ast.arg is not None else "" for e in add_one_twice().schedule()] == ["add_one", "add_one"]
  np.testing.assert_equal(add_one_twice().numpy(), np.arange(16) + 2)
