#!/usr/bin/env python3
"""tinygrad-orin benchmark suite: one command, every device present, JSON + table + PNG.

  python scripts/bench.py                      # quick sizes, NV and CUDA where they open, else CPU
  BENCH_FULL=1 python scripts/bench.py --out bench-out    # the seed's full sizes (matmul to 4096, copies to 256 MiB)
  python scripts/bench.py --only llm --gguf model.gguf --mv 4,8,4 --mv 8,16,2
  python scripts/bench.py --devices CUDA --only llm --gguf model.gguf --sms all,14,8 --prefill 512 \
    --build "tinygrad 0.12.0=/tmp/t/base" --build "series=/tmp/t/series" --llama-bench /tmp/lc/llama-bench   # the Orin proxy table
  python scripts/bench.py --devices CUDA --only llm --zoo --sms all,8 --build "series=/tmp/t/series" --llama-bench /tmp/lc/llama-bench
  python scripts/bench.py --merge full/bench.json sms/bench.json --out merged   # columns measured in separate runs, one table
  python scripts/bench.py --merge full/bench.json sms/bench.json --out merged --doc docs/benchmarks.md   # and into the docs' table

Each device runs in its own worker process, so a device that fails to open is reported as skipped and the others
still run, and each worker reads the MV_* / BEAM environment afresh. Timings are wall clock around a device
synchronize, medians over repeats after warm-up; GFLOPS and GB/s count each input read and each output written once.
--sms limits the GPU to N streaming multiprocessors through CUDA MPS (an Orin AGX has 16 SMs; few SMs show kernels that are
bound by instruction issue rather than memory): the MPS control daemon is started for those runs (as root) and each client
gets the CUDA_MPS_ACTIVE_THREAD_PERCENTAGE under which it sees N SMs. --build runs each tinygrad tree (PYTHONPATH) in
its own workers, --llama-bench runs llama.cpp's llama-bench on the same GGUF under the same limit: one decode table.
"""
from __future__ import annotations
import argparse, contextlib, hashlib, json, os, pathlib, platform, statistics, subprocess, sys, tempfile, time
from typing import Callable, cast

SUITES = ("matmul", "copy", "alloc", "launch", "elementwise", "mlp", "llm")
GPU_DEVICES = ("NV", "CUDA")
MiB = 1 << 20
# the decode prompt (BOS and 15 ids), and llama-bench's tg128: 128 tokens decoded from an empty context, positions 0-127
PROMPT_IDS, TG_POSITIONS = list(range(1000, 1015)), 128

def first_timed(warmup:int, start_pos:int, prompt_len:int) -> int:
  """the position of the first timed decode step: from start_pos, or after the prompt, whose last position yields the first token"""
  return start_pos + warmup if start_pos else prompt_len - 1 + warmup

def decode_tokens(tokens:int|None, warmup:int, start_pos:int) -> int:
  """timed decode tokens: those given, else the steps left of tg128's positions after the prompt and the warm-up (32 from --start-pos)"""
  return tokens if tokens is not None else 32 if start_pos else TG_POSITIONS - first_timed(warmup, 0, 1 + len(PROMPT_IDS))

def sizes(full:bool, device:str) -> dict:
  if full: return dict(matmul=[256, 512, 1024, 2048, 4096], copy=[1*MiB, 4*MiB, 16*MiB, 64*MiB, 256*MiB], ew=64*MiB, mlp=4096, reps=20)
  if device == "CPU": return dict(matmul=[256, 512], copy=[1*MiB, 8*MiB], ew=4*MiB, mlp=512, reps=5)
  return dict(matmul=[256, 1024, 2048], copy=[1*MiB, 16*MiB, 64*MiB], ew=16*MiB, mlp=2048, reps=10)

def progress(msg:str): print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

# ***** measurements (run inside a worker; tinygrad imported there) *****

