# Decode (T=1) attends over the KV cache up to the next multiple of 16 positions with the tail masked, so the heuristic splits the
# attention reduces over 16 threads instead of running start_pos+1 steps serially (the softmax max and sum in 8 threads for all heads).
import numpy as np, pytest
from tinygrad import Tensor, UOp
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import OptOps
from tinygrad.engine import realize
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.uop.ops import Ops
from decode_helpers import PROMPTS, Capture, logits

def start_pos(model, pos:int) -> UOp: return UOp.variable("start_pos", 1, model.blk[0].max_context - 1).bind(pos)

def decode_logits(model, prompt:list[int], token:int, stale:list[int]) -> np.ndarray:
  """logits of `token` decoded at symbolic start_pos after `prompt`, the cache beyond it holding the K/V of the longer `stale` prompt"""
  for p in (stale, prompt):
    x = model.token_embd(Tensor([p], dtype="int32"))
    for block in model.blk: x = block(x, 0).realize()
  x = model.token_embd(Tensor([[token]], dtype="int32"))
  for block in model.blk: x = block(x, start_pos(model, len(prompt)))
  return model.output(model.output_norm(x))[0, -1].float().numpy()

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_decode_matches_the_full_forward(models, quantized):
  model = models[quantized]
  for prompt in PROMPTS:
    want, got = logits(model, prompt + [5]), decode_logits(model, prompt, 5, stale=list(range(700, 712)))
    np.testing.assert_allclose(got, want, atol=2e-3 * np.abs(want).max())

def test_decode_attention_reduces_are_split_across_threads(models):
  model, _ = models
  model(Tensor([PROMPTS[0]], dtype="int32"), 0).realize()
  realize.capturing.append(cap:=Capture())
  try: model.forward(Tensor([[5]], dtype="int32"), start_pos(model, len(PROMPTS[0]))).realize()
  finally: realize.capturing.remove(cap)
  attn = [ei.ast for ei in cap.items if ei.ast.op is Ops.SINK and any("scaled_dot_product_attention" in str(m) for m in ei.metadata)
          and any(u.op is Ops.REDUCE for u in ei.ast.toposort())]
  assert len(attn) == 4 * len(model.blk)  # scores, softmax max, softmax sum, weighted sum of v
  assert all({OptOps.GROUP, OptOps.GROUPTOP} & {o.op for o in get_program(a, NVRenderer("sm_87")).applied_opts} for a in attn)
