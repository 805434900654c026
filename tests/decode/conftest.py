import pathlib, sys
import pytest
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer

# the suite's helpers (decode_helpers) and scripts/ (synth_gguf, qmatvec_count) import by name in any import mode, whatever the rootdir
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent), str(pathlib.Path(__file__).resolve().parents[2] / "scripts")]
from synth_gguf import write_llama_gguf  # noqa: E402

@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> pathlib.Path: return write_llama_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", "tiny", seed=1)

@pytest.fixture(scope="session")
def models(tiny_gguf) -> tuple[Transformer, Transformer]:
  """the tiny model with weights dequantized at load (fp16) and kept quantized (Q6_K blocks)"""
  return Transformer.from_gguf(Tensor(tiny_gguf), max_context=32)[0], Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, quantized=True)[0]
