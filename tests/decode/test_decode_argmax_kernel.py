# A decode step's greedy token (patches "apps/llm: a decode step's argmax and token write in one kernel" and "apps/llm: decode's custom
# kernels keep their loads in flight": 128 workgroups' largest keys, then the largest of those), run on the emulated Orin (the PTX
# interpreter, launched like NV): the first index of the largest logit, as Tensor.argmax gives it, into the step's output and into
# `sampled` at start_pos+1. Value idx is read by workgroup idx // 256 % 128, thread idx % 256. Vocabularies under, over and no multiple
# of the 128 x 256 threads, and over 4 x 128 x 256 (a thread's loop of 4 values an iteration); ties across workgroups, within one (5, 100)
# and within a thread (7, 32775); negative logits (whose float bits order the other way as integers), and -0.0 tied with +0.0.
import numpy as np, pytest
import orin_emu.ptx.device  # noqa: F401  registers EMU
from tinygrad import Tensor, UOp, dtypes
from tinygrad.apps.llm import greedy_token

@pytest.mark.parametrize("V,ties,shift", [(1000, [], 0), (5000, [17, 4000], 0), (128256, [128255, 99999], 0), (2048, [2047, 1024, 3], 0),
                                          (3000, [2999, 300], -20.0), (40000, [], -5.0), (40000, [100, 5], 0), (40000, [32775, 7], 0),
                                          (151936, [151000, 140000], 0)])
def test_first_index_of_the_max(V, ties, shift):
  logits = np.random.default_rng(V).standard_normal(V).astype(np.float32) + shift
  logits[ties] = 10.0 + shift
  sampled = Tensor.full((1, 33), -1, dtype=dtypes.int32, device="EMU").contiguous().realize()
  tok = greedy_token(Tensor(logits, device="EMU").reshape(1, -1), sampled, UOp.variable("start_pos", 0, 31).bind(7))
  want = int(Tensor(logits).argmax().item())
  assert want == (min(ties) if ties else int(np.argmax(logits)))
  assert tok.item() == want
  np.testing.assert_equal(sampled.numpy()[0], [-1] * 8 + [want] + [-1] * 24)

def test_minus_zero_ties_plus_zero():
  logits = -np.abs(np.random.default_rng(0).standard_normal(1000).astype(np.float32)) - 1
  logits[10], logits[20] = -0.0, 0.0
  sampled = Tensor.zeros(1, 33, dtype=dtypes.int32, device="EMU").contiguous().realize()
  assert greedy_token(Tensor(logits, device="EMU").reshape(1, -1), sampled, UOp.variable("start_pos", 0, 31).bind(7)).item() == 10
