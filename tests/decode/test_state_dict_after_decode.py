# A model's state dict after it has decoded (patch "nn/state: get_state_dict does not walk into a TinyJit"): the decode JIT's captured
# kernels hold buffers whose allocator and device get_state_dict walked into, a RecursionError once generate had read a window of tokens.
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer
from tinygrad.nn.state import get_state_dict

def test_state_dict_after_generate(tiny_gguf):
  model = Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, quantized=True)[0]
  before = set(get_state_dict(model))
  gen = model.generate([1, 2, 3, 4, 5], ahead=2)
  for _ in range(4): next(gen)
  assert model.forward_jit.captured is not None
  # the weights, and what decoding made: a KV cache a block, the tokens' buffer and nn.Embedding's arange
  assert set(get_state_dict(model)) == before | {f"blk.{i}.cache_kv" for i in range(len(model.blk))} | {"sampled", "token_embd.arange"}
