#!/usr/bin/env python3
"""Write a GGUF shaped like a published LLaMA 3 or Qwen3 with random quantized weights and a byte-level BPE vocabulary.

The file has the real model's tensor names, shapes, types and metadata, so tinygrad's LLM app and llama.cpp (llama-bench)
load it like the published Llama-3.2-1B-Instruct-Q6_K.gguf; only the numbers are random. Decode speed depends on
shapes and types alone, so this stands in for the downloads on machines that cannot reach the internet. ZOO lists the
models benchmarks run (scripts/bench.py --zoo).

  python scripts/synth_gguf.py --preset llama-3.2-1b --out /tmp/llama-3.2-1b-q6_k.gguf
  python scripts/synth_gguf.py --zoo --out /tmp/zoo    # every ZOO model as PRESET-QUANT.gguf, in parallel, those there kept
"""
from __future__ import annotations
import argparse, concurrent.futures, math, os, pathlib
import numpy as np
import gguf
from quantize_gguf import use_more_bits

# dims of the published models' config.json; "tiny" keeps every row a whole number of 256-value blocks. Qwen3 has heads of 128 (not
# dim / heads), q and k normed (qk_norm) and no rope_freqs; the 8B has its own output.weight, the others tie it to token_embd
PRESETS: dict[str, dict] = {
  "llama-3.2-1b": dict(name="Llama 3.2 1B Instruct (synthetic)", n_layers=16, dim=2048, n_heads=32, n_kv_heads=8, ffn=8192,
                       n_normal=128000, n_special=256, context=131072),
  "llama-3.1-8b": dict(name="Llama 3.1 8B Instruct (synthetic)", n_layers=32, dim=4096, n_heads=32, n_kv_heads=8, ffn=14336,
                       n_normal=128000, n_special=256, context=131072, tied=False),
  "qwen3-1.7b": dict(name="Qwen3 1.7B (synthetic)", arch="qwen3", n_layers=28, dim=2048, n_heads=16, n_kv_heads=8, head_dim=128, ffn=6144,
                     n_normal=151643, n_special=293, context=40960, rope_theta=1000000.0),
  "tiny": dict(name="tiny llama (synthetic)", n_layers=2, dim=256, n_heads=4, n_kv_heads=2, ffn=512,
               n_normal=768, n_special=256, context=512),
}
# LLaMA-3.2-1B's 16 blocks in tiny's dims: a first token's host work (tracing, scheduling) at the 1B's depth, its compute negligible
PRESETS["tiny-16"] = dict(PRESETS["tiny"], name="tiny llama, 16 blocks (synthetic)", n_layers=16)
# the models of the decode table (issue 28): (preset, quant)
ZOO = [("llama-3.2-1b", "q6_k"), ("llama-3.2-1b", "q4_k_m"), ("qwen3-1.7b", "q4_k_m"), ("llama-3.2-1b", "q8_0"), ("llama-3.1-8b", "q4_k_m")]
QUANTS = {"q6_k": gguf.LlamaFileType.MOSTLY_Q6_K, "q4_k_m": gguf.LlamaFileType.MOSTLY_Q4_K_M, "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
          "f16": gguf.LlamaFileType.MOSTLY_F16}
ROPE_THETA, RMS_EPS = 500000.0, 1e-5
Q6_K_BLOCK, Q6_K_BYTES = 256, 210  # ql[128] qh[64] scales[16] (int8) d (fp16)
WEIGHT_STD = 0.02                  # about what trained LLaMA projections have

# GPT-2 byte-to-unicode table: printable bytes stand for themselves, the rest move to U+0100 upwards
_PRINTABLE = [*range(33, 127), *range(161, 173), *range(174, 256)]
BYTE_CHARS = {b: chr(b) for b in _PRINTABLE} | {b: chr(256+i) for i,b in enumerate(b for b in range(256) if b not in _PRINTABLE)}

def llama3_special_tokens(n:int) -> list[str]:
  named = {0:"<|begin_of_text|>", 1:"<|end_of_text|>", 4:"<|finetune_right_pad_id|>", 6:"<|start_header_id|>",
           7:"<|end_header_id|>", 8:"<|eom_id|>", 9:"<|eot_id|>", 10:"<|python_tag|>"}
  reserved = iter(range(n))
  return [named[i] if i in named else f"<|reserved_special_token_{next(reserved)}|>" for i in range(n)]

def byte_level_vocab(n_normal:int) -> tuple[list[str], list[str]]:
  """256 byte tokens, then merged tokens that each have a merge rule of two earlier tokens (a valid BPE vocabulary)."""
  tokens, merges = [BYTE_CHARS[b] for b in range(256)], []
  alphabet = [BYTE_CHARS[32]] + [chr(c) for c in [*range(97, 123), *range(65, 91), *range(48, 58)]]  # 'Ġ', a-z, A-Z, 0-9
  frontier = alphabet
  while len(tokens) < n_normal:
    nxt = []
    for left in frontier:
      for right in alphabet:
        if len(tokens) == n_normal: break
        tokens.append(left + right); merges.append(f"{left} {right}"); nxt.append(left + right)
    frontier = nxt
  return tokens, merges

