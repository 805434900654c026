# a schedule asks each kernel for its devices and its variables once, not once a call: a model's blocks call the same kernels (32 calls
# of each in an 8B's step), each AST hundreds of uops, and a decode JIT's capture schedules the whole step
from tinygrad import Tensor, UOp
from tinygrad.uop.ops import Ops

def walks(n:int, monkeypatch) -> int:
  """walks (toposorts) of a kernel's AST, or of a call of it, in scheduling n calls of one kernel"""
  xs = [Tensor.ones(64).contiguous().realize() for _ in range(n)]
  seen, real = [], UOp.toposort
  def topo(self, *args, **kw):
    seen.append(self)
    return real(self, *args, **kw)
  monkeypatch.setattr(UOp, "toposort", topo)
  ys = [x * 3 + 1 for x in xs]
  linear, _ = ys[0].linear_with_vars(*ys[1:])
  monkeypatch.undo()
  calls = [c for c in linear.src if c.op is Ops.CALL]
  assert len(calls) == n and len(asts:={c.src[0] for c in calls}) == 1
  return sum(1 for u in seen if u in asts or (u.op is Ops.CALL and u.src[0] in asts))

def test_a_kernel_called_often_is_walked_once(monkeypatch):
  # once where the kernel is split out of the graph, once for its variables, once for its devices
  assert walks(32, monkeypatch) <= 3