@contextlib.contextmanager
def counted(mod, name:str):
  """the calls of mod.name inside the block, in the list it yields ([None] where mod has no such name)"""
  n, real = [0 if hasattr(mod, name) else None], getattr(mod, name, None)
  def f(*args, **kw):
    n[0] += 1
    return real(*args, **kw)
  if real is not None: setattr(mod, name, f)
  try: yield n
  finally:
    if real is not None: setattr(mod, name, real)

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
  """Per-kernel device time of a decode step, summed by kernel name with the tensor ops that made it (needs JIT=2: no graph)."""
  import contextlib, io, re
  from tinygrad.helpers import Context
  by_kernel: dict[str, list] = {}
  # generate queues several steps a read, and hands out the others' tokens without running a kernel: ask until a step runs
  for _ in range(64):
    with contextlib.redirect_stdout(buf:=io.StringIO()), Context(DEBUG=2): next(gen)
    for line in re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).splitlines():
      if not (m := re.match(r"\*\*\* \S+\s+\d+ (\S+)\s.* tm\s+([\d.]+)(us|ms|s)/.*?GB/s\)\s*(.*)$", line)): continue
      us = float(m[2]) * {"us": 1, "ms": 1e3, "s": 1e6}[m[3]]
      k = by_kernel.setdefault(m[1], [0, 0.0, m[4]]); k[0] += 1; k[1] += us
    if by_kernel: break
  # the steps run are the launches of the kernel that runs least, once a step
  steps = min((v[0] for v in by_kernel.values()), default=1)
  top = sorted(by_kernel.items(), key=lambda kv: -kv[1][1])
  return dict(steps=steps, kernels=sum(v[0] for v in by_kernel.values()) / steps, total_us=sum(v[1] for v in by_kernel.values()) / steps,
              top=[dict(name=n, count=c / steps, us=round(t / steps, 1), ops=meta) for n,(c,t,meta) in top[:40]])

def linear_kernels(linear) -> int:
  """the kernel launches of master's captured JIT: a graph's call holds the linear of those it batches"""
  from tinygrad.uop.ops import Ops
  return sum(linear_kernels(c.src[0].src[0]) if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph" else int(c.src[0].op is Ops.PROGRAM)
             for c in linear.src)

def llm_app():
  """the tree's LLM Transformer: v0.12.0's apps/llm, or upstream master's (python -m tinygrad.llm's model)"""
  try: from tinygrad.apps.llm import Transformer
  except ImportError: from tinygrad.llm.model import Transformer
  return Transformer

def step_inputs(model) -> tuple:
  """a decode step's position variable and its other inputs past the token: master's model samples at a temperature (0: greedy) and
  counts positions from 0, 0.12.0's from 1"""
  from tinygrad import Tensor, UOp
  temp = (Tensor([0.0]),) if hasattr(model, "rollout_jit") or hasattr(model, "rollout_jits") else ()
  return UOp.variable("start_pos", 0 if temp else 1, model.max_context - 1), temp

def decode_from(model, token:int, pos:int):
  """greedy decode from position pos over the KV cache as it is (zeros when fresh): a step at context pos reads the cache as after a prompt
  of pos tokens, without prefilling them"""
  from tinygrad import Tensor
  (v_pos, temp), t = step_inputs(model), Tensor([[token]], dtype="int32")
  # master decodes through its rollout JITs (one a bound of start_pos where it has decode_pos), 0.12.0 through forward_jit
  if hasattr(model, "rollout_jits"): model.rollout_jits.clear()
  else: (model.rollout_jit if temp else model.forward_jit).reset()
  for p in range(pos, model.max_context):
    t = model(t, model.decode_pos(p) if hasattr(model, "decode_pos") else v_pos.bind(p), *temp).realize()
    yield int(t.item())

def bench_prefill(model, n:int, dev:str, at:int=0) -> dict:
  """a prompt of n tokens as a user's runs: Transformer.generate until its first token (master: chunks of 32 tokens through the
  prefill JIT; 0.12.0's series: one call), the best of runs 3-4, after a first that compiles and a second that captures; every run's
  time is kept. At a position (a later turn of a chat), after a prefix of that many tokens its caches hold"""
  from tinygrad import Device
  vocab = model.token_embd.weight.shape[0]
  toks, ts = [(1000 + i) % vocab for i in range(at + n)], []
  if at:
    if not hasattr(model, "_cached_tokens"): raise ValueError("a prompt at a position needs master's generate, which reuses a cached prefix")
    model._cached_tokens = []
    next(model.generate(toks[:at]))
  for _ in range(4):
    # master's generate reuses the prefix its caches hold: each run finds the same one (none, or the prefix of at tokens)
    if hasattr(model, "_cached_tokens"): model._cached_tokens = toks[:at]
    Device[dev].synchronize(); st = time.perf_counter(); next(model.generate(list(toks))); ts.append(time.perf_counter() - st)
  name = f"prefill {n}" + (f" @{at}" if at else "")
  progress(f"{dev} {name}: {n/min(ts[2:]):.0f} tok/s, first {ts[0]:.1f} s, second {ts[1]:.2f} s")
  return dict(suite="llm", name=name, value=n/min(ts[2:]), unit="tok/s", prompt_len=n, start_pos=at, first_s=ts[0], times_s=ts)

