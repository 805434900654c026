# The llama.cpp quantization types beyond tinygrad 0.12.0's (Q4_0, Q4_1, Q8_0, Q4_K, Q6_K, MXFP4) dequantize at load exactly as gguf-py's numpy
# dequantizer does. Q4_K_M/Q5_K_M files of small models carry Q5_0/Q5_1 for tensors whose rows are not a multiple of 256, Q2_K/Q3_K files
# Q2_K/Q3_K, Q5_K_M files Q5_K.
import numpy as np, pytest, gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import _type_traits
from tinygrad import Tensor, nn
from tinygrad.nn.state import GGML_BLOCKS, ggml_data_to_tensor

# byte offsets of each block's float16 scales, set to finite values (random bytes would make some NaN or inf)
NEW = {T.Q5_0: [0], T.Q5_1: [0, 2], T.Q2_K: [80, 82], T.Q3_K: [108], T.Q5_K: [0, 2]}
F16_FIELDS = {**NEW, T.Q4_0: [0], T.Q4_1: [0, 2], T.Q8_0: [0], T.Q4_K: [0, 2], T.Q6_K: [208]}   # and 0.12.0's own, Q4_K sharing Q5_K's code

def random_blocks(qtype:T, n:int, seed:int=0) -> np.ndarray:
  rng = np.random.default_rng(seed)
  blocks = rng.integers(0, 256, (n, GGML_BLOCKS[qtype][1]), dtype=np.uint8)
  for o in F16_FIELDS.get(qtype, []): blocks[:, o:o+2] = rng.uniform(-2, 2, (n, 1)).astype(np.float16).view(np.uint8)
  return blocks

@pytest.mark.parametrize("qtype", list(F16_FIELDS), ids=lambda t: t.name)
def test_dequantizes_like_gguf_py(qtype):
  blocks = random_blocks(qtype, 64)
  assert gguf.GGML_QUANT_SIZES[qtype] == GGML_BLOCKS[qtype]
  got = ggml_data_to_tensor(Tensor(blocks.reshape(-1)), blocks.shape[0] * GGML_BLOCKS[qtype][0], qtype).numpy()
  np.testing.assert_array_equal(got.reshape(blocks.shape[0], -1), _type_traits[qtype].dequantize_blocks(blocks.copy()))

def test_q8_k_is_d_times_qs():
  # gguf-py has no Q8_K dequantizer: ggml-common.h block_q8_K is float d, int8 qs[256], int16 bsums[16] (sums for dot products, unused here)
  blocks = random_blocks(T.Q8_K, 16)
  blocks[:, :4] = np.random.default_rng(1).uniform(-1, 1, (16, 1)).astype(np.float32).view(np.uint8)
  got = ggml_data_to_tensor(Tensor(blocks.reshape(-1)), 16 * 256, T.Q8_K).numpy().reshape(16, 256)
  np.testing.assert_array_equal(got, blocks[:, :4].view(np.float32) * blocks[:, 4:260].view(np.int8).astype(np.float32))

@pytest.mark.parametrize("qtype", [*NEW, T.Q8_K], ids=lambda t: t.name)
def test_gguf_load_reads_the_type(tmp_path, qtype):
  nv, nb = GGML_BLOCKS[qtype]
  blocks = random_blocks(qtype, 6).reshape(3, 2 * nb)   # 3 rows of 2 blocks
  w = gguf.GGUFWriter(path := tmp_path / "t.gguf", "llama")
  w.add_tensor("w", blocks, raw_dtype=qtype)   # the byte shape: (3, 2 blocks of nb bytes)
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  _, sd = nn.state.gguf_load(Tensor(path).to(None))
  assert sd["w"].shape == (3, 2 * nv)
  np.testing.assert_array_equal(sd["w"].numpy().reshape(6, nv), ggml_data_to_tensor(Tensor(blocks.reshape(-1)), 6 * nv, qtype).numpy().reshape(6, nv))
