# tinygrad.llm's tokenizer takes the tokenizer.ggml.pre names real GGUFs carry when it has their pre-tokenizer (llama.cpp
# llama-vocab.cpp llama_vocab::impl::load): llama3's regex for the LLAMA3 names, each digit a word then GPT-2's regex for SMOLLM's group.
import pytest
from tinygrad.llm.cli import SimpleTokenizer, FallbackTemplate

BYTES = [*range(33, 127), *range(161, 173), *range(174, 256)]
CHARS = {b: chr(b) for b in BYTES} | {b: chr(256+i) for i, b in enumerate(b for b in range(256) if b not in BYTES)}   # GPT-2's byte chars
# every byte, then merges that make "202" and " world" whole tokens
VOCAB = {CHARS[b]: b for b in range(256)} | {"20": 256, "202": 257, "Ġw": 258, "Ġwo": 259, "Ġwor": 260, "Ġworl": 261, "Ġworld": 262}

def tokenizer(preset:str) -> SimpleTokenizer: return SimpleTokenizer(VOCAB, {"<|im_end|>": 263}, preset, eos_id=263)

@pytest.mark.parametrize("preset", ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"])
def test_llama3_presets_take_up_to_3_digits_a_word(preset):
  assert tokenizer(preset).encode(" world 2024") == [262, 32, 257, 52]   # " world", " ", "202", "4"

def test_unknown_preset_is_refused_by_name():
  with pytest.raises(ValueError, match="Invalid tokenizer preset 'gpt-4o'"): tokenizer("gpt-4o")

@pytest.mark.parametrize("preset", ["smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"])
def test_smollm_presets_take_each_digit_a_word(preset):
  tok = tokenizer(preset)
  assert tok.encode(" world 2024<|im_end|>") == [262, 32, 50, 48, 50, 52, 263]   # " world", " ", "2", "0", "2", "4", <|im_end|>
  assert tok.decode(tok.encode("a\n\nb  c 1x\tz")) == "a\n\nb  c 1x\tz"

def test_smollm_fallback_template_is_chatml():
  assert FallbackTemplate(tokenizer("smollm")).render([{"role": "user", "content": "hi"}]) == \
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
