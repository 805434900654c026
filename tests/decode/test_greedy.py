# Greedy decode takes the argmax of the logits: the same tokens as argmax(softmax), without an exp and a sum over the vocab.
import numpy as np, pytest
from tinygrad import Tensor
from tinygrad.nn.state import get_parameters
from tinygrad.uop.ops import Ops
from decode_helpers import PROMPTS, decode_step, logits

def softmax(x:np.ndarray) -> np.ndarray: return np.exp(x - x.max()) / np.exp(x - x.max()).sum()

@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_token_is_the_argmax_of_the_softmax(models, prompt):
  model, _ = models
  assert int(model(Tensor([prompt], dtype="int32"), 0).item()) == int(np.argmax(softmax(logits(model, prompt))))

def test_decode_step_has_no_exp_over_the_vocab(models):
  model, _ = models
  vocab, blocks = model.output.weight.shape[0], {p.uop.buffer for p in get_parameters(model.blk)}
  # the head's kernels: a block's matvec may have as many outputs as the vocab (the tiny model's gate and up, 2 x 512)
  over_vocab = [ei.ast for ei in decode_step(model) if any(u.op is Ops.RANGE and u.src[0].arg == vocab for u in ei.ast.toposort())
                and not any(b in blocks for b in ei.bufs)]
  assert over_vocab, "the lm_head and argmax reduce over the vocab"
  assert not [a for a in over_vocab if any(u.op is Ops.EXP2 for u in a.toposort())]
