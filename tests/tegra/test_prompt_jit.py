# on a GPU with tensor cores (the emulated Orin's sm_87), a prompt's chunk runs through the JIT of its length rounded up to a power
# of two: concrete shapes, the padding after the real tokens; the CPU keeps master's symbolic chunks
import pathlib, sys
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[1] / "llm")]
from llm_helpers import tiny_llama
from tinygrad import Context, Tensor
from tinygrad.llm.model import Transformer

PROMPT = [(7 * i) % 300 + 2 for i in range(40)]
def toks(m:Transformer, n=3) -> list[int]: return [t for t, _ in zip(m.generate(list(PROMPT)), range(n))]

def test_a_prompt_runs_padded_through_the_jit_of_its_length(dev, tmp_path):
  # max_context 48 leaves no room for 64 tokens: the symbolic chunks of 32, the tokens the padded prompt must give
  path = tiny_llama(tmp_path / "q6_k.gguf", 14)
  want = toks(Transformer.from_gguf(path, max_context=48)[0])
  m = Transformer.from_gguf(path, max_context=64)[0]
  for _ in range(3):
    m._cached_tokens = []
    assert toks(m) == want
  # the third prompt replayed the captured kernels, start_pos 0 in them: from an empty cache the attention's shapes are concrete
  assert list(m.prompt_jits) == [(64, 0)] and m.prompt_jits[(64, 0)].cnt >= 2 and not m.prefill_jit.captured

def test_a_prompt_past_its_cached_prefix_pads_the_rest(dev, tmp_path):
  # a second turn: the tokens after the cached prefix go as one chunk from start_pos (a variable bound to 32: its keys end at 64),
  # padded to 32; max_context 24 takes symbolic chunks
  path = tiny_llama(tmp_path / "q6_k.gguf", 14)
  m, ref, prompt = Transformer.from_gguf(path, max_context=64)[0], Transformer.from_gguf(path, max_context=24)[0], PROMPT[:20]
  assert (first:=next(m.generate(list(prompt)))) == next(ref.generate(list(prompt)))
  assert next(m.generate(prompt + [first, 7, 8])) == next(ref.generate(prompt + [first, 7, 8]))
  assert set(m.prompt_jits) == {(32, 0), (32, 32)} and m.get_start_pos(prompt + [first, 7, 8, 0]) == 23 and not ref.prompt_jits

def test_the_cpu_keeps_symbolic_chunks(dev, tmp_path):
  # no tensor cores to gain: master's chunks of 32 tokens, one JIT for every length
  with Context(DEV="CPU"):
    m = Transformer.from_gguf(tiny_llama(tmp_path / "q6_k.gguf", 14), max_context=64)[0]
    toks(m, 1)
  assert not m.prompt_jits and m.prefill_jit.cnt == 2

def test_a_replayed_prompt_schedules_nothing(dev, tmp_path, monkeypatch):
  # its tokens and the temperature are copied into buffers the JIT reads: a schedule outside it walks every live tensor (ms a call)
  m = Transformer.from_gguf(tiny_llama(tmp_path / "q6_k.gguf", 14), max_context=64)[0]
  for _ in range(3):
    m._cached_tokens = []
    want = toks(m, 1)
  calls, real = [], Tensor.linear_with_vars
  monkeypatch.setattr(Tensor, "linear_with_vars", lambda *a, **kw: calls.append(1) or real(*a, **kw))
  m._cached_tokens = []
  assert toks(m, 1) == want and not calls
