# A reduce to one value (RMSNorm's sum of squares in decode) has no other parallelism: the heuristic spreads it over 256 threads, not
# the 16 that each walked 1/16 of the row serially.
from tinygrad.codegen import get_program
from tinygrad.helpers import prod
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.uop.ops import Ops
from decode_helpers import decode_step

def test_reduces_to_one_value_spread_over_256_threads(models):
  model, _ = models
  one_value = [ei.ast for ei in decode_step(model) if ei.bufs[0].size == 1 and any(u.op is Ops.REDUCE for u in ei.ast.toposort())]
  assert len(one_value) >= 2 * len(model.blk) + 1  # each block's two RMSNorm sums and the output norm's, the argmax's second stages
  assert all(prod(get_program(a, NVRenderer("sm_87")).local_size) == 256 for a in one_value)
