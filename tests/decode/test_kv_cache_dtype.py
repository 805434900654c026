# The KV cache takes the dtype of the model's weights (fp16 as from_gguf loads them), not that of k, which is float32 after the
# float32 RoPE table: decode reads half the cache bytes. The cast happens in the kernel that writes the cache; attention stays float32.
import numpy as np, pytest
from tinygrad import Tensor, dtypes
from tinygrad.apps.llm import Transformer, TransformerBlock
from decode_helpers import PROMPTS, decode_step, logits
from test_decode_attention import decode_logits

def load(gguf, quantized:bool, cache_dtype=None) -> Transformer:
  """the tiny model; with cache_dtype, its KV caches made beforehand in that dtype (float32: the cache as it was before)"""
  model = Transformer.from_gguf(Tensor(gguf), max_context=32, quantized=quantized)[0]
  for b in model.blk if cache_dtype else ():
    b.cache_kv = Tensor.zeros(2, 1, b.n_kv_heads, b.max_context, b.head_dim, dtype=cache_dtype).contiguous().realize()
  return model

@pytest.fixture(scope="module", params=[False, True], ids=["fp16", "q6_k"])
def pair(request, tiny_gguf) -> tuple[Transformer, Transformer]:
  """the model as loaded, and the same with float32 caches; each test writes the cache positions it reads"""
  return load(tiny_gguf, request.param), load(tiny_gguf, request.param, dtypes.float32)

def test_the_cache_of_an_fp16_model_is_fp16_and_written_by_the_same_kernels(pair):
  half, f32 = pair
  step, step_f32 = decode_step(half), decode_step(f32)
  assert all(b.cache_kv.dtype == dtypes.half for b in half.blk)
  # no kernel of its own for the cast: k's rope and v are cast to half where they are written
  assert len(step) == len(step_f32)
  for b in half.blk: assert len([ei for ei in step if ei.bufs[0] is b.cache_kv.uop.buffer]) == 1

def test_a_float32_model_keeps_a_float32_cache():
  blk = TransformerBlock(256, 512, 4, 2, 1e-5, 64, 10000.0, max_context=32)
  blk(Tensor.randn(1, 3, 256), 0).realize()
  assert blk.cache_kv.dtype == dtypes.float32

# fp16 keeps 11 significant bits of each cached k and v: the tiny model's logits move by at most 1.1e-4 of the largest (bfloat16's 8 bits
# would move them about 8 times as far)
TOL = 5e-4

def test_decode_logits_match_the_float32_cache(pair):
  # decode and the full forward each against itself over a float32 cache: a prompt's matmuls take fp16 inputs (test_prompt.py), which moves
  # a full forward's logits further from decode's than the cache dtype does (test_decode_attention.py bounds that)
  half, f32 = pair
  for prompt in PROMPTS:
    want = decode_logits(f32, prompt, 5, stale=list(range(700, 712)))
    got = decode_logits(half, prompt, 5, stale=list(range(700, 712)))
    np.testing.assert_allclose(got, want, atol=TOL * np.abs(want).max())
    want = logits(f32, prompt + [5])
    np.testing.assert_allclose(logits(half, prompt + [5]), want, atol=TOL * np.abs(want).max())

def test_greedy_tokens_are_those_of_the_float32_cache(pair):
  half, f32 = pair
  def tokens(model:Transformer) -> list[int]:
    gen = model.generate(list(PROMPTS[1]))
    return [next(gen) for _ in range(12)]
  assert tokens(half) == tokens(f32)
