#!/usr/bin/env python3
"""tinygrad-orin benchmark suite: one command, every device present, JSON + table + PNG.

  python scripts/bench.py                      # quick sizes, NV and CUDA where they open, else CPU
  BENCH_FULL=1 python scripts/bench.py --out bench-out    # the seed's full sizes (matmul to 4096, copies to 256 MiB)
  python scripts/bench.py --only llm --gguf model.gguf --mv 4,8,4 --mv 8,16,2

Each device runs in its own worker process, so a device that fails to open is reported as skipped and the others
still run, and each worker reads the MV_* / BEAM environment afresh. Timings are wall clock around a device
synchronize, medians over repeats after warm-up; GFLOPS and GB/s count each input read and each output written once.
"""
from __future__ import annotations
import argparse, hashlib, json, os, pathlib, platform, statistics, subprocess, sys, tempfile, time
from typing import Callable

SUITES = ("matmul", "copy", "alloc", "launch", "elementwise", "mlp", "llm")
GPU_DEVICES = ("NV", "CUDA")
MiB = 1 << 20

def sizes(full:bool, device:str) -> dict:
  if full: return dict(matmul=[256, 512, 1024, 2048, 4096], copy=[1*MiB, 4*MiB, 16*MiB, 64*MiB, 256*MiB], ew=64*MiB, mlp=4096, reps=20)
  if device == "CPU": return dict(matmul=[256, 512], copy=[1*MiB, 8*MiB], ew=4*MiB, mlp=512, reps=5)
  return dict(matmul=[256, 1024, 2048], copy=[1*MiB, 16*MiB, 64*MiB], ew=16*MiB, mlp=2048, reps=10)

def progress(msg:str): print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

# ***** measurements (run inside a worker; tinygrad imported there) *****

def timed(fn:Callable[[], object], sync:Callable[[], object], reps:int, warmup:int=2) -> list[float]:
  for _ in range(warmup): fn(); sync()
  out = []
  for _ in range(reps):
    sync(); st = time.perf_counter(); fn(); sync(); out.append(time.perf_counter() - st)
  return out

def bench_matmul(dev:str, sz:dict) -> list[dict]:
  from tinygrad import Tensor, TinyJit, dtypes, Device
  rows = []
  for dt in (dtypes.float32, dtypes.float16):
    for n in sz["matmul"]:
      progress(f"{dev} matmul {dt.name} {n}")
      a, b = Tensor.rand(n, n, dtype=dt, device=dev).realize(), Tensor.rand(n, n, dtype=dt, device=dev).realize()
      f = TinyJit(lambda: (a @ b).realize())
      t = statistics.median(timed(f, Device[dev].synchronize, sz["reps"], warmup=3))
      rows.append(dict(suite="matmul", name=f"matmul {dt.name} {n}", dtype=dt.name, n=n, value=2*n**3/t/1e9, unit="GFLOPS"))
  return rows

def bench_copy(dev:str, sz:dict) -> list[dict]:
  import numpy as np
  from tinygrad import Device, dtypes
  from tinygrad.device import Buffer
  rows, d = [], Device[dev]
  for nbytes in sz["copy"]:
    progress(f"{dev} copy {nbytes//MiB} MiB")
    host, back = np.random.randint(0, 255, nbytes, dtype=np.uint8), np.empty(nbytes, np.uint8)
    a, b = Buffer(dev, nbytes, dtypes.uint8).allocate(), Buffer(dev, nbytes, dtypes.uint8).allocate()
    cin = statistics.median(timed(lambda: a.copyin(memoryview(host)), d.synchronize, sz["reps"]))
    cout = statistics.median(timed(lambda: a.copyout(memoryview(back)), d.synchronize, sz["reps"]))
    assert (back == host).all(), "copyout does not return what copyin wrote"
    rows += [dict(suite="copy", name=f"copyin {nbytes//MiB} MiB", nbytes=nbytes, value=nbytes/cin/1e9, unit="GB/s"),
             dict(suite="copy", name=f"copyout {nbytes//MiB} MiB", nbytes=nbytes, value=nbytes/cout/1e9, unit="GB/s")]
    if hasattr(a.allocator, "_transfer") and dev != "CPU":
      d2d = statistics.median(timed(lambda: a.allocator._transfer(b._buf, a._buf, nbytes, src_dev=d, dest_dev=d), d.synchronize, sz["reps"]))
      rows.append(dict(suite="copy", name=f"d2d {nbytes//MiB} MiB", nbytes=nbytes, value=2*nbytes/d2d/1e9, unit="GB/s", note="read+write"))
  return rows