def step_bytes(gguf_path:str) -> int:
  """bytes of the file's weights a decode step reads: every tensor but the embedding table (one row of it), which a tied output reads whole"""
  import gguf
  tensors = {t.name: int(t.n_bytes) for t in gguf.GGUFReader(gguf_path).tensors}
  return sum(n for k, n in tensors.items() if k != "token_embd.weight" or "output.weight" not in tensors)

def bench_llm(dev:str, sz:dict, gguf:str|None, preset:str, mv:list[str], warmup:int, tokens:int, max_context:int, profile=False,
              start_pos=0, prefill=0) -> list[dict]:
  from tinygrad import Tensor, Device, GlobalCounters, helpers
  Transformer = llm_app()
  from tinygrad.engine import realize
  if gguf is None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from synth_gguf import write_new
    gguf = str(write_new(pathlib.Path(tempfile.gettempdir()) / f"synth-{preset}.gguf", preset, "q6_k"))
  if start_pos + warmup + tokens > max_context: raise ValueError(f"--start-pos {start_pos} + {warmup + tokens} tokens > --max-context {max_context}")
  if prefill and start_pos + prefill >= max_context:
    raise ValueError(f"--start-pos {start_pos} + --prefill {prefill} tokens leave no room in --max-context {max_context}")
  progress(f"{dev} llm load {gguf}")
  st = time.perf_counter()
  model, kv = Transformer.from_gguf(Tensor(pathlib.Path(gguf)).to(dev), max_context=max_context)
  Device[dev].synchronize()
  load_s, param_bytes = time.perf_counter() - st, step_bytes(gguf)
  prompt = [kv["tokenizer.ggml.bos_token_id"]] + PROMPT_IDS
  rows = []
  for cfg in (mv or [None]):
    if cfg is not None:  # heuristic.py reads MV_* through the cached getenv: clear it and the compiled kernels, keep the weights
      for k, v in zip(("MV_BLOCKSIZE", "MV_THREADS_PER_ROW", "MV_ROWS_PER_THREAD"), cfg.split(",")): os.environ[k] = v
      helpers.getenv.cache_clear(); realize.method_cache.clear()
    for blk in model.blk:
      if hasattr(blk, "cache_kv"): del blk.cache_kv
    progress(f"{dev} llm decode MV={cfg or 'env'}: {warmup} warm-up + {tokens} timed tokens")
    gen, ts, kernels, first_s = model.generate(list(prompt)) if not start_pos else decode_from(model, prompt[-1], start_pos), [], 0, 0.0
    out = []  # the tokens: builds that decode alike give the same, whatever their kernels
    for i in range(warmup + tokens):
      # master lowers what its compile cache lacks and stores each program there: the first token's count says if the cache was warm
      with counted(realize, "diskcache_put") if i == 0 else contextlib.nullcontext([None]) as compiled:
        GlobalCounters.reset(); st = time.perf_counter(); out.append(next(gen)); dt = time.perf_counter() - st
      if i == 0: first_s, first_compiled = dt, compiled[0]  # the prompt and the compile of every kernel it and the first decode step run
      if i >= warmup: ts.append(dt); kernels = GlobalCounters.kernel_count
    names = sorted({r.p.name for r in getattr(realize, "method_cache", {}).values() if hasattr(r, "p")})
    # a graphed JIT launches its kernels as one batch: count what is inside
    # master's decode JITs a bound of start_pos: the timed steps' is the last made
    jit = getattr(model, "forward_jit", None) or (list(model.rollout_jits.values())[-1] if hasattr(model, "rollout_jits") else model.rollout_jit)
    jit_items = getattr(jit.captured, "jit_cache", []) if jit.captured is not None else []
    kernels = sum(len(getattr(ei.prg, "jit_cache", [ei])) for ei in jit_items) or \
      (linear_kernels(jit.captured._linear) if hasattr(jit.captured, "_linear") else kernels if jit_items or profile else "-")
    # generate reads its tokens up to DECODE_AHEAD steps at a time (one next() carries them, the others return at once): a token's time is the
    # mean of a window of that many, every window holding one read; fewer than two windows' tokens make one window
    w = next((m.DECODE_AHEAD for n in ("tinygrad.apps.llm", "tinygrad.llm.model") if hasattr(m:=sys.modules.get(n), "DECODE_AHEAD")), 1)
    w = w if len(ts) >= 2 * w else len(ts)
    ts = [sum(ts[i:i + w]) / w for i in range(0, len(ts) - w + 1, w)]
    med, at, q = statistics.median(ts), f" @{start_pos}" if start_pos else "", statistics.quantiles(ts, n=10) if len(ts) > 1 else ts * 9
    rows.append(dict(suite="llm", name=f"decode {pathlib.Path(gguf).name} MV={cfg or 'default'}{at}", mv=cfg, value=1/med, unit="tok/s",
                     p10_tok_s=1/q[8], p90_tok_s=1/q[0],
                     ms_per_token=med*1e3, weight_GB_s=param_bytes/med/1e9, weight_bytes=param_bytes, load_s=load_s, first_token_s=first_s,
                     first_token_compiled=first_compiled,
                     kernels_per_token=kernels, jit_graph=not profile, prompt_len=0 if start_pos else len(prompt), start_pos=start_pos,
                     warmup=warmup, tokens=tokens, max_context=max_context,
                     n_compiled=len(names), kernel_names_sha=hashlib.sha1("\n".join(names).encode()).hexdigest()[:12],
                     tokens_sha=hashlib.sha1(str(out).encode()).hexdigest()[:12]))
    progress(f"{dev} llm decode MV={cfg or 'env'}: {1/med:.1f} tok/s")
    if profile: rows[-1]["profile"] = profile_token(gen)
  if prefill: rows.append(bench_prefill(model, prefill, dev, start_pos))
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
  if dev == "CUDA":
    import ctypes
    from tinygrad.runtime.autogen import cuda
    cuda.cuDeviceGetAttribute(ctypes.byref(sms:=ctypes.c_int()), cuda.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Device[dev].cu_device)
    meta.update(arch=Device[dev].arch, sms=sms.value)
  for suite in args.only:
    try:
      if suite == "llm":
        rows += bench_llm(dev, sz, args.gguf, args.preset, args.mv, args.warmup, args.tokens, args.max_context, args.profile, args.start_pos,
                          args.prefill)
      else: rows += globals()[f"bench_{suite}"](dev, sz)
    except Exception as e:
      progress(f"{dev} {suite} failed: {type(e).__name__}: {e}")
      rows.append(dict(suite=suite, name=suite, error=f"{type(e).__name__}: {e}"[:500]))
  for r in rows: r["device"] = dev
  return dict(**meta, rows=rows)

