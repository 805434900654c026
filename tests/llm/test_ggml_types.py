# tinygrad.llm.gguf dequantizes every llama.cpp block type it lists exactly as gguf-py's numpy dequantizer does, Q2_K and Q3_K (the
# types of llama.cpp's Q2_K and Q3_K_S/M/L files) among them, and gguf_load reads those from a file.
import numpy as np, pytest, gguf
from gguf import GGMLQuantizationType as T
from tinygrad import Tensor
from tinygrad.llm.gguf import _GGML_QUANT, ggml_data_to_tensor, gguf_load

# byte offsets of each block's float16 scales, set to finite values (random bytes would make some NaN or inf)
F16_FIELDS = {T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0], T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2],
              T.Q5_K: [0, 2], T.Q6_K: [208], T.IQ3_XXS: [0], T.IQ3_S: [0], T.IQ2_S: [0], T.IQ4_XS: [0]}

def random_blocks(qtype:T, n:int, seed:int=0) -> np.ndarray:
  rng = np.random.default_rng(seed)
  blocks = rng.integers(0, 256, (n, gguf.GGML_QUANT_SIZES[qtype][1]), dtype=np.uint8)
  for o in F16_FIELDS[qtype]: blocks[:, o:o+2] = rng.uniform(-2, 2, (n, 1)).astype(np.float16).view(np.uint8)
  return blocks

@pytest.mark.parametrize("qtype", list(F16_FIELDS), ids=lambda t: t.name)
def test_dequantizes_like_gguf_py(qtype):
  assert _GGML_QUANT.get(qtype) == gguf.GGML_QUANT_SIZES[qtype]
  blocks, nv = random_blocks(qtype, 64), gguf.GGML_QUANT_SIZES[qtype][0]
  got = ggml_data_to_tensor(Tensor(blocks.reshape(-1)), 64 * nv, qtype).numpy().reshape(64, nv)
  np.testing.assert_array_equal(got, gguf.quants.dequantize(blocks, qtype).reshape(64, nv))

@pytest.mark.parametrize("qtype", [T.Q2_K, T.Q3_K], ids=lambda t: t.name)
def test_gguf_load_reads_the_type(tmp_path, qtype):
  nv, nb = gguf.GGML_QUANT_SIZES[qtype]
  blocks = random_blocks(qtype, 6).reshape(3, 2 * nb)   # 3 rows of 2 blocks
  w = gguf.GGUFWriter(path := tmp_path / "t.gguf", "llama")
  w.add_tensor("w", blocks, raw_dtype=qtype)
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  _, sd = gguf_load(path)
  np.testing.assert_array_equal(sd["w"].numpy(), gguf.quants.dequantize(blocks, qtype))

@pytest.mark.parametrize("qtype", [T.F32, T.F16], ids=lambda t: t.name)
def test_native_like_gguf_py(qtype):
  raw = np.random.default_rng(0).uniform(-2, 2, 64).astype(np.float16 if qtype == T.F16 else np.float32).view(np.uint8)
  np.testing.assert_array_equal(ggml_data_to_tensor(Tensor(raw), 64, qtype).numpy(), gguf.quants.dequantize(raw, qtype).reshape(-1))

def test_type_names_are_gguf_pys():
  from tinygrad.llm.gguf import GGML_TYPE_NAMES
  assert {t.value: t.name for t in T} == {k: v for k, v in GGML_TYPE_NAMES.items() if k in T._value2member_map_}
