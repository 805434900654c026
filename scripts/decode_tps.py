#!/usr/bin/env python3
"""Steady-state greedy decode speed of tinygrad.apps.llm on a GGUF file: median seconds per token after warm-up, kernels and bytes.

  DEV=CUDA python scripts/decode_tps.py /tmp/llama-3.2-1b-q6_k.gguf               # Q4_K/Q6_K weights kept quantized (the default on GPUs)
  DEV=CUDA GGUF_QUANT=0 python scripts/decode_tps.py /tmp/llama-3.2-1b-q6_k.gguf  # weights dequantized to fp16 at load
Run with PYTHONPATH=<tinygrad tree> to measure a given tree (e.g. base v0.12.0, or the series cut after one patch)."""
import argparse, json, pathlib, statistics, time
from tinygrad import Tensor, Device, GlobalCounters, getenv
from tinygrad.apps.llm import Transformer

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("gguf")
  ap.add_argument("--max_context", type=int, default=512)
  ap.add_argument("--warmup", type=int, default=8, help="tokens before timing: prefill, JIT capture")
  ap.add_argument("--count", type=int, default=128)
  args = ap.parse_args()
  model, kv = Transformer.from_gguf(Tensor(pathlib.Path(args.gguf)), max_context=args.max_context)
  gen = model.generate([kv["tokenizer.ggml.bos_token_id"], 300, 301, 302])
  for _ in range(args.warmup): next(gen)
  times, kernels, mem = [], 0, 0  # kernels: launches the counters see, a JIT graph counts as few
  for _ in range(args.count):
    GlobalCounters.reset()
    st = time.perf_counter()
    next(gen)   # ends in .item(): the token is on the host
    times.append(time.perf_counter() - st)
    kernels, mem = GlobalCounters.kernel_count, GlobalCounters.global_mem
  med = statistics.median(times)
  print(json.dumps({"device": Device.DEFAULT, "gguf": args.gguf, "GGUF_QUANT": getenv("GGUF_QUANT"), "tok_s": round(1/med, 2),
                    "ms_per_token": round(med*1e3, 3), "launches_per_token": kernels, "gb_per_token": round(mem/1e9, 4)}))
