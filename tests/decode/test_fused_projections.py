# Decode pays per kernel: q, k and v are one projection, and so are the ffn's gate and up. The scheduler realizes a reduce before it
# assigns it, so k and v projected on their own reached the KV cache through a copy kernel; gate and up were two matvecs of one input.
import numpy as np, pytest
from tinygrad import Tensor, nn
from tinygrad.apps.llm import QuantLinear, Transformer, TransformerBlock
from tinygrad.uop.ops import Ops
from decode_helpers import PROMPTS, decode_step, logits

def weight(p) -> object: return (p.weight if isinstance(p, nn.Linear) else p.blocks).uop.buffer
def readers(step:list, blk:TransformerBlock, *names:str) -> int:
  """kernels of step that read any of the weights of blk's projections of these names (fused or not)"""
  ws = {weight(getattr(blk, n)) for n in names if hasattr(blk, n)}
  return sum(any(b in ws for b in ei.bufs) for ei in step)

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_one_kernel_projects_q_k_v_and_one_ropes_k_into_the_cache(models, quantized):
  model = models[quantized]
  step = decode_step(model)
  for blk in model.blk:
    assert readers(step, blk, "attn_qkv", "attn_q", "attn_k", "attn_v") == 1
    writes = [ei.ast for ei in step if ei.bufs[0] is blk.cache_kv.uop.buffer]
    assert len(writes) == 1 and any(u.op is Ops.MUL for u in writes[0].toposort())  # the write computes k's rope, it is not a copy

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_one_kernel_projects_gate_and_up(models, quantized):
  model = models[quantized]
  step = decode_step(model)
  assert all(readers(step, blk, "ffn_gate_up", "ffn_gate", "ffn_up") == 1 for blk in model.blk)

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_logits_match_the_unfused_projections(tiny_gguf, models, quantized, monkeypatch):
  monkeypatch.setattr(TransformerBlock, "fuse_projections", lambda self: None)
  unfused = Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, quantized=quantized)[0]
  assert hasattr(unfused.blk[0], "attn_q") and hasattr(unfused.blk[0], "ffn_gate")
  for prompt in PROMPTS:
    want = logits(unfused, prompt)
    np.testing.assert_allclose(logits(models[quantized], prompt), want, atol=1e-3 * np.abs(want).max())

def test_projections_stored_differently_stay_apart():
  blk = TransformerBlock(256, 512, 4, 2, 1e-5, 64, 10000.0, max_context=32)
  blk.attn_q, blk.attn_k, blk.attn_v = QuantLinear(256, 256, 12), QuantLinear(256, 128, 12), QuantLinear(256, 128, 14)  # a Q4_K_M's v in use_more_bits' blocks is Q6_K
  blk.ffn_gate, blk.ffn_up = QuantLinear(256, 512, 12), QuantLinear(256, 512, 14)
  blk.fuse_projections()
  assert not hasattr(blk, "attn_qkv") and not hasattr(blk, "ffn_gate_up")
  assert all(hasattr(blk, n) for n in ("attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up"))
