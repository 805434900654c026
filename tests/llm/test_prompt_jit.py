# a prompt's chunk runs through the JIT of its length rounded up to a power of two: concrete shapes (the tensor cores take no symbolic
# dim), the padding after the real tokens
from tinygrad.llm.model import Transformer

PROMPT = [(7 * i) % 300 + 2 for i in range(40)]
def toks(m:Transformer, n=3) -> list[int]: return [t for t, _ in zip(m.generate(list(PROMPT)), range(n))]

def test_a_prompt_runs_padded_through_the_jit_of_its_length(tiny_gguf):
  # max_context 48 leaves no room for 64 tokens: the symbolic chunks of 32, the tokens the padded prompt must give
  want = toks(Transformer.from_gguf(tiny_gguf, max_context=48)[0])
  m = Transformer.from_gguf(tiny_gguf, max_context=64)[0]
  for _ in range(3):
    m._cached_tokens = []
    assert toks(m) == want
  # the third prompt replayed the captured kernels
  assert list(m.prompt_jits) == [64] and m.prompt_jits[64].cnt >= 2 and not m.prefill_jit.captured

def test_a_prompt_past_its_cached_prefix_pads_the_rest(tiny_gguf):
  # a second turn: the tokens after the cached prefix go as one chunk from start_pos, padded to 32; max_context 24 takes symbolic chunks
  m, ref, prompt = Transformer.from_gguf(tiny_gguf, max_context=64)[0], Transformer.from_gguf(tiny_gguf, max_context=24)[0], PROMPT[:20]
  assert (first:=next(m.generate(list(prompt)))) == next(ref.generate(list(prompt)))
  assert next(m.generate(prompt + [first, 7, 8])) == next(ref.generate(prompt + [first, 7, 8]))
  assert sorted(m.prompt_jits) == [32] and m.get_start_pos(prompt + [first, 7, 8, 0]) == 23 and not ref.prompt_jits
