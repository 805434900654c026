"""A float32 numpy LLaMA that reads a GGUF through gguf-py (its reader and dequantizer, nothing of tinygrad): the reference the real-weights
tests hold tinygrad's greedy tokens to. Q and K rows stay in the GGUF's order, so RoPE turns adjacent pairs (llama.cpp's normal mode)."""
import pathlib
import numpy as np
import gguf

class LlamaReference:
  def __init__(self, path:pathlib.Path):
    r = gguf.GGUFReader(path)
    kv = {k: f.contents() for k, f in r.fields.items() if not k.startswith("tokenizer.ggml.")}
    arch = kv["general.architecture"]
    self.n_layers, self.n_heads, self.n_kv = kv[f"{arch}.block_count"], kv[f"{arch}.attention.head_count"], kv[f"{arch}.attention.head_count_kv"]
    self.eps, self.theta = kv[f"{arch}.attention.layer_norm_rms_epsilon"], kv[f"{arch}.rope.freq_base"]
    self.w = {t.name: gguf.quants.dequantize(t.data, t.tensor_type).reshape([int(d) for d in reversed(t.shape)]) for t in r.tensors}
    self.w.setdefault("output.weight", self.w["token_embd.weight"])

  def norm(self, x:np.ndarray, w:np.ndarray) -> np.ndarray: return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * w

  def rope(self, x:np.ndarray, start:int) -> np.ndarray:   # (T, heads, head_dim): pairs (2i, 2i+1) turn by pos * theta^(-2i/head_dim)
    t, _, hd = x.shape
    ang = np.arange(start, start + t)[:, None] * self.theta ** (-np.arange(0, hd, 2) / hd)
    cos, sin, a, b = np.cos(ang)[:, None], np.sin(ang)[:, None], x[..., 0::2], x[..., 1::2]
    return np.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(x.shape).astype(np.float32)

  def last_logits(self, tokens:list[int], cache:list[list[np.ndarray]]) -> np.ndarray:
    """logits after tokens, of which the first len(cache[0][0]) are in the KV cache (appended to here)"""
    w, start = self.w, len(cache[0][0]) if cache else 0
    x, t = w["token_embd.weight"][tokens[start:]], len(tokens) - start
    mask = np.triu(np.full((t, len(tokens)), -np.inf, np.float32), start + 1)
    for i in range(self.n_layers):
      p = f"blk.{i}."
      h = self.norm(x, w[p + "attn_norm.weight"])
      q, k, v = (h @ w[p + f"attn_{n}.weight"].T for n in "qkv")
      hd = q.shape[-1] // self.n_heads
      q, k, v = self.rope(q.reshape(t, self.n_heads, hd), start), self.rope(k.reshape(t, self.n_kv, hd), start), v.reshape(t, self.n_kv, hd)
      if len(cache) <= i: cache.append([k[:0], v[:0]])
      k, v = cache[i][0], cache[i][1] = np.concatenate([cache[i][0], k]), np.concatenate([cache[i][1], v])
      k, v = (np.repeat(a, self.n_heads // self.n_kv, axis=1) for a in (k, v))   # query head j reads kv head j // (heads / kv heads)
      s = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(hd) + mask
      s = np.exp(s - s.max(-1, keepdims=True))
      x = x + np.einsum("hqk,khd->qhd", s / s.sum(-1, keepdims=True), v).reshape(t, -1) @ w[p + "attn_output.weight"].T
      h = self.norm(x, w[p + "ffn_norm.weight"])
      g = h @ w[p + "ffn_gate.weight"].T
      x = x + (g / (1 + np.exp(-g)) * (h @ w[p + "ffn_up.weight"].T)) @ w[p + "ffn_down.weight"].T
    return self.norm(x[-1], w["output_norm.weight"]) @ w["output.weight"].T

  def greedy(self, tokens:list[int], n:int) -> list[int]:
    out, cache = list(tokens), []
    for _ in range(n): out.append(int(self.last_logits(out, cache).argmax()))
    return out[len(tokens):]
