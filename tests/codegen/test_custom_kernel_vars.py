# A custom kernel takes a bound variable among its inputs: its function gets the variable, and the schedule its value, also where nothing
# else in the schedule binds it (patch "uop: a custom kernel takes bound variables")
import numpy as np, pytest
from tinygrad import Tensor, UOp
from tinygrad.uop.ops import KernelInfo

def add_n(B:UOp, A:UOp, n:UOp) -> UOp:
  i = UOp.range(A.size, 0)
  return B.flatten()[i].store(A.flatten()[i] + n.cast(A.dtype.base)).end(i).sink(arg=KernelInfo(name="add_n"))

def test_a_variable_bound_nowhere_else():
  a, n = Tensor.arange(8).float().contiguous().realize(), UOp.variable("n", 0, 10)
  for v in (3, 7):
    out = Tensor.empty(8).custom_kernel(a, n.bind(v), fxn=add_n)
    assert len(out) == 2  # a Tensor for the output and for a, none for the variable
    np.testing.assert_equal(out[0].numpy(), np.arange(8) + v)

def test_one_kernel_for_every_value():
  a, n = Tensor.arange(8).float().contiguous().realize(), UOp.variable("n", 0, 10)
  scheds = [Tensor.empty(8).custom_kernel(a, n.bind(v), fxn=add_n)[0].schedule_with_vars() for v in (1, 2)]
  assert [var_vals for _, var_vals in scheds] == [{"n": 1}, {"n": 2}]
  assert len({s[-1].ast.key for s, _ in scheds}) == 1

def test_other_uops_are_refused():
  with pytest.raises(TypeError, match="bound variables"):
    Tensor.empty(8).custom_kernel(Tensor.arange(8).float(), UOp.variable("n", 0, 10), fxn=add_n)  # unbound
