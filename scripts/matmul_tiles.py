#!/usr/bin/env python3
"""A prompt's matmul (float16 x float16 summed in float32, Tensor.matmul's form) timed alone under tensor-core tile opts: what a tile
choice is worth on a GPU, one shape at a time.
  python3 scripts/matmul_tiles.py run 512x2048x2048 512x2048x8192 --opts "TC:0:(-1,0,1) UPCAST:0:4 UPCAST:1:8 LOCAL:1:4" >> tiles.log
  python3 scripts/matmul_tiles.py table tiles.log [...]      # anywhere: a markdown table, TFLOPS a shape (rows) and tile (columns)
run (DEV=CUDA, PYTHONPATH the tinygrad tree) times each TxKxN (T tokens, K inputs, N rows) through a TinyJit, 100 replays after 3, with
the heuristic's opts or, with --opts, these (OP:AXIS:ARG, axis 0 the tokens and 1 the rows after TC; or BEAM=n in the environment).
A line a shape: its microseconds, TFLOPS, the largest difference from numpy and the opts. Under CUDA MPS (bench.py --sms) the SMs the
client sees lead the line."""
import argparse, os, re, time
from collections import defaultdict

LINE = re.compile(r"sms=(\S+) MM (\d+x\d+x\d+) BEAM=(\d+)\s+([\d.]+) us\s+([\d.]+) TFLOPS err \S+ opts (.*)$")

def parse_opts(s:str):
  from tinygrad.codegen.opt import Opt, OptOps
  def one(o:str):
    op, ax, arg = o.split(":", 2)
    return Opt(OptOps[op], int(ax), tuple(int(v) for v in arg.strip("()").split(",")) if arg.startswith("(") else int(arg))
  return tuple(one(o) for o in s.split())

def show_opts(opts) -> str: return " ".join(f"{o.op.name}:{o.axis}:{str(o.arg).replace(' ', '')}" for o in opts)

def run(shapes:list[str], opts:str|None):
  import numpy as np
  from tinygrad import Tensor, Device, TinyJit, Context, dtypes
  from tinygrad.codegen.opt import heuristic
  from tinygrad.helpers import CACHELEVEL
  from tinygrad.uop.ops import Ops
  # a program lowered earlier is keyed by its AST, not by the opts picked here
  CACHELEVEL.value, seen = 0, []
  def pick(k):
    # the opts asked for where the kernel is the matmul's (its half inputs), the heuristic's elsewhere
    want = parse_opts(opts) if opts and k.reduceop is not None and k.reduceop.src[0].op is Ops.CAST else None
    if want is not None:
      k = k.copy()
      for o in want: k.apply_opt(o)
    else: k = hand_coded(k)
    seen.append(k.applied_opts)
    return k
  hand_coded, heuristic.hand_coded_optimizations = heuristic.hand_coded_optimizations, pick
  sms = os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") and sm_count()
  for shape in shapes:
    T, K, N = (int(v) for v in shape.split("x"))
    x, w = Tensor.randn(T, K).half().contiguous().realize(), Tensor.randn(N, K).half().contiguous().realize()
    f = TinyJit(lambda x, w: x.matmul(w.T, dtype=dtypes.float).contiguous())
    seen.clear()
    for _ in range(3): f(x, w)
    Device[x.device].synchronize(); st = time.perf_counter()
    for _ in range(100): f(x, w)
    Device[x.device].synchronize(); et = (time.perf_counter() - st) / 100
    with Context(BEAM=0): err = np.abs(f(x, w).numpy() - x.numpy().astype(np.float32) @ w.numpy().astype(np.float32).T).max()
    print(f"sms={sms or 'all'} MM {shape} BEAM={os.environ.get('BEAM', '0')} {et*1e6:8.1f} us {2*T*K*N/et/1e12:6.1f} TFLOPS err {err:.3g} "
          f"opts {show_opts(seen[0]) if seen else '(cached)'}", flush=True)

def sm_count() -> int:
  from tinygrad.llm.kernels.nv import sm_count as count
  return count("CUDA")

def table(logs:list[str]) -> str:
  """TFLOPS a shape and SM count (rows) and tile opts (columns), each run's figure where a tile ran more than once"""
  runs: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
  for path in logs:
    for line in open(path):
      if (m:=LINE.search(line.replace("Opt(op=OptOps.", "").strip())) and m[3] == "0": runs[(m[1], m[2])][norm(m[6])].append(m[5])
  cols = list(dict.fromkeys(o for r in runs.values() for o in r))
  out = ["| SMs | T x K x N | " + " | ".join(f"`{c}`" for c in cols) + " |", "| --- | --- |" + " ---: |" * len(cols)]
  for (sms, shape), r in sorted(runs.items(), key=lambda kv: kv[0][0]):
    out.append(f"| {sms} | {shape} | " + " | ".join(" / ".join(r.get(c, [])) for c in cols) + " |")
  return "\n".join(out)

def norm(opts:str) -> str:
  """a tile's opts without the TC opt every column shares, as OP:AXIS:ARG"""
  opts = re.sub(r", axis=(\d+), arg=(\([^)]*\)|\d+)\)", r":\1:\2", opts).strip("[]").replace(", ", " ")
  return " ".join(o for o in re.sub(r"\((-?\d+) (\d+) (\d+)\)", r"(\1,\2,\3)", opts).split() if not o.startswith("TC:"))

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  sub = ap.add_subparsers(dest="cmd", required=True)
  r = sub.add_parser("run"); r.add_argument("shapes", nargs="+"); r.add_argument("--opts")
  t = sub.add_parser("table"); t.add_argument("logs", nargs="+")
  a = ap.parse_args()
  if a.cmd == "run": run(a.shapes, a.opts)
  else: print(table(a.logs))
