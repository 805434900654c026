# upstream master's LLM app (tinygrad/llm): this folder's helpers, tests/ (llama_reference) and scripts/ (smollm2) import by name in
# any import mode, whatever the rootdir
import os, pathlib, sys
import pytest
HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1] / "scripts")]
from llm_helpers import tiny_llama

@pytest.fixture(scope="session")
def smollm2_path() -> pathlib.Path:
  """SmolLM2-135M-Instruct's Q4_1 GGUF, fetched and checked by scripts/smollm2.py (into $SMOLLM2_DL if set)"""
  from smollm2 import smollm2_gguf
  return smollm2_gguf(pathlib.Path(dl)) if (dl:=os.getenv("SMOLLM2_DL")) else smollm2_gguf()


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> pathlib.Path:
  """a 2-block LLaMA with random Q6_K projections, its token embedding (the tied output) Q8_0"""
  return tiny_llama(tmp_path_factory.mktemp("gguf") / "tiny.gguf", 14)