# ***** driver: one worker per device (per build and SM limit), then the report *****

MPS_ENV = {"CUDA_MPS_PIPE_DIRECTORY": "/tmp/mps-pipe", "CUDA_MPS_LOG_DIRECTORY": "/tmp/mps-log"}
SM_PROBE = ("import ctypes; c = ctypes.CDLL('libcuda.so.1'); d, n = ctypes.c_int(), ctypes.c_int(); ctx = ctypes.c_void_p(); "
            "assert c.cuInit(0) == 0 and c.cuDeviceGet(ctypes.byref(d), 0) == 0 and c.cuCtxCreate_v2(ctypes.byref(ctx), 0, d) == 0; "
            "assert c.cuDeviceGetAttribute(ctypes.byref(n), 16, d) == 0; print(n.value)")  # 16: CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

def sms_seen(pct:int|None) -> int:
  """the SMs a CUDA context sees, under MPS with this active thread percentage (None: as the process's environment has it)"""
  env = {**os.environ, **MPS_ENV, **({"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": str(pct)} if pct else {})}
  return int(subprocess.run([sys.executable, "-c", SM_PROBE], env=env, capture_output=True, text=True, check=True, timeout=60).stdout)

class MPS:
  """the CUDA MPS control daemon (needs root), started for SM-limited runs and stopped after them"""
  def __enter__(self):
    for d in MPS_ENV.values(): os.makedirs(d, exist_ok=True)
    if (rc:=subprocess.run(["nvidia-cuda-mps-control", "-d"], env={**os.environ, **MPS_ENV}).returncode):
      progress(f"nvidia-cuda-mps-control -d exited {rc}")
    return self
  def __exit__(self, *exc): subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env={**os.environ, **MPS_ENV}, timeout=60)
  def percentage(self, sms:int, total:int) -> tuple[int, int|None]:
    """the smallest active thread percentage under which a client sees at least sms SMs, and what it sees (MPS rounds to whole TPCs); where
    the SM count a client reads does not follow the limit, the percentage nearest sms SMs, what it sees unknown"""
    pct = max(1, 100 * sms // total)
    if (seen:=sms_seen(pct)) == total: return max(1, round(100 * sms / total)), None
    while seen < sms and pct < 100: seen = sms_seen(pct:=pct + 1)
    while pct > 1 and (lower:=sms_seen(pct - 1)) >= sms: pct, seen = pct - 1, lower
    return pct, seen

def parse_build(spec:str) -> dict:
  """LABEL=PATH[;ENV=VAL...]: a tinygrad tree (PYTHONPATH) under a label, with environment variables for its workers"""
  label, rest = spec.split("=", 1)
  path, *envs = rest.split(";")
  return dict(label=label, path=path, env=dict(e.split("=", 1) for e in envs if e))

def run_worker(args, dev:str, env:dict, first_token_only=False) -> dict:
  progress(f"worker {dev} starts {' '.join(f'{k}={v}' for k,v in env.items() if k not in os.environ or os.environ[k] != v)}")
  warmup, tokens, prefill, profile = (0, 2, 0, False) if first_token_only else (args.warmup, args.tokens, args.prefill, args.profile)
  cmd = [sys.executable, __file__, "--worker", dev, "--only", "llm" if first_token_only else ",".join(args.only), "--out", args.out, "--preset", args.preset,
         "--warmup", str(warmup), "--tokens", str(tokens), "--max-context", str(args.max_context), "--start-pos", str(args.start_pos),
         "--prefill", str(prefill)]
  cmd += (["--gguf", args.gguf] if args.gguf else []) + (["--full"] if args.full else []) + (["--profile"] if profile else []) + sum((["--mv", m] for m in args.mv), [])
  try:
    # tinygrad >= 0.13 (a tree with tinygrad/llm/) picks its device with DEV=, 0.12.0 with NAME=1
    tree = pathlib.Path(env.get("PYTHONPATH", "").split(":")[0] or pathlib.Path(__file__).resolve().parent.parent/"build"/"tinygrad")
    pick = {"DEV": dev} if (tree/"tinygrad"/"llm").is_dir() else {dev: "1"}
    p = subprocess.run(cmd, env={**env, **pick, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, text=True, timeout=args.timeout)
    res = [json.loads(l[len("BENCH_RESULT "):]) for l in p.stdout.splitlines() if l.startswith("BENCH_RESULT ")]
    ret = res[0] if res else dict(device=dev, skipped=f"worker exited {p.returncode} without a result", rows=[])
  except subprocess.TimeoutExpired: ret = dict(device=dev, skipped=f"worker ran past --timeout {args.timeout}s", rows=[])
  if "skipped" in ret: progress(f"{dev} skipped: {ret['skipped']}")
  return ret

def first_token_again(rows:list[dict], again:list[dict]):
  """a second process's first token (the caches the first filled) into the decode row, as first_token_again_*"""
  dec = lambda rs: next((r for r in rs if r["name"].startswith("decode") and "first_token_s" in r), None)
  if (d:=dec(rows)) and (a:=dec(again)): d.update({k.replace("first_token", "first_token_again"): a[k] for k in a if k.startswith("first_token")})

def llama_bench(path:str, gguf:str, env:dict, reps:int, depth:int=0) -> dict:
  """llama.cpp's llama-bench on the GGUF, every layer on the GPU: tg128 (decode) and pp512 (prompt), as its README measures; with a
  depth, both after that many tokens in the context"""
  cmd = [path, "-m", gguf, "-ngl", "99", "-p", "512", "-n", "128", "-r", str(reps), "-o", "json", *(["-d", str(depth)] if depth else [])]
  progress("llama-bench " + " ".join(cmd[1:]))
  p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
  if p.returncode != 0: return dict(device="llama.cpp", skipped=f"llama-bench exited {p.returncode}: {p.stderr.strip()[-300:]}", rows=[])
  at = f" @{depth}" if depth else ""
  rows = [dict(suite="llm", name=f"llama-bench {'pp' if r['n_prompt'] else 'tg'}{r['n_prompt'] or r['n_gen']}{at}", value=r["avg_ts"],
               stddev=r["stddev_ts"], unit="tok/s", backends=r.get("backends"), gpu_info=r.get("gpu_info"), build=r.get("build_commit"),
               flash_attn=r.get("flash_attn")) for r in json.loads(p.stdout)]
  return dict(device="llama.cpp", command=" ".join(cmd), rows=rows)

def gpu_name() -> str|None:
  try: return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip() or None
  except (OSError, subprocess.TimeoutExpired): return None

def first_token(row:dict) -> tuple[float|None, int]:
  """(seconds, programs compiled) of a decode row's warmest first token: the second process's where there is one"""
  p = "first_token_again" if "first_token_again_s" in row else "first_token"
  return row.get(f"{p}_s"), row.get(f"{p}_compiled") or 0

def proxy_table(results:list[dict]) -> str:
  """decode and prompt tok/s of every build side by side across the SM limits, each x llama.cpp's on the same model under the same limit
  where it ran; a row a model and build where the results name their models (--zoo)"""
  cols, keys = list(dict.fromkeys(r["sms_label"] for r in results)), list(dict.fromkeys((r.get("model"), r["build"]) for r in results))
  models = any(m for m, _ in keys)
  def row(key, col, kind) -> dict|None:
    return next((x for r in results if (r.get("model"), r["build"]) == key and r["sms_label"] == col for x in r["rows"]
                 if "value" in x and x["name"].startswith(("decode", "llama-bench tg") if kind == "tg" else ("prefill", "llama-bench pp"))), None)
  def cell(key, col, kind) -> str:
    if (v:=row(key, col, kind)) is None: return "-"
    ref = row((key[0], "llama.cpp"), col, kind) if key[1] != "llama.cpp" else None
    return f"{v['value']:.1f}" + (f" ({v['value'] / ref['value']:.2f}x)" if ref else "")
  kinds = [k for k in ("tg", "pp") if any(row(key, c, k) for key in keys for c in cols)]
  head = [f"{'decode' if k == 'tg' else 'prompt'} tok/s, {c}" for k in kinds for c in cols] + ["load s", "first token s", "kernels a step"]
  if models: head = ["build"] + head[:len(kinds) * len(cols)] + ["weights GB/s"] + head[len(kinds) * len(cols):]
  lines = [f"| {'model' if models else 'build'} | " + " | ".join(head) + " |", "| --- |" + (" --- |" if models else "") + " ---: |" * (len(head) - models)]
  for key in keys:
    tg = [(c, r) for c in cols if (r:=row(key, c, "tg"))]
    first = tg[0][1] if tg else {}
    load, gbs = (f"{first[k]:.1f}" if k in first else "" for k in ("load_s", "weight_GB_s"))
    # the first token with the warmest caches (the 1.5 s is with warm ones): a second process's where the run timed one, from the
    # column that compiled least, named where not the first
    fc, (fs, fn) = min(((c, first_token(r)) for c, r in tg), key=lambda cf: cf[1][1], default=(None, (None, 0)))
    fts = "" if fs is None else f"{fs:.1f}" + (f" ({fn} compiled)" if fn else f" ({fc})" if fc != tg[0][0] else "")
    lines.append("| " + (f"{key[0]} | " if models else "") + f"{key[1]} | " + " | ".join(cell(key, c, k) for k in kinds for c in cols) +
                 (f" | {gbs}" if models else "") + f" | {load} | {fts} | {first.get('kernels_per_token', '')} |")
  windows = sorted({decode_window(x) for r in results for x in r["rows"] if x["name"].startswith("decode") and "tokens" in x})
  return "\n".join(lines + [f"skipped {r['build']}, {r['sms_label']}{', ' + r['model'] if r.get('model') else ''}: {r['skipped']}"
                            for r in results if "skipped" in r] + [f"\ndecode: {w}" for w in windows])

def decode_window(row:dict) -> str:
  """the decode steps a row timed, by their positions (llama-bench's tg128: 0-127)"""
  first = first_timed(row["warmup"], row.get("start_pos", 0), row.get("prompt_len", 1))
  return f"positions {first}-{first + row['tokens'] - 1} timed, after {row['warmup']} warm-up steps" + \
         (f" and a {row['prompt_len']}-token prompt" if row.get("prompt_len") else "")

def write_doc(path:pathlib.Path, md:str, source:str):
  """the table between the doc's "<!-- bench table -->" and "<!-- end bench table -->" lines, regenerated from source (a bench.json)"""
  text, begin, end = path.read_text(), "<!-- bench table -->\n", "<!-- end bench table -->"
  if begin not in text or end not in text: raise SystemExit(f"{path}: no '{begin.strip()}' ... '{end}' block to write the table into")
  a, b = text.index(begin) + len(begin), text.index(end)
  path.write_text(text[:a] + f"Generated by `scripts/bench.py --merge {source} --doc {path}`; do not edit by hand.\n\n" + md + "\n" + text[b:])

def plot_proxy(results:list[dict], path:pathlib.Path) -> str|None:
  try:
    import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
  except ImportError: return "matplotlib not installed"
  cols, builds = list(dict.fromkeys(r["sms_label"] for r in results)), list(dict.fromkeys(r["build"] for r in results))
  val = {(r["build"], r["sms_label"]): x["value"] for r in results for x in r["rows"]
         if "value" in x and x["name"].startswith(("decode", "llama-bench tg"))}
  fig, ax = plt.subplots(figsize=(8, 3.5))
  for i, b in enumerate(builds):
    ax.bar([j + i / (len(builds) + 1) for j in range(len(cols))], [val.get((b, c), 0) for c in cols], width=1 / (len(builds) + 1), label=b)
  ax.set_xticks([j + (len(builds) - 1) / (2 * (len(builds) + 1)) for j in range(len(cols))], cols)
  ax.set_ylabel("decode tok/s"); ax.legend(fontsize=7)
  fig.tight_layout(); fig.savefig(path, dpi=110)
  return None

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

def merge(paths:list[str], out:pathlib.Path, doc:str|None=None):
  reports = [json.loads(pathlib.Path(p).read_text()) for p in paths]
  if len(gpus:={r["gpu"] for r in reports}) > 1: raise SystemExit(f"the runs were on different GPUs: {gpus}")
  report = dict(when=" / ".join(r["when"] for r in reports), host=reports[0]["host"], cpu=reports[0]["cpu"], gpu=reports[0]["gpu"],
                full=reports[0]["full"], command=[r["command"] for r in reports], results=[x for r in reports for x in r["results"]])
  out.mkdir(parents=True, exist_ok=True)
  (out / "bench.json").write_text(json.dumps(report, indent=1))
  (out / "bench.md").write_text(md:=proxy_table(report["results"]) + "\n")
  if doc: write_doc(pathlib.Path(doc), md, " ".join(paths))
  why_not = plot_proxy(report["results"], out / "bench.png")
  print(md + (f"plot skipped: {why_not}" if why_not else f"plot: {out/'bench.png'}") + f"\njson: {out/'bench.json'}")

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--devices", default=os.getenv("BENCH_DEVICES", ""), help="comma list; default: NV,CUDA where they open, else CPU")
  ap.add_argument("--only", default=",".join(SUITES), help=f"comma list of {','.join(SUITES)}")
  ap.add_argument("--full", action="store_true", default=bool(int(os.getenv("BENCH_FULL", "0"))), help="full sizes (or BENCH_FULL=1)")
  ap.add_argument("--out", default="bench-out")
  ap.add_argument("--gguf", help="GGUF for the decode benchmark; default: generate --preset")
  ap.add_argument("--preset", default="tiny", help="synth_gguf preset when no --gguf (llama-3.2-1b for the real shape)")
  ap.add_argument("--mv", action="append", default=[], help="MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD to sweep (repeatable)")
  ap.add_argument("--warmup", type=int, default=8)
  ap.add_argument("--tokens", type=int, help="timed decode tokens; default: through position 127 after the prompt and the warm-up, as "
                  "llama-bench's tg128 decodes positions 0-127 (32 with --start-pos)")
  ap.add_argument("--max-context", type=int, default=1024)
  ap.add_argument("--start-pos", type=int, default=0, help="decode from this position over a cache of zeros, no prompt (long-context steps); "
                  "--prefill's prompt after a prefix of this many tokens (a chat's later turn); llama-bench at this depth")
  ap.add_argument("--prefill", type=int, default=0, help="also time a prompt of this many tokens through generate, to its first token (512: llama-bench's pp512)")
  ap.add_argument("--profile", action="store_true", help="also time each kernel of one decode step (runs the JIT without graphs)")
  ap.add_argument("--sms", default="", help="comma list of SM counts (or 'all') to run under, through CUDA MPS: one column each")
  ap.add_argument("--build", action="append", default=[], help="LABEL=PATH[;ENV=VAL...]: a tinygrad tree to run, with its environment (repeatable)")
  ap.add_argument("--llama-bench", help="llama-bench binary: tg128 and pp512 on --gguf under each --sms limit")
  ap.add_argument("--first-token-again", action="store_true",
                  help="after each run, time the first token again in a new process, the compile and schedule caches warm (the issue's 1.5 s)")
  ap.add_argument("--zoo", action="store_true", help="the llm suite on every model of synth_gguf.ZOO (written into --out/gguf) instead of --gguf")
  ap.add_argument("--llama-reps", type=int, default=3)
  ap.add_argument("--timeout", type=float, default=3600, help="seconds one device's worker may take")
  ap.add_argument("--merge", nargs="+", metavar="BENCH_JSON", help="one side-by-side report (JSON, table, PNG) from the bench.json of runs that "
                  "measured different --sms columns (a run per device-time slot), into --out")
  ap.add_argument("--doc", help="with --merge: also write the table into this markdown file's '<!-- bench table -->' block")
  ap.add_argument("--worker", help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.merge: return merge(args.merge, pathlib.Path(args.out), args.doc)
  args.only, args.tokens = [s for s in args.only.split(",") if s], decode_tokens(args.tokens, args.warmup, args.start_pos)
  if bad := set(args.only) - set(SUITES): ap.error(f"unknown suites {bad}")
  if args.worker:
    if args.profile: os.environ["JIT"] = "2"  # per-kernel times need the JIT to launch kernels one by one; read at tinygrad's import
    print("BENCH_RESULT " + json.dumps(worker(args)), flush=True)
    return
  if args.llama_bench and not (args.gguf or args.zoo): ap.error("--llama-bench needs --gguf or --zoo")
  out = pathlib.Path(args.out); out.mkdir(parents=True, exist_ok=True)
  models: list[tuple[str|None, str|None]] = [(None, args.gguf)]
  if args.zoo:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from synth_gguf import ZOO, write_zoo
    models = [(f"{p} {q}", str(f)) for (p, q), f in zip(ZOO, write_zoo(out / "gguf"))]
  devices = [d for d in args.devices.split(",") if d] or [*GPU_DEVICES, "CPU"]
  builds = [parse_build(b) for b in args.build] or [dict(label="tinygrad", path=None, env={})]
  sms_list = [s for s in args.sms.split(",") if s] or ["all"]
  total = sms_seen(None) if sms_list != ["all"] else None
  results: list[dict] = []
  meta = dict(host=platform.node(), cpu=platform.processor() or platform.machine(), gpu=gpu_name(), full=args.full, command=" ".join(sys.argv))
  def save():
    # after every model, so that a run cut short keeps what it measured
    (out / "bench.json").write_text(json.dumps(dict(when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **meta, results=results), indent=1))
  for sms in sms_list:
    mps = MPS() if sms != "all" else None
    with mps or contextlib.nullcontext():
      pct, seen = mps.percentage(int(sms), total) if mps else (None, total)
      label = "full GPU" if sms == "all" else f"{seen} SMs" if seen else f"{sms} SMs ({pct}%)"
      if mps: progress(f"MPS: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={pct} gives {seen} of {total} SMs")
      base_env = {**os.environ, **(MPS_ENV if mps else {}), **({"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": str(pct)} if pct else {})}
      for model, args.gguf in models:
        tag = dict(sms_label=label, sms_limit=sms, mps_pct=pct, sms_seen=seen, **({"model": model} if model else {}))
        for b in builds:
          path = {"PYTHONPATH": os.pathsep.join([b["path"], *filter(None, [os.environ.get("PYTHONPATH")])])} if b["path"] else {}
          env = {**base_env, **b["env"], **path}
          for dev in devices:
            if not args.devices and dev == "CPU" and any(r["rows"] for r in results if r["build"] == b["label"] and r["sms_label"] == label and
                                                         r.get("model") == model):
              results.append(dict(device="CPU", skipped="a GPU ran", rows=[], build=b["label"], **tag)); continue
            results.append(dict(**run_worker(args, dev, env), build=b["label"], build_env=b["env"], **tag))
            if args.first_token_again and "llm" in args.only: first_token_again(results[-1]["rows"], run_worker(args, dev, env, first_token_only=True)["rows"])
        if args.llama_bench:
          results.append(dict(**llama_bench(args.llama_bench, cast(str, args.gguf), base_env, args.llama_reps, args.start_pos), build="llama.cpp", **tag))
        save()
  save()
  side_by_side = len(builds) > 1 or len(sms_list) > 1 or args.llama_bench or args.zoo
  md = (proxy_table(results) if side_by_side else table(results)) + "\n"
  (out / "bench.md").write_text(md)
  why_not = (plot_proxy if side_by_side else plot)(results, out / "bench.png")
  print(md + (f"plot skipped: {why_not}" if why_not else f"plot: {out/'bench.png'}") + f"\njson: {out/'bench.json'}")

if __name__ == "__main__": main()
