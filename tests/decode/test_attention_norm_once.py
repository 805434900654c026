# A decode step reduces each block's attn_norm and gathers the token embedding once: q is realized with the KV cache update, the
# embedding is contiguous, so nothing is recomputed after that realize.
import pytest
from tinygrad.uop.ops import Ops
from decode_helpers import decode_step

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_no_reduce_to_one_value_runs_twice_on_the_same_inputs(models, quantized):
  model = models[quantized]
  # per token: each block's two RMSNorm sums of squares, the output norm's, and the argmax's two reduces, each from its own inputs
  scalars = [tuple(id(b) for b in ei.bufs[1:]) for ei in decode_step(model) if ei.bufs[0].size == 1 and
             any(u.op is Ops.REDUCE for u in ei.ast.toposort())]
  assert len(scalars) == 2 * len(model.blk) + 1 + 2 and len(set(scalars)) == len(scalars)

def test_the_embedding_is_gathered_once(models):
  _, q = models  # quantized: the output projection reads its own blocks, so only the embedding reads token_embd.weight
  assert sum(any(b is q.token_embd.weight.uop.buffer for b in ei.bufs) for ei in decode_step(q)) == 1
