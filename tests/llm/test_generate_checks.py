# tinygrad/llm/model.py: Transformer.generate() and from_gguf() refuse what they cannot answer, and generators on one model keep to their own tokens
import pytest
from tinygrad import Tensor, UOp
from tinygrad.device import Buffer
from tinygrad.llm.model import Transformer

@pytest.fixture(scope="module")
def model(tiny_gguf) -> Transformer: return Transformer.from_gguf(tiny_gguf, max_context=16)[0]   # vocabulary 320, context length 64

@pytest.mark.parametrize("max_context, msg", [(0, "max_context 0 is outside 1..64"), (-5, "max_context -5 is outside 1..64"),
                                              (65, "max_context 65 is outside 1..64")])
def test_from_gguf_max_context(tiny_gguf, max_context, msg):
  with pytest.raises(ValueError, match=msg): Transformer.from_gguf(tiny_gguf, max_context=max_context)

@pytest.mark.parametrize("tokens, msg", [([], "the prompt is empty"), ([5]*16, "the prompt has 16 tokens, max_context 16 leaves no room"),
                                         ([5, 320], "token id 320 is outside the vocabulary 0..319"), ([-1, 5], "token id -1 is outside")])
def test_generate_refuses(model, tokens, msg):
  with pytest.raises(ValueError, match=msg): model.generate(tokens)

def test_prompt_one_below_max_context_gives_a_token(model):
  assert len(list(model.generate([5]*15))) == 1

def test_interleaved_generators(model):
  alone = [[t for t, _ in zip(model.generate(list(p)), range(5))] for p in ([0, 5, 9], [0, 7, 3, 2])]
  a, b = model.generate([0, 5, 9]), model.generate([0, 7, 3, 2])
  assert [(next(a), next(b)) for _ in range(5)] == list(zip(*alone))

def test_queued_steps_keep_the_tokens(tiny_gguf, model):
  # each token again as the one token of a generate() over the tokens before it, read before the next one is asked for
  toks, ref = list(model.generate([0, 5, 9])), Transformer.from_gguf(tiny_gguf, max_context=16)[0]
  assert toks == [next(ref.generate([0, 5, 9] + toks[:i])) for i in range(len(toks))]

def test_tokens_read_a_copy_for_several_steps(model, monkeypatch):
  # reading a token waits for the whole device: 13 tokens take the prompt's read and 5 of decode steps queued 1, 1, 2, 4 and 4 at a time
  reads, read = [], Buffer.as_memoryview
  def spy(buf:Buffer, *args, **kwargs):
    if not (args or kwargs): reads.append(buf.size)   # a copy out, not a view of the memory for a copy
    return read(buf, *args, **kwargs)
  monkeypatch.setattr(Buffer, "as_memoryview", spy)
  assert len(list(model.generate([0, 5, 9]))) == 13 and reads == [1, 1, 1, 2, 4, 4]

def test_decode_steps_copy_no_input(model, monkeypatch):
  # a decode step reads the token the step before left in `sampled`: a JIT input the JIT itself wrote is copied before every replay
  from tinygrad.engine import jit
  copies, copy = [], jit._copy_input
  monkeypatch.setattr(jit, "_copy_input", lambda u: copies.append(u) or copy(u))
  assert len(list(model.generate([0, 5, 9]))) == 13 and copies == []

def test_decode_step_takes_the_callers_token(tiny_gguf, model):
  # a token passed to the model, not the one its last call returned, is the one decoded
  m, temp, v = Transformer.from_gguf(tiny_gguf, max_context=16)[0], Tensor([0.0]), UOp.variable("start_pos", 0, 15)
  out = m(Tensor([[0, 5, 9]], dtype="int32"), v.bind(0), temp)
  mine = [(out.item() + 1 + i) % 320 for i in range(3)]
  got = [m(Tensor([[t]], dtype="int32"), v.bind(3 + i), temp).item() for i, t in enumerate(mine)]
  assert got == [next(model.generate([0, 5, 9] + mine[:i+1])) for i in range(3)]

def test_a_decode_jit_a_bound_of_start_pos(tiny_gguf):
  # a JIT matches its variables by name: a step whose start_pos has another bound (decode_pos's from where the attention splits, a
  # recurrent model's prompt tokens one at a time) is a JIT of its own, never a replay of kernels sized for the other bound
  m, temp = Transformer.from_gguf(tiny_gguf, max_context=16)[0], Tensor([0.0])
  for (lo, hi), sp in (((0, 15), 0), ((0, 7), 1), ((0, 15), 2), ((4, 15), 4)):
    m(Tensor([[sp]], dtype="int32"), UOp.variable("start_pos", lo, hi).bind(sp), temp).realize()
  assert list(m.rollout_jits) == [(0, 15), (0, 7), (4, 15)]

def test_no_float_copy_of_the_weights_stays_after_prompts_and_decode(tiny_gguf):
  # the weights stay the file's blocks: what a prompt of two chunks and decode steps leave allocated is the file, the KV cache and
  # activations, far under the half-precision weights a dequantized copy would add
  from tinygrad import GlobalCounters
  from tinygrad.nn.state import get_state_dict
  before = GlobalCounters.mem_used
  gen = (m:=Transformer.from_gguf(tiny_gguf, max_context=64)[0]).generate(list(range(1, 40)))
  for _ in range(6): next(gen)
  kv = sum(b.cache_kv.nbytes() for b in m.blk)
  half = sum(v.numel() * 2 for k, v in get_state_dict(m).items() if k.endswith("weight") and v.ndim == 2)
  assert GlobalCounters.mem_used - before - tiny_gguf.stat().st_size - kv < half // 4

def test_a_first_prompt_zeroes_every_blocks_kv_cache_in_one_schedule(tiny_gguf, monkeypatch):
  # a schedule walks every live tensor: one for all the blocks' caches, not one a block (32 on an 8B, each walking its weights)
  m, scheduled, real = Transformer.from_gguf(tiny_gguf, max_context=16)[0], [], Tensor.linear_with_vars
  monkeypatch.setattr(Tensor, "linear_with_vars", lambda *ts, **kw: scheduled.append(set(map(id, ts))) or real(*ts, **kw))
  next(m.generate([1, 2, 3]))
  caches = {id(b.cache_kv) for b in m.blk}
  assert len(caches) > 1 and [s & caches for s in scheduled if s & caches] == [caches]

def test_a_later_decode_jit_captures_on_its_first_call(tiny_gguf):
  # once a decode JIT has captured a step, every state exists: a JIT for another bound of start_pos (a chat passing the attention's split
  # bound) captures on its first call, one trace, and gives the tokens a model that never changed bounds gives
  temp = Tensor([0.0])
  def steps(bounds) -> list[int]:
    m, t, out = Transformer.from_gguf(tiny_gguf, max_context=16)[0], Tensor([[3]], dtype="int32"), []
    for sp, (lo, hi) in enumerate(bounds):
      out.append((t:=m(t, UOp.variable("start_pos", lo, hi).bind(sp), temp)).item())
      if (lo, hi) == (4, 15): assert m.rollout_jits[(lo, hi)].captured is not None
    return out
  assert steps([(0, 15)] * 4 + [(4, 15)] * 3) == steps([(0, 15)] * 7)