def bench_alloc(dev:str, sz:dict) -> list[dict]:
  from tinygrad import Device
  from tinygrad.device import BufferSpec
  rows, alloc = [], Device[dev].allocator
  for nbytes in (4096, 1*MiB, 64*MiB):
    progress(f"{dev} alloc {nbytes} B")
    ts = []
    for _ in range(sz["reps"] * 5):  # the driver's own alloc/free, under tinygrad's LRU cache
      st = time.perf_counter(); buf = alloc._alloc(nbytes, BufferSpec()); ts.append(time.perf_counter() - st); alloc._free(buf, BufferSpec())
    rows.append(dict(suite="alloc", name=f"alloc {nbytes} B", nbytes=nbytes, value=statistics.median(ts)*1e6, unit="us"))
  return rows

def bench_launch(dev:str, sz:dict) -> list[dict]:
  from tinygrad import Tensor, Device
  x = Tensor.ones(1, device=dev).contiguous().realize()
  ei = (x + 1).schedule()[-1]
  ei.run()
  d, ts = Device[dev], []
  progress(f"{dev} launch latency")
  for _ in range(1000):  # one launch + wait: what a decode step pays per non-graphed kernel
    st = time.perf_counter(); ei.prg(ei.bufs, {}); d.synchronize(); ts.append(time.perf_counter() - st)
  q = statistics.quantiles(ts, n=100)
  return [dict(suite="launch", name="launch p50", value=q[49]*1e6, unit="us"), dict(suite="launch", name="launch p99", value=q[98]*1e6, unit="us")]

def bench_elementwise(dev:str, sz:dict) -> list[dict]:
  from tinygrad import Tensor, TinyJit, Device
  n = sz["ew"] // 4
  progress(f"{dev} elementwise {n} floats")
  a, b = Tensor.rand(n, device=dev).realize(), Tensor.rand(n, device=dev).realize()
  f = TinyJit(lambda: (a * 2 + b).realize())
  t = statistics.median(timed(f, Device[dev].synchronize, sz["reps"], warmup=3))
  return [dict(suite="elementwise", name=f"a*2+b {sz['ew']//MiB} MiB", value=3*n*4/t/1e9, unit="GB/s")]

def bench_mlp(dev:str, sz:dict) -> list[dict]:
  from tinygrad import Tensor, TinyJit, Device, nn, dtypes
  h = sz["mlp"]
  layers = [nn.Linear(1024, h), nn.Linear(h, h), nn.Linear(h, 1024)]
  for l in layers:
    for p in (l.weight, l.bias): p.replace(p.to(dev).cast(dtypes.float16).realize())
  rows = []
  for batch in (1, 32):
    progress(f"{dev} mlp batch {batch}")
    x = Tensor.rand(batch, 1024, device=dev, dtype=dtypes.float16).realize()
    f = TinyJit(lambda: layers[2](layers[1](layers[0](x).relu()).relu()).realize())
    t = statistics.median(timed(f, Device[dev].synchronize, sz["reps"] * 3, warmup=3))
    rows.append(dict(suite="mlp", name=f"mlp fp16 1024-{h}-{h}-1024 b{batch}", batch=batch, value=t*1e3, unit="ms"))
  return rows

