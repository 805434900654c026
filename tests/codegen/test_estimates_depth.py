# a kernel's estimates count its ops times the trip count of their loop nest: a symbolic count (a prompt's attention over start_pos+T)
# once summed an op at a time made a chain as deep as the kernel is long, which pickling (the compile workers, the program disk cache)
# cannot recurse through
import pickle
from tinygrad import UOp, dtypes
from tinygrad.renderer import Estimates
from tinygrad.uop.ops import sym_infer

def depth(u:UOp) -> int:
  d: dict[UOp, int] = {}
  for x in u.toposort(): d[x] = 1 + max((d[s] for s in x.src), default=0)
  return d[u]

def test_symbolic_estimates_stay_shallow():
  n = UOp.variable("n", 1, 1024)
  x, ops = UOp.variable("a", 0, 10, dtypes.int), []
  for i in range(3000): ops.append(x:=x + i)
  est = Estimates.from_uops((r:=UOp.range(n, 0), *ops, r.end()))
  assert isinstance(est.ops, UOp) and depth(est.ops) < 10
  assert sym_infer(est.ops, {"n": 7}) == 7 * 3000
  assert sym_infer(pickle.loads(pickle.dumps(est)).ops, {"n": 7}) == 7 * 3000
