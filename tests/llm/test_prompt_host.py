# a prompt's host work in tinygrad/llm/model.py: what every block of one call shares is built once (a first token waits for all of it)
from tinygrad import Tensor
from tinygrad.llm.model import Transformer

def test_a_prompts_causal_mask_is_built_once(tiny_gguf, monkeypatch):
  m, calls, real = Transformer.from_gguf(tiny_gguf, max_context=16)[0], [], Tensor.triu
  monkeypatch.setattr(Tensor, "triu", lambda self, *a, **kw: calls.append(self.shape) or real(self, *a, **kw))
  tok = next(m.generate([0, 5, 9, 4]))
  assert len(calls) == 1 and len(m.blk) == 2 and 0 <= tok < 320

def test_loading_takes_no_random_numbers(tiny_gguf):
  # the weights the model is built with (random draws) are all the file's after loading: the draws are taken back, so the RNG stream is
  # where it was and the first sample does not schedule a chain of counter updates, one a weight
  import numpy as np
  Tensor.manual_seed(3)
  want = Tensor.rand(4).numpy()
  Tensor.manual_seed(3)
  Transformer.from_gguf(tiny_gguf, max_context=16)
  np.testing.assert_array_equal(Tensor.rand(4).numpy(), want)

def test_norm_weights_are_buffers_from_load_on(tiny_gguf):
  # every token reads them: a cast of the file's bytes left lazy would be a copy in the first prompt's schedule and again in the first
  # decode step's
  from tinygrad import nn
  m = Transformer.from_gguf(tiny_gguf, max_context=16)[0]
  ws = [n.weight for o in (m, *m.blk) for n in vars(o).values() if isinstance(n, nn.RMSNorm)]
  assert len(ws) == 5 and all(w.uop.is_realized for w in ws)
