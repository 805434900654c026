# q, k and v are one projection: decode pays per kernel, and the scheduler realizes a reduce before assigning it, so k and v
# projected on their own reached the KV cache through a copy kernel. Per block, one kernel now reads the three weights and one
# (k's rope) writes the cache.
import pytest
from tinygrad import nn
from tinygrad.apps.llm import QuantLinear, TransformerBlock
from tinygrad.uop.ops import Ops
from decode_helpers import decode_step

def weight(p) -> object: return (p.weight if isinstance(p, nn.Linear) else p.blocks).uop.buffer

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_one_kernel_projects_q_k_v_and_one_ropes_k_into_the_cache(models, quantized):
  model = models[quantized]
  step = decode_step(model)
  for blk in model.blk:
    projs = {weight(getattr(blk, n)) for n in ("attn_qkv", "attn_q", "attn_k", "attn_v") if hasattr(blk, n)}
    assert sum(any(b in projs for b in ei.bufs) for ei in step) == 1
    writes = [ei.ast for ei in step if ei.bufs[0] is blk.cache_kv.uop.buffer]
    assert len(writes) == 1 and any(u.op is Ops.MUL for u in writes[0].toposort())  # the write computes k's rope, it is not a copy

def test_projections_stored_differently_stay_apart():
  blk = TransformerBlock(256, 512, 4, 2, 1e-5, 64, 10000.0, max_context=32)
  blk.attn_q, blk.attn_k, blk.attn_v = QuantLinear(256, 256, 12), QuantLinear(256, 128, 12), QuantLinear(256, 128, 14)  # Q4_K_M's v is Q6_K
  blk.fuse_projections()
  assert not hasattr(blk, "attn_qkv") and all(hasattr(blk, n) for n in ("attn_q", "attn_k", "attn_v"))