def llama3_rope_freqs(head_dim:int, factor=32.0, low=1.0, high=4.0, old_context=8192) -> np.ndarray:
  """Per-frequency divisors of LLaMA 3's long-context RoPE scaling, as the published GGUF stores them."""
  wavelen = 2 * math.pi * ROPE_THETA ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
  smooth = np.clip((old_context / wavelen - low) / (high - low), 0, 1)
  return (1 / ((1 - smooth) / factor + smooth)).astype(np.float32)

def random_q6_k(rng:np.random.Generator, rows:int, cols:int) -> np.ndarray:
  """Q6_K blocks as a (rows, cols/256*210) uint8 array: random 6-bit quants, int8 scales in [-16,16], small positive d."""
  assert cols % Q6_K_BLOCK == 0, f"Q6_K rows must be whole blocks, got {cols}"
  blocks = rng.integers(0, 256, (rows * cols // Q6_K_BLOCK, Q6_K_BYTES), dtype=np.uint8)
  blocks[:, 192:208] = rng.integers(-16, 17, (len(blocks), 16), dtype=np.int8).view(np.uint8)
  # (q-32) has rms ~18.5 and the scales ~9.5, so d ~1.1e-4 gives weights of WEIGHT_STD (a normal fp16, not subnormal)
  d = rng.uniform(0.8, 1.2, len(blocks)) * WEIGHT_STD / (18.5 * 9.5)
  blocks[:, 208:210] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
  return blocks.reshape(rows, -1)

def random_q4_k(rng:np.random.Generator, rows:int, cols:int) -> np.ndarray:
  """Q4_K blocks as a (rows, cols/256*144) uint8 array: random 4-bit quants and 6-bit scales and mins, small positive d and dmin."""
  blocks = rng.integers(0, 256, (rows * cols // 256, 144), dtype=np.uint8)
  # q*sc has rms ~4.6*32 against the min's ~16*32: d ~WEIGHT_STD/147, dmin half of it
  d = rng.uniform(0.8, 1.2, len(blocks)) * WEIGHT_STD / (4.6 * 32)
  blocks[:, 0:2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
  blocks[:, 2:4] = (d * 0.5).astype(np.float16).view(np.uint8).reshape(-1, 2)
  return blocks.reshape(rows, -1)

def head_dim(p:dict) -> int: return p.get("head_dim", p["dim"] // p["n_heads"])

def random_q8_0(rng:np.random.Generator, rows:int, cols:int) -> np.ndarray:
  """Q8_0 blocks as a (rows, cols/32*34) uint8 array: a small positive d, then 32 random int8 quants (rms ~74)."""
  blocks = rng.integers(0, 256, (rows * cols // 32, 34), dtype=np.uint8)
  blocks[:, 0:2] = (rng.uniform(0.8, 1.2, len(blocks)) * WEIGHT_STD / 74).astype(np.float16).view(np.uint8).reshape(-1, 2)
  return blocks.reshape(rows, -1)

def tensor_shapes(p:dict) -> dict[str, tuple[int, ...]]:
  """name -> numpy shape (rows, cols) of each tensor, in the published file's order."""
  hd, vocab, qwen3 = head_dim(p), p["n_normal"] + p["n_special"], p.get("arch") == "qwen3"
  shapes: dict[str, tuple[int, ...]] = {} if qwen3 else {"rope_freqs.weight": (hd // 2,)}
  shapes["token_embd.weight"] = (vocab, p["dim"])
  for i in range(p["n_layers"]):
    shapes |= {f"blk.{i}.attn_norm.weight": (p["dim"],), f"blk.{i}.ffn_down.weight": (p["dim"], p["ffn"]),
               f"blk.{i}.ffn_gate.weight": (p["ffn"], p["dim"]), f"blk.{i}.ffn_up.weight": (p["ffn"], p["dim"]),
               f"blk.{i}.ffn_norm.weight": (p["dim"],), f"blk.{i}.attn_k.weight": (p["n_kv_heads"] * hd, p["dim"]),
               f"blk.{i}.attn_output.weight": (p["dim"], p["n_heads"] * hd), f"blk.{i}.attn_q.weight": (p["n_heads"] * hd, p["dim"]),
               f"blk.{i}.attn_v.weight": (p["n_kv_heads"] * hd, p["dim"])}
    if qwen3: shapes |= {f"blk.{i}.attn_k_norm.weight": (hd,), f"blk.{i}.attn_q_norm.weight": (hd,)}
  # LLaMA 3.2 and Qwen3 1.7B tie the output projection to token_embd
  return shapes | {"output_norm.weight": (p["dim"],)} | ({} if p.get("tied", True) else {"output.weight": (vocab, p["dim"])})

def q6_k_in_q4_k_m(name:str, p:dict) -> bool:
  """a Q4_K_M keeps these Q6_K (llama.cpp's llama-quant.cpp): the output (the token embedding where it is tied), and attn_v and ffn_down
  in the first and last eighth of the blocks and every third between"""
  if name == "output.weight" or name == "token_embd.weight": return name == "output.weight" or p.get("tied", True)
  return any(k in name for k in ("attn_v", "ffn_down")) and use_more_bits(int(name.split(".")[1]), p["n_layers"])

def tensor_types(p:dict, quant:str) -> dict[str, gguf.GGMLQuantizationType]:
  """name -> the type each tensor is written in"""
  T = gguf.GGMLQuantizationType
  def typ(name:str, shape:tuple[int, ...]) -> gguf.GGMLQuantizationType:
    if len(shape) == 1: return T.F32
    if quant in ("f16", "q8_0"): return T.F16 if quant == "f16" else T.Q8_0
    return T.Q4_K if quant == "q4_k_m" and not q6_k_in_q4_k_m(name, p) else T.Q6_K
  return {name: typ(name, shape) for name, shape in tensor_shapes(p).items()}

def write_llama_gguf(path:str|pathlib.Path, preset:str="tiny", quant:str="q6_k", seed:int=0) -> pathlib.Path:
  p, rng, path = PRESETS[preset], np.random.default_rng(seed), pathlib.Path(path)
  hd, vocab, arch = head_dim(p), p["n_normal"] + p["n_special"], p.get("arch", "llama")
  w = gguf.GGUFWriter(path, arch)
  w.add_name(p["name"]); w.add_file_type(QUANTS[quant]); w.add_quantization_version(gguf.GGML_QUANT_VERSION)
  w.add_block_count(p["n_layers"]); w.add_context_length(p["context"]); w.add_embedding_length(p["dim"])
  w.add_feed_forward_length(p["ffn"]); w.add_head_count(p["n_heads"]); w.add_head_count_kv(p["n_kv_heads"])
  w.add_rope_freq_base(p.get("rope_theta", ROPE_THETA)); w.add_layer_norm_rms_eps(RMS_EPS); w.add_key_length(hd); w.add_value_length(hd)
  w.add_vocab_size(vocab); w.add_rope_dimension_count(hd)
  normal, merges = byte_level_vocab(p["n_normal"])
  w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre("qwen2" if arch == "qwen3" else "llama-bpe")
  w.add_token_list(normal + llama3_special_tokens(p["n_special"]))
  w.add_token_types([gguf.TokenType.NORMAL] * p["n_normal"] + [gguf.TokenType.CONTROL] * p["n_special"])
  w.add_token_merges(merges)
  w.add_bos_token_id(p["n_normal"]); w.add_eos_token_id(p["n_normal"] + 9)  # <|begin_of_text|>, <|eot_id|>
  T, blocks = gguf.GGMLQuantizationType, {gguf.GGMLQuantizationType.Q8_0: random_q8_0, gguf.GGMLQuantizationType.Q4_K: random_q4_k,
                                          gguf.GGMLQuantizationType.Q6_K: random_q6_k}
  for (name, shape), typ in zip(tensor_shapes(p).items(), tensor_types(p, quant).values()):
    if name == "rope_freqs.weight": w.add_tensor(name, llama3_rope_freqs(hd))
    elif typ == T.F32: w.add_tensor(name, np.ones(shape, np.float32))
    elif typ == T.F16: w.add_tensor(name, (rng.standard_normal(shape, np.float32) * WEIGHT_STD).astype(np.float16))
    else: w.add_tensor(name, blocks[typ](rng, *shape), raw_dtype=typ)
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  return path

def _types_in(path:pathlib.Path) -> dict[str, gguf.GGMLQuantizationType]|None:
  try: return {t.name: t.tensor_type for t in gguf.GGUFReader(path).tensors}
  except (OSError, ValueError): return None

def write_new(path:pathlib.Path, preset:str, quant:str) -> pathlib.Path:
  # a file is kept where its tensors' types are those written today (an older mix's is written anew); written beside, a process's own,
  # and renamed: a stopped run or another process reading it meanwhile sees no part of a file under the name
  if _types_in(path) != tensor_types(PRESETS[preset], quant):
    os.replace(write_llama_gguf(path.with_suffix(f".{os.getpid()}.tmp"), preset, quant), path)
  return path

def write_zoo(folder:str|pathlib.Path) -> list[pathlib.Path]:
  """every model of ZOO in folder as PRESET-QUANT.gguf, those missing or of another mix of types written in parallel"""
  (folder:=pathlib.Path(folder)).mkdir(parents=True, exist_ok=True)
  with concurrent.futures.ProcessPoolExecutor(len(ZOO)) as ex:
    return list(ex.map(write_new, *zip(*[(folder / f"{p}-{q}.gguf", p, q) for p, q in ZOO])))

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--preset", choices=list(PRESETS), default="tiny")
  ap.add_argument("--quant", choices=list(QUANTS), default="q6_k")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--zoo", action="store_true", help="every model of ZOO into --out, a folder (--preset, --quant and --seed unused)")
  ap.add_argument("--out", required=True)
  args = ap.parse_args()
  for out in write_zoo(args.out) if args.zoo else [write_llama_gguf(args.out, args.preset, args.quant, args.seed)]:
    print(f"{out} ({out.stat().st_size/1e6:.1f} MB)")
