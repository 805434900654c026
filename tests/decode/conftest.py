import pathlib, sys
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from synth_gguf import write_llama_gguf  # noqa: E402

@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> pathlib.Path: return write_llama_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", "tiny", seed=1)
