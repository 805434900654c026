# a @function call makes its explicit inputs params in the rewrite that finds its implicit inputs: a model block's body of thousands of
# uops is rebuilt once a call, not once for each
import importlib
import numpy as np
from tinygrad import Tensor, UOp, function

fn = importlib.import_module("tinygrad.function")

def test_a_call_rebuilds_its_body_once(monkeypatch):
  passes, real_rewrite, real_sub = [], fn.graph_rewrite, UOp.substitute
  def rewrite(sink, pm, ctx=None, **kw):
    passes.append(kw.get("name"))
    return real_rewrite(sink, pm, ctx, **kw)
  def substitute(self, dvars, *a, **kw):
    if any(k is not v for k, v in dvars.items()): passes.append("substitute")
    return real_sub(self, dvars, *a, **kw)
  w = Tensor.full((4,), 3.0).contiguous().realize()
  @function(allow_implicit=True)
  def body(x:Tensor, y:Tensor) -> Tensor: return (x * w + y).contiguous()
  x, y = Tensor.ones(4).contiguous().realize(), Tensor.full((4,), 2.0).contiguous().realize()
  monkeypatch.setattr(fn, "graph_rewrite", rewrite)
  monkeypatch.setattr(UOp, "substitute", substitute)
  out = body(x, y)
  monkeypatch.undo()
  np.testing.assert_equal(out.numpy(), np.full(4, 5, np.float32))
  assert passes == ["get_implicit_inputs"], passes
