# helpers of the tests of tinygrad/llm, on the path from conftest.py
import numpy as np

def random_blocks(rng:np.random.Generator, n:int, ggml_type:int) -> np.ndarray:
  """n random ggml blocks (uint8) of Q8_0, Q4_K or Q6_K with finite fp16 scales of about the size trained weights have"""
  nb = {8: 34, 12: 144, 14: 210}[ggml_type]
  b = rng.integers(0, 256, (n, nb), dtype=np.uint8)
  d = lambda lo: np.float16(rng.uniform(lo, 1, n) * 1e-3).view(np.uint8).reshape(-1, 2)
  if ggml_type == 14: b[:, 208:210] = d(-1)
  else: b[:, 0:2] = d(-1)
  if ggml_type == 12: b[:, 2:4] = d(0)
  return b
