#!/usr/bin/env python3
"""The main job: greedy LLM decode of a generated LLaMA-shaped Q6_K GGUF on the patched tinygrad, printing tokens/s.
Runs on tinygrad's default device (the CPU here); TegraIface will make it NV=1 on the Orin."""
import argparse, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth_gguf import write_llama_gguf
from tinygrad import Tensor, Device
from tinygrad.apps.llm import Transformer, SimpleTokenizer

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--preset", default="tiny", help="synth_gguf preset (tiny: 2 blocks, dim 256)")
  ap.add_argument("--tokens", type=int, default=24, help="tokens to decode after the prompt")
  ap.add_argument("--warmup", type=int, default=4, help="leading tokens left out of the median (JIT capture, compiles)")
  a = ap.parse_args()
  if not (gguf:=Path(__file__).resolve().parent.parent/"build"/f"{a.preset}-q6_k.gguf").exists(): write_llama_gguf(gguf, a.preset)
  print(f"device {Device.DEFAULT}; model {gguf.name} ({gguf.stat().st_size/1e6:.1f} MB, random Q6_K weights)")
  model, kv = Transformer.from_gguf(Tensor(gguf), max_context=a.tokens + 16)
  tok = SimpleTokenizer.from_gguf_kv(kv)
  ids = [kv["tokenizer.ggml.bos_token_id"]] + tok.encode("Hello Orin")
  out, times, st = [], [], time.perf_counter()
  for nid in model.generate(ids.copy()):
    times.append((now:=time.perf_counter()) - st); st = now
    out.append(nid)
    if len(out) == a.tokens: break
  steady = times[a.warmup:]
  print(f"decoded {len(out)} tokens: {tok.decode(out)!r}")
  print(f"decode: {1/statistics.median(steady):.1f} tokens/s (median of {len(steady)} after {a.warmup} warm-up; first token {times[0]*1e3:.0f} ms)")

if __name__ == "__main__": main()
