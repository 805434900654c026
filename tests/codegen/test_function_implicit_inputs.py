# a @function call finds its body's implicit inputs (buffers it reads that are not its arguments) in one walk of the body, not a walk of
# each AFTER's backward slice: a model block's body has dozens of AFTERs (a KV cache's store, every custom kernel's output) over thousands
# of uops
import importlib
import numpy as np
from tinygrad import Tensor, UOp, function

fn = importlib.import_module("tinygrad.function")

def walked(n:int, monkeypatch) -> tuple[int, int]:
  """(uops the implicit inputs' search visits, uops of the body) of a body writing and reading n buffers"""
  searching, count, body_uops = [False], [0], [0]
  real_rewrite, real_topo, real_visit = fn.graph_rewrite, UOp.toposort, UOp.topovisit
  def rewrite(sink, pm, ctx=None, **kw):
    if kw.get("name") != "get_implicit_inputs": return real_rewrite(sink, pm, ctx, **kw)
    body_uops[0], searching[0] = len(real_topo(sink)), True
    try: return real_rewrite(sink, pm, ctx, **kw)
    finally: searching[0] = False
  def topo(self, *a, **kw):
    ret = real_topo(self, *a, **kw)
    if searching[0]: count[0] += len(ret)
    return ret
  def visit(self, visitor, cache):
    before = len(cache)
    ret = real_visit(self, visitor, cache)
    if searching[0]: count[0] += len(cache) - before
    return ret
  monkeypatch.setattr(fn, "graph_rewrite", rewrite)
  monkeypatch.setattr(UOp, "toposort", topo)
  monkeypatch.setattr(UOp, "topovisit", visit)
  bufs = [Tensor.zeros(4).contiguous().realize() for _ in range(n)]
  @function(allow_implicit=True)
  def body(x:Tensor) -> Tensor:
    # each buffer written by an assign (an AFTER over the ones before it) and read back
    for b in bufs: x = x + b.assign(x * 2).contiguous()
    return x
  out = body(Tensor.ones(4).contiguous().realize())
  monkeypatch.undo()
  np.testing.assert_equal(out.numpy(), np.full(4, 3**n, np.float32))
  return count[0], body_uops[0]

def test_implicit_inputs_found_in_one_walk(monkeypatch):
  for n in (2, 16):
    visited, uops = walked(n, monkeypatch)
    assert visited <= 2 * uops, f"{n} buffers: {visited} uops visited, the body has {uops}"
