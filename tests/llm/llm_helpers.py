# helpers of the tests of tinygrad/llm, on the path from conftest.py
import pathlib
import numpy as np, gguf

# ggml_type: (bytes a block, byte offsets of its fp16 scales, of its fp16 mins)
LAYOUTS = {2: (18, [0], []), 3: (20, [0], [2]), 6: (22, [0], []), 7: (24, [0], [2]), 8: (34, [0], []), 10: (84, [80], [82]),
           11: (110, [108], []), 12: (144, [0], [2]), 13: (176, [0], [2]), 14: (210, [208], []), 23: (136, [0], [])}

def cuda_program(sink, arch:str):
  """a kernel's program as CUDA's renderer writes it for arch (its source in .src[2].arg), without a GPU"""
  from tinygrad.helpers import Target
  from tinygrad.codegen import to_program
  from tinygrad.renderer.cstyle import CUDARenderer
  return to_program(sink, CUDARenderer(Target("CUDA", arch=arch)))

def random_blocks(rng:np.random.Generator, n:int, ggml_type:int) -> np.ndarray:
  """n random ggml blocks (uint8) of ggml_type with finite fp16 scales of about the size trained weights have"""
  nb, scales, mins = LAYOUTS[ggml_type]
  b = rng.integers(0, 256, (n, nb), dtype=np.uint8)
  for o, lo in [(o, -1) for o in scales] + [(o, 0) for o in mins]: b[:, o:o+2] = np.float16(rng.uniform(lo, 1, n) * 1e-3).view(np.uint8).reshape(-1, 2)
  return b

def tiny_llama(path:pathlib.Path, typ:int, qwen3=False, moe=False, context=64, blocks=2) -> pathlib.Path:
  """a 2-block (or blocks) LLaMA with random projections of ggml_type typ (256-weight blocks), its token embedding (the tied output) Q8_0; qwen3:
  Qwen3's shape instead, heads of 128 with q and k normed (qk_norm); moe: Qwen3-MoE's, the FFN 2 of 4 experts a token"""
  rng, qwen3 = np.random.default_rng(1), qwen3 or moe
  dim, ffn, heads, kv_heads, vocab, hd = 256, 512, 4, 2, 320, 128 if qwen3 else 64
  w = gguf.GGUFWriter(path, "qwen3moe" if moe else "qwen3" if qwen3 else "llama")
  w.add_block_count(blocks); w.add_context_length(context); w.add_embedding_length(dim); w.add_feed_forward_length(ffn)
  w.add_head_count(heads); w.add_head_count_kv(kv_heads); w.add_rope_freq_base(10000.0); w.add_layer_norm_rms_eps(1e-5)
  if qwen3: w.add_key_length(hd); w.add_value_length(hd)
  if moe: w.add_expert_count(4); w.add_expert_used_count(2); w.add_expert_feed_forward_length(ffn)
  w.add_tokenizer_model("gpt2"); w.add_token_list([f"t{i}" for i in range(vocab)]); w.add_bos_token_id(0); w.add_eos_token_id(1)
  def quant(name:str, rows:int, cols:int, qt:int, n:int=1):
    bs = 32 if qt == 8 else 256
    w.add_tensor(name, random_blocks(rng, n*rows*cols//bs, qt).reshape(*(n,)*(n > 1), rows, -1), raw_dtype=gguf.GGMLQuantizationType(qt))
  quant("token_embd.weight", vocab, dim, 8)
  for i in range(blocks):
    for n, (r, c) in {"attn_q": (hd*heads, dim), "attn_k": (hd*kv_heads, dim), "attn_v": (hd*kv_heads, dim),
                      "attn_output": (dim, hd*heads), "ffn_gate": (ffn, dim), "ffn_up": (ffn, dim), "ffn_down": (dim, ffn)}.items():
      quant(f"blk.{i}.{n}{'_exps' if moe and n.startswith('ffn') else ''}.weight", r, c, typ, 4 if moe and n.startswith("ffn") else 1)
    if moe: w.add_tensor(f"blk.{i}.ffn_gate_inp.weight", rng.standard_normal((4, dim)).astype(np.float32))
    for n in ("attn_norm", "ffn_norm"): w.add_tensor(f"blk.{i}.{n}.weight", np.ones(dim, np.float32))
    for n in ("attn_q_norm", "attn_k_norm") if qwen3 else (): w.add_tensor(f"blk.{i}.{n}.weight", rng.uniform(0.5, 1.5, hd).astype(np.float32))
  w.add_tensor("output_norm.weight", np.ones(dim, np.float32))
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  return path
