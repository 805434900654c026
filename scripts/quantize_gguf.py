#!/usr/bin/env python3
"""Requantize a GGUF's linear weights to Q4_K, Q6_K or both (numpy), so that GGUF_QUANT's kernels (apps/llm QuantLinear) run on real weights.

Only 2-D weights whose rows are whole 256-value blocks can be K-quants; every other tensor is copied as it is, so a small model keeps its
original types where llama.cpp would fall back too (its rows of 576 in SmolLM2-135M). The K-quant blocks are ggml-common.h's block_q4_K and
block_q6_K, with simple per-block scales (not llama.cpp's error-minimising search): tests/decode/test_smollm2.py checks them against
gguf-py's dequantizer. Q4_K_M's blocks do as llama.cpp's (llama-quant.cpp llama_tensor_get_type, use_more_bits): Q4_K, but Q6_K for
the attn_v and ffn_down of the first and last eighth of the layers and of every third layer between; an output.weight of whole
blocks becomes Q4_K here, Q6_K there.

  python scripts/quantize_gguf.py build/dl/SmolLM2-135M-Instruct.Q4_1.gguf /tmp/smollm2-q4_k_m.gguf --type Q4_K_M
"""
import argparse, pathlib
import numpy as np
import gguf
from gguf import GGMLQuantizationType as T

def f16(x:np.ndarray) -> np.ndarray: return x.astype(np.float16).astype(np.float32)
def div(a:np.ndarray, b:np.ndarray) -> np.ndarray: return np.divide(a, b, out=np.zeros(np.broadcast_shapes(a.shape, b.shape), np.float32), where=b != 0)

def quantize_q6_k(x:np.ndarray) -> np.ndarray:
  """(n, 256) float32 -> (n, 210) uint8: ql[128] qh[64] int8 scales[16] d (fp16); weight w = d * scale[w // 16] * (q6[w] - 32)"""
  sub = x.reshape(-1, 16, 16)
  amax = np.take_along_axis(sub, np.abs(sub).argmax(-1)[..., None], -1)[..., 0]   # signed value of largest magnitude in each 16
  s = amax / -32                                                                    # it maps to q = -32, the range's long end
  d = f16(div(np.abs(s).max(-1), np.float32(127)))
  sc = np.clip(np.round(div(s, d[:, None])), -128, 127)
  q = (np.clip(np.round(div(sub, (d[:, None] * sc)[..., None])), -32, 31) + 32).astype(np.uint8).reshape(-1, 256)
  # weight h*128 + j*32 + i: nibble j>>1 of ql[h*64 + (j&1)*32 + i], bits 2j of qh[h*32 + i]
  nib, hi = (q & 0xF).reshape(-1, 2, 2, 64), (q >> 4).reshape(-1, 2, 4, 32)
  ql = (nib[:, :, 0] | nib[:, :, 1] << 4).reshape(-1, 128)
  qh = (hi[:, :, 0] | hi[:, :, 1] << 2 | hi[:, :, 2] << 4 | hi[:, :, 3] << 6).reshape(-1, 64)
  return np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8), d.astype(np.float16).view(np.uint8).reshape(-1, 2)], axis=1)

def quantize_q4_k(x:np.ndarray) -> np.ndarray:
  """(n, 256) float32 -> (n, 144) uint8: d, dmin (fp16), 12 bytes of 6-bit scales and mins, qs[128]; weight w = d*sc[w//32]*q4[w] - dmin*m[w//32]"""
  sub = x.reshape(-1, 8, 32)
  mn = np.maximum(-sub.min(-1), 0)                      # a min of 0 or below, stored as its negation
  s = (sub.max(-1) + mn) / 15
  d, dmin = f16(s.max(-1) / 63), f16(mn.max(-1) / 63)
  sc, m = np.clip(np.round(div(s, d[:, None])), 0, 63), np.clip(np.round(div(mn, dmin[:, None])), 0, 63)
  q = np.clip(np.round(div(sub + (dmin[:, None] * m)[..., None], (d[:, None] * sc)[..., None])), 0, 15).astype(np.uint8).reshape(-1, 4, 2, 32)
  sc, m = sc.astype(np.uint8), m.astype(np.uint8)
  # scales and mins 0-3 in the low 6 bits of bytes 0-3 and 4-7; 4-7 in the nibbles of bytes 8-11, their top 2 bits in the top of bytes 0-7
  scales = np.concatenate([sc[:, :4] | (sc[:, 4:] >> 4) << 6, m[:, :4] | (m[:, 4:] >> 4) << 6, (sc[:, 4:] & 0xF) | (m[:, 4:] & 0xF) << 4], axis=1)
  qs = (q[:, :, 0] | q[:, :, 1] << 4).reshape(-1, 128)   # weight c*64 + n*32 + i is nibble n of qs[c*32 + i]
  return np.concatenate([d.astype(np.float16).view(np.uint8).reshape(-1, 2), dmin.astype(np.float16).view(np.uint8).reshape(-1, 2), scales, qs], axis=1)

QUANTIZERS = {T.Q4_K: quantize_q4_k, T.Q6_K: quantize_q6_k}
FILE_TYPES = {"Q4_K": gguf.LlamaFileType.MOSTLY_Q4_K_S, "Q6_K": gguf.LlamaFileType.MOSTLY_Q6_K, "Q4_K_M": gguf.LlamaFileType.MOSTLY_Q4_K_M}

def use_more_bits(layer:int, n_layers:int) -> bool: return layer < n_layers // 8 or layer >= 7 * n_layers // 8 or (layer - n_layers // 8) % 3 == 2

def tensor_type(name:str, ftype:str, n_layers:int) -> T:
  if ftype != "Q4_K_M": return T[ftype]
  return T.Q6_K if name.endswith(("attn_v.weight", "ffn_down.weight")) and use_more_bits(int(name.split(".")[1]), n_layers) else T.Q4_K

def requantize(src:pathlib.Path, dst:pathlib.Path, ftype:str) -> pathlib.Path:
  reader = gguf.GGUFReader(src)
  n_layers = int(reader.fields[f"{reader.fields['general.architecture'].contents()}.block_count"].contents())
  writer = gguf.GGUFWriter(dst, reader.fields["general.architecture"].contents())
  for name, field in reader.fields.items():
    if name.startswith("GGUF.") or name == "general.architecture": continue
    if name == "general.file_type": writer.add_file_type(FILE_TYPES[ftype]); continue
    writer.add_key_value(name, field.contents(), field.types[0], field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None)
  for t in reader.tensors:
    rows, cols = int(t.shape[-1]), int(t.shape[0])   # GGUF lists dims innermost first
    if t.name.endswith(".weight") and len(t.shape) == 2 and cols % 256 == 0 and t.tensor_type != (qtype:=tensor_type(t.name, ftype, n_layers)):
      w = gguf.quants.dequantize(t.data, t.tensor_type).reshape(-1, 256)
      writer.add_tensor(t.name, QUANTIZERS[qtype](w).reshape(rows, -1), raw_dtype=qtype)
    else: writer.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
  writer.write_header_to_file(); writer.write_kv_data_to_file(); writer.write_tensors_to_file(); writer.close()
  return dst

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("src", type=pathlib.Path)
  ap.add_argument("dst", type=pathlib.Path)
  ap.add_argument("--type", choices=list(FILE_TYPES), default="Q4_K_M")
  a = ap.parse_args()
  print(requantize(a.src, a.dst, a.type))
