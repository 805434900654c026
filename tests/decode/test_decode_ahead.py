# generate queues decode steps, each reading the token of the one before on the device, and reads their tokens in one copy (a read
# synchronizes the whole device): 1, 2, 4... up to `ahead` steps a copy, the same tokens as reading each
import pytest
from tinygrad.device import Buffer
from decode_helpers import PROMPTS

def tokens_and_reads(model, prompt:list[int], n:int, ahead:int, monkeypatch) -> tuple[list[int], int]:
  reads, as_buffer = 0, Buffer.as_buffer
  def counted(self, *args, **kwargs):
    nonlocal reads
    reads += 1
    return as_buffer(self, *args, **kwargs)
  monkeypatch.setattr(Buffer, "as_buffer", counted)
  gen = model.generate(list(prompt), ahead=ahead)
  return [next(gen) for _ in range(n)], reads

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_tokens_read_a_window_at_a_time(models, quantized, monkeypatch):
  model, prompt = models[quantized], PROMPTS[0]
  one, one_reads = tokens_and_reads(model, prompt, 1 + 15, 1, monkeypatch)
  ahead, ahead_reads = tokens_and_reads(model, prompt, 1 + 15, 4, monkeypatch)
  assert ahead == one
  # 15 decode tokens: 15 reads one at a time, 5 in windows of 1, 2, 4, 4 and 4 (the prompt, copied in, and its token are read alike in both)
  assert one_reads - ahead_reads == 15 - 5

def test_queued_steps_stop_at_max_context(models):
  model, prompt = models[False], PROMPTS[0]
  assert len(list(model.generate(list(prompt), ahead=5))) == model.max_context - len(prompt)