def profile_token(gen) -> dict:
  """Per-kernel device time of one decode step, summed by kernel name with the tensor ops that made it (needs JIT=2: no graph)."""
  import contextlib, io, re
  from tinygrad.helpers import Context
  with contextlib.redirect_stdout(buf:=io.StringIO()), Context(DEBUG=2): next(gen)
  by_kernel: dict[str, list] = {}
  for line in re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).splitlines():
    if not (m := re.match(r"\*\*\* \S+\s+\d+ (\S+)\s.* tm\s+([\d.]+)(us|ms|s)/.*?GB/s\)\s*(.*)$", line)): continue
    us = float(m[2]) * {"us": 1, "ms": 1e3, "s": 1e6}[m[3]]
    k = by_kernel.setdefault(m[1], [0, 0.0, m[4]]); k[0] += 1; k[1] += us
  total = sum(v[1] for v in by_kernel.values())
  top = sorted(by_kernel.items(), key=lambda kv: -kv[1][1])
  return dict(kernels=sum(v[0] for v in by_kernel.values()), total_us=total,
              top=[dict(name=n, count=c, us=round(t, 1), ops=meta) for n,(c,t,meta) in top[:40]])

def decode_from(model, token:int, pos:int):
  """greedy decode from position pos over the KV cache as it is (zeros when fresh): a step at context pos reads the cache as after a prompt
  of pos tokens, without prefilling them"""
  from tinygrad import Tensor, UOp
  v_pos, t = UOp.variable("start_pos", 1, model.max_context - 1), Tensor([[token]], dtype="int32")
  model.forward_jit.reset()
  for p in range(pos, model.max_context):
    t = model(t, v_pos.bind(p))
    yield int(t.item())

def bench_llm(dev:str, sz:dict, gguf:str|None, preset:str, mv:list[str], warmup:int, tokens:int, max_context:int, profile=False,
              start_pos=0) -> list[dict]:
  from tinygrad import Tensor, Device, nn, GlobalCounters, helpers
  from tinygrad.apps.llm import Transformer
  from tinygrad.engine import realize
  if gguf is None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from synth_gguf import write_llama_gguf
    gguf = str(write_llama_gguf(pathlib.Path(tempfile.gettempdir()) / f"synth-{preset}.gguf", preset))
  if start_pos + warmup + tokens > max_context: raise ValueError(f"--start-pos {start_pos} + {warmup + tokens} tokens > --max-context {max_context}")
  progress(f"{dev} llm load {gguf}")
  st = time.perf_counter()
  model, kv = Transformer.from_gguf(Tensor(pathlib.Path(gguf)).to(dev), max_context=max_context)
  Device[dev].synchronize()
  # bytes a decode step must read: every weight but the embedding table, of which it reads one row
  load_s, param_bytes = time.perf_counter() - st, sum(v.nbytes() for k,v in nn.state.get_state_dict(model).items() if k != "token_embd.weight")
  prompt = [kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015))
  rows = []
  for cfg in (mv or [None]):
    if cfg is not None:  # heuristic.py reads MV_* through the cached getenv: clear it and the compiled kernels, keep the weights
      for k, v in zip(("MV_BLOCKSIZE", "MV_THREADS_PER_ROW", "MV_ROWS_PER_THREAD"), cfg.split(",")): os.environ[k] = v
      helpers.getenv.cache_clear(); realize.method_cache.clear()
    for blk in model.blk:
      if hasattr(blk, "cache_kv"): del blk.cache_kv
    progress(f"{dev} llm decode MV={cfg or 'env'}: {warmup} warm-up + {tokens} timed tokens")
    gen, ts, kernels = model.generate(list(prompt)) if not start_pos else decode_from(model, prompt[-1], start_pos), [], 0
    for i in range(warmup + tokens):
      GlobalCounters.reset(); st = time.perf_counter(); next(gen); dt = time.perf_counter() - st
      if i >= warmup: ts.append(dt); kernels = GlobalCounters.kernel_count
    names = sorted({r.p.name for r in realize.method_cache.values() if hasattr(r, "p")})
    # a graphed JIT launches its kernels as one batch: count what is inside
    jit_items = model.forward_jit.captured.jit_cache if model.forward_jit.captured is not None else []
    kernels = sum(len(getattr(ei.prg, "jit_cache", [ei])) for ei in jit_items) or kernels
    med, at = statistics.median(ts), f" @{start_pos}" if start_pos else ""
    rows.append(dict(suite="llm", name=f"decode {pathlib.Path(gguf).name} MV={cfg or 'default'}{at}", mv=cfg, value=1/med, unit="tok/s",
                     p10_tok_s=1/statistics.quantiles(ts, n=10)[8], p90_tok_s=1/statistics.quantiles(ts, n=10)[0],
                     ms_per_token=med*1e3, weight_GB_s=param_bytes/med/1e9, weight_bytes=param_bytes, load_s=load_s,
                     kernels_per_token=kernels, jit_graph=not profile, prompt_len=0 if start_pos else len(prompt), start_pos=start_pos,
                     warmup=warmup, tokens=tokens, max_context=max_context,
                     n_compiled=len(names), kernel_names_sha=hashlib.sha1("\n".join(names).encode()).hexdigest()[:12]))
    progress(f"{dev} llm decode MV={cfg or 'env'}: {1/med:.1f} tok/s")
    if profile: rows[-1]["profile"] = profile_token(gen)
  return rows

