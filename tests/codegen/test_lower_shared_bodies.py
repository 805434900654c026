# calls of one kernel body (a model's blocks: 16 calls each of a few dozen bodies) get its lowered program swapped in once, not once a call
import importlib
import numpy as np
from tinygrad import Tensor
from tinygrad.uop.ops import UOp, Ops

realize = importlib.import_module("tinygrad.engine.realize")

def test_a_program_is_swapped_into_each_body_once(monkeypatch):
  xs = [Tensor.full((64,), float(i)).contiguous().realize() for i in range(8)]
  subs, inside, real_sub, real_lower = [], [False], UOp.substitute, realize.lower_and_compile
  def lower(linear):
    inside[0] = True
    try: return real_lower(linear)
    finally: inside[0] = False
  monkeypatch.setattr(realize, "lower_and_compile", lower)
  def sub(self, dvars, *a, **kw):
    if inside[0] and any(v.op is Ops.PROGRAM for v in dvars.values()): subs.append(self)
    return real_sub(self, dvars, *a, **kw)
  monkeypatch.setattr(UOp, "substitute", sub)
  ys = [x * 3 + 1 for x in xs]
  Tensor.realize(*ys)
  # the 8 calls share one body: the program is swapped into it once
  assert len(subs) == 1, len(subs)
  for i, y in enumerate(ys): np.testing.assert_equal(y.numpy(), np.full(64, 3 * i + 1, np.float32))
