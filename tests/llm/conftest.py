# upstream master's LLM app (tinygrad/llm): this folder's helpers, tests/ (llama_reference) and scripts/ (smollm2) import by name in
# any import mode, whatever the rootdir
import os, pathlib, sys
import numpy as np, pytest, gguf
HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1] / "scripts")]
from llm_helpers import random_blocks

@pytest.fixture(scope="session")
def smollm2_path() -> pathlib.Path:
  """SmolLM2-135M-Instruct's Q4_1 GGUF, fetched and checked by scripts/smollm2.py (into $SMOLLM2_DL if set)"""
  from smollm2 import smollm2_gguf
  return smollm2_gguf(pathlib.Path(dl)) if (dl:=os.getenv("SMOLLM2_DL")) else smollm2_gguf()


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory) -> pathlib.Path:
  """a 2-block LLaMA with random Q6_K projections, its token embedding (the tied output) Q8_0"""
  rng, path = np.random.default_rng(1), tmp_path_factory.mktemp("gguf") / "tiny.gguf"
  dim, ffn, heads, kv_heads, vocab = 256, 512, 4, 2, 320
  w = gguf.GGUFWriter(path, "llama")
  w.add_block_count(2); w.add_context_length(64); w.add_embedding_length(dim); w.add_feed_forward_length(ffn)
  w.add_head_count(heads); w.add_head_count_kv(kv_heads); w.add_rope_freq_base(10000.0); w.add_layer_norm_rms_eps(1e-5)
  w.add_tokenizer_model("gpt2"); w.add_token_list([f"t{i}" for i in range(vocab)]); w.add_bos_token_id(0); w.add_eos_token_id(1)
  def quant(name:str, rows:int, cols:int, typ:int):
    bs = 32 if typ == 8 else 256
    w.add_tensor(name, random_blocks(rng, rows*cols//bs, typ).reshape(rows, -1), raw_dtype=gguf.GGMLQuantizationType(typ))
  quant("token_embd.weight", vocab, dim, 8)
  for i in range(2):
    for n, (r, c) in {"attn_q": (dim, dim), "attn_k": (dim//heads*kv_heads, dim), "attn_v": (dim//heads*kv_heads, dim),
                      "attn_output": (dim, dim), "ffn_gate": (ffn, dim), "ffn_up": (ffn, dim), "ffn_down": (dim, ffn)}.items():
      quant(f"blk.{i}.{n}.weight", r, c, 14)
    for n in ("attn_norm", "ffn_norm"): w.add_tensor(f"blk.{i}.{n}.weight", np.ones(dim, np.float32))
  w.add_tensor("output_norm.weight", np.ones(dim, np.float32))
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  return path
