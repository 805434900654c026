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

def test_an_mla_models_later_turn_takes_one_jit_a_length(monkeypatch):
  # MLA's attention reads its keys to start_pos+T whatever start_pos's bound: a JIT a bucket of keys would gain it nothing
  from tinygrad.llm import model
  monkeypatch.setattr(model, "has_tensor_cores", lambda device: True)
  m = Transformer(model.TransformerConfig(num_blocks=1, dim=64, hidden_dim=128, n_heads=4, n_kv_heads=1, norm_eps=1e-5, vocab_size=100,
                                          head_dim=16, rope_theta=10000.0, rope_dim=8, max_context=128, kv_lora_rank=16, v_head_dim=8))
  toks = list(range(1, 9))
  toks.append(next(m.generate(list(toks))))
  assert 0 <= next(m.generate(toks + list(range(20, 60)))) < 100
  # 8 tokens from an empty cache padded to 32, then 40 after 8 padded to 64, start_pos bound as decode steps bind it
  assert set(m.prompt_jits) == {(32, 0), (64, 127)}

def test_a_later_turns_masked_keys_read_zeros_not_stale_memory(tiny_gguf, monkeypatch):
  # the keys a later turn's bucket reads past its tokens are masked, and a masked score times a NaN is NaN: the KV cache starts zeroed,
  # whatever its memory held (the allocator hands back a freed buffer as it was)
  from tinygrad import dtypes
  from tinygrad.llm import model
  monkeypatch.setattr(model, "has_tensor_cores", lambda device: True)
  def turns(poison:bool) -> tuple[int, int]:
    m = Transformer.from_gguf(tiny_gguf, max_context=64)[0]
    c = m.blk[0].config
    for _ in m.blk if poison else ():
      Tensor.full((2, 1, c.n_kv_heads, 64, c.head_dim), float("nan"), dtype=dtypes.default_float).contiguous().realize()
    toks = [1, 5, 9, 4, 7, 2, 8, 3]
    toks.append(next(m.generate(list(toks))))
    return toks[-1], next(m.generate(toks + [11, 12, 13, 14]))
  assert turns(poison=True) == turns(poison=False)
