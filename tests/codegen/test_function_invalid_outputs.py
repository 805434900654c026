# a @function call searches its body for write-only scratch outputs (Tensor.invalids) once, not once for each of the body's uops:
# the body of a model's block has thousands, and each search walks all of them
import importlib
import numpy as np
from tinygrad import Tensor, function

# the package's `function` is the decorator, not this module
fn = importlib.import_module("tinygrad.function")

def test_invalid_outputs_searched_once_a_call(monkeypatch):
  calls, real = [], fn.invalid_outputs
  monkeypatch.setattr(fn, "invalid_outputs", lambda u, *a: calls.append(u) or real(u, *a))
  @function
  def body(x:Tensor) -> Tensor:
    for _ in range(20): x = (x * 2 + 1).relu()
    return x
  out = body(Tensor.ones(4).contiguous().realize())
  assert len(calls) == 1, f"{len(calls)} searches"
  np.testing.assert_equal(out.numpy(), np.full(4, 2**21 - 1, np.float32))