def worker(args) -> dict:
  dev = args.worker
  try:
    from tinygrad import Device, Tensor
    Device[dev]; (Tensor([1.0], device=dev) + 1).realize().item()  # noqa: B018  opens the device and runs a kernel
  except Exception as e: return dict(device=dev, skipped=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no message'} (the device did not open)"[:300], rows=[])
  import tinygrad
  sz, rows = sizes(args.full, dev), []
  meta = dict(device=dev, tinygrad=str(pathlib.Path(tinygrad.__file__).parent), env={k:v for k,v in os.environ.items() if k.startswith(("MV", "BEAM", "JITBEAM", "HALF", "GGUF"))})
  if dev == "CUDA": meta["arch"] = Device[dev].arch
  for suite in args.only:
    try:
      if suite == "llm":
        rows += bench_llm(dev, sz, args.gguf, args.preset, args.mv, args.warmup, args.tokens, args.max_context, args.profile, args.start_pos)
      else: rows += globals()[f"bench_{suite}"](dev, sz)
    except Exception as e:
      progress(f"{dev} {suite} failed: {type(e).__name__}: {e}")
      rows.append(dict(suite=suite, name=suite, error=f"{type(e).__name__}: {e}"[:500]))
  for r in rows: r["device"] = dev
  return dict(**meta, rows=rows)

# ***** driver: one worker per device, then the report *****

def gpu_name() -> str|None:
  try: return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip() or None
  except (OSError, subprocess.TimeoutExpired): return None

def table(results:list[dict]) -> str:
  devs = [r["device"] for r in results if r["rows"]]
  keys = list(dict.fromkeys((row["name"], row.get("unit", "")) for r in results for row in r["rows"]))
  val = {(r["device"], row["name"]): (f"{row['value']:.4g}" if "value" in row else "error") for r in results for row in r["rows"]}
  lines = ["| benchmark | unit | " + " | ".join(devs) + " |", "| --- | --- |" + " --- |" * len(devs)]
  lines += [f"| {n} | {u} | " + " | ".join(val.get((d, n), "-") for d in devs) + " |" for n,u in keys]
  return "\n".join(lines + [f"skipped {r['device']}: {r['skipped']}" for r in results if "skipped" in r])

def plot(results:list[dict], path:pathlib.Path) -> str|None:
  try:
    import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
  except ImportError: return "matplotlib not installed"
  suites = [s for s in SUITES if any(row["suite"] == s and "value" in row for r in results for row in r["rows"])]
  if not suites: return "nothing to plot"
  fig, axes = plt.subplots(len(suites), 1, figsize=(10, 2.6*len(suites)), squeeze=False)
  for ax, s in zip(axes[:, 0], suites):
    names = list(dict.fromkeys(row["name"] for r in results for row in r["rows"] if row["suite"] == s and "value" in row))
    devs = [r for r in results if any(row["suite"] == s for row in r["rows"])]
    for i, r in enumerate(devs):
      vals = {row["name"]: row["value"] for row in r["rows"] if row["suite"] == s and "value" in row}
      ax.barh([j + i/(len(devs)+1) for j in range(len(names))], [vals.get(n, 0) for n in names], height=1/(len(devs)+1), label=r["device"])
    vals_all = [row["value"] for r in devs for row in r["rows"] if row["suite"] == s and row.get("value", 0) > 0]
    if vals_all and max(vals_all) > 100 * min(vals_all): ax.set_xscale("log")  # copies span 1 MiB..256 MiB: PCIe and HBM on one axis
    ax.set_yticks(range(len(names)), names, fontsize=7); ax.set_title(s, fontsize=9)
    ax.set_xlabel(next(row["unit"] for r in results for row in r["rows"] if row["suite"] == s and "unit" in row), fontsize=8); ax.legend(fontsize=7)
  fig.tight_layout(); fig.savefig(path, dpi=110)
  return None

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--devices", default=os.getenv("BENCH_DEVICES", ""), help="comma list; default: NV,CUDA where they open, else CPU")
  ap.add_argument("--only", default=",".join(SUITES), help=f"comma list of {','.join(SUITES)}")
  ap.add_argument("--full", action="store_true", default=bool(int(os.getenv("BENCH_FULL", "0"))), help="full sizes (or BENCH_FULL=1)")
  ap.add_argument("--out", default="bench-out")
  ap.add_argument("--gguf", help="GGUF for the decode benchmark; default: generate --preset")
  ap.add_argument("--preset", default="tiny", help="synth_gguf preset when no --gguf (llama-3.2-1b for the real shape)")
  ap.add_argument("--mv", action="append", default=[], help="MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD to sweep (repeatable)")
  ap.add_argument("--warmup", type=int, default=8); ap.add_argument("--tokens", type=int, default=32)
  ap.add_argument("--max-context", type=int, default=1024)
  ap.add_argument("--start-pos", type=int, default=0, help="decode from this position over a cache of zeros, no prompt (long-context steps)")
  ap.add_argument("--profile", action="store_true", help="also time each kernel of one decode step (runs the JIT without graphs)")
  ap.add_argument("--timeout", type=float, default=3600, help="seconds one device's worker may take")
  ap.add_argument("--worker", help=argparse.SUPPRESS)
  args = ap.parse_args()
  args.only = [s for s in args.only.split(",") if s]
  if bad := set(args.only) - set(SUITES): ap.error(f"unknown suites {bad}")
  if args.worker:
    if args.profile: os.environ["JIT"] = "2"  # per-kernel times need the JIT to launch kernels one by one; read at tinygrad's import
    print("BENCH_RESULT " + json.dumps(worker(args)), flush=True)
    return
  out = pathlib.Path(args.out); out.mkdir(parents=True, exist_ok=True)
  devices = [d for d in args.devices.split(",") if d] or [*GPU_DEVICES, "CPU"]
  results: list[dict] = []
  for dev in devices:
    if not args.devices and dev == "CPU" and any(r["rows"] for r in results): results.append(dict(device="CPU", skipped="a GPU ran", rows=[])); continue
    progress(f"worker {dev} starts")
    env = {**os.environ, dev: "1", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, __file__, "--worker", dev, "--only", ",".join(args.only), "--out", args.out, "--preset", args.preset,
           "--warmup", str(args.warmup), "--tokens", str(args.tokens), "--max-context", str(args.max_context), "--start-pos", str(args.start_pos)]
    cmd += (["--gguf", args.gguf] if args.gguf else []) + (["--full"] if args.full else []) + (["--profile"] if args.profile else []) + sum((["--mv", m] for m in args.mv), [])
    try:
      p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=args.timeout)
      res = [json.loads(l[len("BENCH_RESULT "):]) for l in p.stdout.splitlines() if l.startswith("BENCH_RESULT ")]
      results.append(res[0] if res else dict(device=dev, skipped=f"worker exited {p.returncode} without a result", rows=[]))
    except subprocess.TimeoutExpired: results.append(dict(device=dev, skipped=f"worker ran past --timeout {args.timeout}s", rows=[]))
    if "skipped" in results[-1]: progress(f"{dev} skipped: {results[-1]['skipped']}")
  report = dict(when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), host=platform.node(), cpu=platform.processor() or platform.machine(),
                gpu=gpu_name(), full=args.full, command=" ".join(sys.argv), results=results)
  (out / "bench.json").write_text(json.dumps(report, indent=1))
  (out / "bench.md").write_text(md := table(results) + "\n")
  why_not = plot(results, out / "bench.png")
  print(md + (f"plot skipped: {why_not}" if why_not else f"plot: {out/'bench.png'}") + f"\njson: {out/'bench.json'}")

if __name__ == "__main__": main()
