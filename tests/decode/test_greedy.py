# Greedy decode takes the argmax of the logits: the same tokens as argmax(softmax), without an exp and a sum over the vocab.
import numpy as np, pytest
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer
from tinygrad.engine import realize
from tinygrad.uop.ops import Ops

class Capture:
  def __init__(self): self.items: list[realize.ExecItem] = []
  def add(self, ei:realize.ExecItem): self.items.append(ei)

@pytest.fixture(scope="module")
def tiny(tiny_gguf): return Transformer.from_gguf(Tensor(tiny_gguf), max_context=32)

def logits(model:Transformer, tokens:list[int]) -> np.ndarray:
  x = model.token_embd(Tensor([tokens], dtype="int32"))
  for block in model.blk: x = block(x, 0)
  return model.output(model.output_norm(x))[0, -1].float().numpy()

def softmax(x:np.ndarray) -> np.ndarray: return np.exp(x - x.max()) / np.exp(x - x.max()).sum()

@pytest.mark.parametrize("prompt", [[300, 301], [7], [99, 500, 12, 640]])
def test_greedy_token_is_the_argmax_of_the_softmax(tiny, prompt):
  model, kv = tiny
  prompt = [kv["tokenizer.ggml.bos_token_id"]] + prompt
  assert int(model(Tensor([prompt], dtype="int32"), 0).item()) == int(np.argmax(softmax(logits(model, prompt))))
  for block in model.blk: del block.cache_kv  # the next prompt starts a fresh cache

def test_decode_step_has_no_exp_over_the_vocab(tiny):
  model, kv = tiny
  model(Tensor([[kv["tokenizer.ggml.bos_token_id"], 300]], dtype="int32"), 0).realize()
  realize.capturing.append(cap:=Capture())
  try: model(Tensor([[301]], dtype="int32"), 2).realize()
  finally: realize.capturing.remove(cap)
  vocab = len(kv["tokenizer.ggml.tokens"])
  over_vocab = [ei.ast for ei in cap.items if ei.ast.op is Ops.SINK and any(u.op is Ops.RANGE and u.src[0].arg == vocab for u in ei.ast.toposort())]
  assert over_vocab, "the lm_head and argmax reduce over the vocab"
  assert not [a for a in over_vocab if any(u.op is Ops.EXP2 for u in a.toposort())]
