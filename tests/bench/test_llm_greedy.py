import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.uop.ops import Ops
from tinygrad.apps.llm import Transformer

VOCAB = 1000  # a size no other buffer of the model has

def tiny_model() -> Transformer:
  Tensor.manual_seed(0)
  m = Transformer(num_blocks=1, dim=64, hidden_dim=128, n_heads=2, n_kv_heads=1, norm_eps=1e-5, vocab_size=VOCAB, head_dim=32,
                  rope_theta=500000.0, max_context=16)
  m.output.weight.replace(Tensor.randn(VOCAB, 64) * 0.1); m.token_embd.weight.replace(Tensor.randn(VOCAB, 64))
  return m

def test_greedy_step_has_no_exp_over_the_vocab():
  out = tiny_model().forward(Tensor([[5, 7, 11]], dtype=dtypes.int32), 0)
  vocab_kernels = [ei.ast for ei in out.schedule() if any(b is not None and b.size == VOCAB for b in ei.bufs)]
  assert vocab_kernels, "the head's kernels were not found"
  assert not any(u.op is Ops.EXP2 for ast in vocab_kernels for u in ast.toposort()), "decode pays for a softmax over the vocabulary"

def test_greedy_token_is_the_argmax_of_the_logits():
  m, toks = tiny_model(), Tensor([[5, 7, 11]], dtype=dtypes.int32)
  x = m.token_embd(toks)
  for blk in m.blk: x = blk(x, 0)
  logits = m.output(m.output_norm(x))[:, -1, :].numpy()
  for blk in m.blk: del blk.cache_kv
  assert m.forward(toks, 0).item() == int(np.argmax(logits))
