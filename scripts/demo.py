#!/usr/bin/env python3
"""The main job: NV=1 on the Orin (the real GPU on a Jetson, the emulated Orin elsewhere) — device info, a matmul checked against
numpy, greedy decode of a generated LLaMA-shaped Q6_K GGUF with tokens/s, and the GPU messages of the kernel log."""
import argparse, os, statistics, sys, time
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT/"scripts"), str(ROOT/"tests"/"tegra")]
import numpy as np
from synth_gguf import write_llama_gguf
from klog import read_log, gpu_errors
from tinygrad import Tensor, Device
from tinygrad.apps.llm import Transformer, SimpleTokenizer

def device_info() -> str:
  dev = Device[Device.DEFAULT]
  if (info:=getattr(getattr(dev, "iface", None), "info", None)) is None: return f"{Device.DEFAULT} ({type(dev).__name__})"
  where = "emulated Orin (ORIN_EMU=1)" if os.environ.get("ORIN_EMU") == "1" else "this Jetson"
  chip = bytes(info.chipname).rstrip(b"\0").decode()
  waits = f", HCQ waits up to {int(ms) // 1000} s (HCQDEV_WAIT_TIMEOUT_MS)" if (ms:=os.environ.get("HCQDEV_WAIT_TIMEOUT_MS")) else ""
  return (f"NV via {type(dev.iface).__name__} on {where}: {chip} {dev.arch}, "
          f"{info.num_gpc} GPC x {info.num_tpc_per_gpc} TPC, L2 {info.L2_cache_size >> 10} KiB{waits}")

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--preset", default="tiny", help="synth_gguf preset (tiny: 2 blocks, dim 256)")
  ap.add_argument("--tokens", type=int, default=12, help="tokens to decode after the prompt")
  ap.add_argument("--warmup", type=int, default=3, help="leading tokens left out of the median (JIT capture, compiles)")
  a = ap.parse_args()
  try: log_start = len(read_log())
  except OSError: log_start = None   # /dev/kmsg needs root or kernel.dmesg_restrict=0 on a Jetson
  print(f"device: {device_info()}")

  x, w = np.random.default_rng(0).standard_normal((2, 64, 64), dtype=np.float32)
  err = np.abs((Tensor(x) @ Tensor(w)).numpy() - x @ w).max()
  print(f"matmul 64x64 vs numpy: max abs error {err:.2e} ({'ok' if err < 1e-3 else 'WRONG'})")

  if not (gguf:=ROOT/"build"/f"{a.preset}-q6_k.gguf").exists(): write_llama_gguf(gguf, a.preset)
  model, kv = Transformer.from_gguf(Tensor(gguf), max_context=a.tokens + 16)
  tok = SimpleTokenizer.from_gguf_kv(kv)
  ids = [kv["tokenizer.ggml.bos_token_id"]] + tok.encode("Hello Orin")
  out, times, st = [], [], time.perf_counter()
  for nid in model.generate(ids.copy()):
    times.append((now:=time.perf_counter()) - st); st = now
    out.append(nid)
    if len(out) == a.tokens: break
  steady = times[a.warmup:]
  print(f"decode {gguf.name} (random Q6_K weights, so the text is noise): {tok.decode(out)!r}")
  print(f"decode: {1/statistics.median(steady):.2f} tokens/s (median of {len(steady)} after {a.warmup} warm-up; first token {times[0]:.1f} s)")

  if log_start is None: print("kernel log: not readable by this user (run as root, or sysctl kernel.dmesg_restrict=0)")
  else:
    errors = gpu_errors(new:=read_log()[log_start:])
    print(f"kernel log: {len(new)} new messages, {len(errors)} GPU errors" + "".join(f"\n  {e}" for e in errors))

if __name__ == "__main__": main()
