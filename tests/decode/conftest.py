import pathlib, sys
import pytest
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer

# the suite's helpers (decode_helpers), scripts/ (synth_gguf, qmatvec_count) and the emulated Orin (orin_emu: EMU) import by name in
# any import mode, whatever the rootdir
HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1] / "scripts"), str(HERE.parent), str(HERE.parents[1])]
from synth_gguf import write_llama_gguf  # noqa: E402

@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> pathlib.Path: return write_llama_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", "tiny", seed=1)

@pytest.fixture(scope="session")
def models(tiny_gguf) -> tuple[Transformer, Transformer]:
  """the tiny model with weights dequantized at load (fp16) and kept quantized (Q6_K blocks)"""
  return Transformer.from_gguf(Tensor(tiny_gguf), max_context=32)[0], Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, quantized=True)[0]
