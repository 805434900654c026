# a prompt's attention in tinygrad/llm/model.py where its keys' count is symbolic (a chat's later turn) or there are no tensor cores
from tinygrad import Tensor
from tinygrad.uop.ops import Ops
from tinygrad.llm.model import Transformer

def test_a_later_turns_attention_takes_q_rotated_once(tiny_gguf, monkeypatch):
  # q in a buffer of its own: RoPE in the scores' loads would be done again for every key. Decode steps (one token) are left as they are
  m, qs, sdpa = Transformer.from_gguf(tiny_gguf, max_context=64)[0], [], Tensor.scaled_dot_product_attention
  def spy(q:Tensor, *a, **kw) -> Tensor:
    if not isinstance(T:=q.shape[2], int) or T > 1: qs.append(q.uop.op)
    return sdpa(q, *a, **kw)
  monkeypatch.setattr(Tensor, "scaled_dot_product_attention", spy)
  toks = [1, 5, 9, 4, 7, 2, 8, 3]
  toks.append(next(m.generate(list(toks))))
  n = len(qs)
  assert 0 <= next(m.generate(toks + [11, 12, 13, 14])) < m.output.weight.shape[0] and len(m._cached_tokens) == 13
  assert n and len(qs) > n and all(op is Ops.CONTIGUOUS for op in qs)
