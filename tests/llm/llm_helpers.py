# helpers of the tests of tinygrad/llm, on the path from conftest.py
import numpy as np

# ggml_type: (bytes a block, byte offsets of its fp16 scales, of its fp16 mins)
LAYOUTS = {2: (18, [0], []), 3: (20, [0], [2]), 6: (22, [0], []), 7: (24, [0], [2]), 8: (34, [0], []), 10: (84, [80], [82]),
           11: (110, [108], []), 12: (144, [0], [2]), 13: (176, [0], [2]), 14: (210, [208], [])}

def random_blocks(rng:np.random.Generator, n:int, ggml_type:int) -> np.ndarray:
  """n random ggml blocks (uint8) of ggml_type with finite fp16 scales of about the size trained weights have"""
  nb, scales, mins = LAYOUTS[ggml_type]
  b = rng.integers(0, 256, (n, nb), dtype=np.uint8)
  for o, lo in [(o, -1) for o in scales] + [(o, 0) for o in mins]: b[:, o:o+2] = np.float16(rng.uniform(lo, 1, n) * 1e-3).view(np.uint8).reshape(-1, 2)
  return b
