# A decode step's greedy token as one kernel (patch "apps/llm: a decode step's argmax and token write in one kernel"), run on the emulated
# Orin (the PTX interpreter, launched like NV): the first index of the largest logit, as Tensor.argmax gives it, into the step's output and
# into `sampled` at start_pos+1. Vocabularies under, over and no multiple of the workgroup's 1024 threads, and ties.
import numpy as np, pytest
import orin_emu.ptx.device  # noqa: F401  registers EMU
from tinygrad import Tensor, UOp, dtypes
from tinygrad.apps.llm import argmax_kernel

@pytest.mark.parametrize("V,ties", [(1000, []), (5000, [17, 4000]), (128256, [128255, 99999]), (2048, [2047, 1024, 3])])
def test_first_index_of_the_max(V, ties):
  logits = np.random.default_rng(V).standard_normal(V).astype(np.float32)
  logits[ties] = 10.0
  sampled = Tensor.full((1, 33), -1, dtype=dtypes.int32, device="EMU").contiguous().realize()
  tok = Tensor.empty(1, 1, dtype=dtypes.int32, device="EMU").custom_kernel(sampled, Tensor(logits, device="EMU").reshape(1, -1),
                                                                             UOp.variable("start_pos", 0, 31).bind(7), fxn=argmax_kernel)[0]
  want = int(Tensor(logits).argmax().item())
  assert want == (min(ties) if ties else int(np.argmax(logits)))
  assert tok.item() == want
  np.testing.assert_equal(sampled.numpy()[0], [-1] * 8 + [want] + [-1] * 24)
