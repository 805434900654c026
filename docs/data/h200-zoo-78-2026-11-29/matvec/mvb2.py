#!/usr/bin/env python3
# matvec kernels alone: weights from DRAM (copies past L2), one TinyJit graph of C launches; per-kernel us and weight GB/s
import sys, time, json, itertools, os, statistics
import numpy as np
from tinygrad import Tensor, TinyJit, Device, dtypes
from tinygrad.llm.kernels import nv
DEV = "CUDA"
Q4_K, Q6_K, Q8_0 = nv.Q4_K, nv.Q6_K, nv.Q8_0
SHAPES = {
  "1b qk": (Q4_K, 2560, 2048, False), "1b o": (Q4_K, 2048, 2048, False), "1b glu": (Q4_K, 8192, 2048, True), "1b down": (Q4_K, 2048, 8192, False),
  "qw qk": (Q4_K, 3072, 2048, False), "qw glu": (Q4_K, 6144, 2048, True), "qw down": (Q4_K, 2048, 6144, False),
  "8b qk": (Q4_K, 5120, 4096, False), "8b o": (Q4_K, 4096, 4096, False), "8b glu": (Q4_K, 14336, 4096, True), "8b down": (Q4_K, 4096, 14336, False),
}
OV = None
orig = nv._matvec_fxn
def fx(typ, device, cols, rows, div, glu, **kw):
  if OV is None: return orig(typ, device, cols, rows, div, glu, **kw)
  s, r, wg, u, k = OV
  return nv._kernel_fxn(nv._matvec_kernel, typ=typ, local=True, perm=True, rows_wg=wg, split=s, unroll=u, rows_th=r, lanes=k, glu=glu, **kw)
nv._matvec_fxn = fx

def default(typ, rows, cols, glu):
  kw = orig(typ, DEV, cols, rows, rows, glu).__wrapped__.keywords
  return (kw["split"], kw["rows_th"], kw["rows_wg"], kw["unroll"], kw.get("lanes", 16))

def run(name, variants, reps=20):
  typ, rows, cols, glu = SHAPES[name]
  bs, nb, _ = nv.QUANTS[typ]
  nbytes = rows * cols // bs * nb * (2 if glu else 1)
  C = max(2, -(-600_000_000 // nbytes))
  rng = np.random.default_rng(0)
  def blocks():
    a = rng.integers(0, 256, size=(rows * cols // bs, nb), dtype=np.uint8)
    # finite fp16 scales: the d fields small
    for o in ({Q4_K: (0, 2), Q6_K: (208,), Q8_0: (0,)}[typ]): a[:, o+1] = 0x20
    return Tensor(a.reshape(-1), device=DEV).realize()
  raws = [blocks() for _ in range(C * (2 if glu else 1))]
  x = Tensor(rng.standard_normal(cols).astype(np.float32), device=DEV).realize()
  ref, out = None, []
  global OV
  for v in [None] + variants:
    OV = v
    if v is not None and (rows % (v[1] * v[2]) or v[3] * v[1] * (bs // v[4]) > 128): continue
    try:
      f = TinyJit(lambda: Tensor.realize(*[nv.matvec(raws[i], typ, x, rows, up=raws[C+i] if glu else None) for i in range(C)]))
      for _ in range(3): r = f()
      got = r[0].numpy()
      if ref is None: ref = got
      ok = bool(np.allclose(got, ref, rtol=1e-3, atol=1e-2 * float(np.abs(ref).max())))
      ts = []
      for _ in range(reps):
        Device[DEV].synchronize(); st = time.perf_counter(); f(); Device[DEV].synchronize(); ts.append(time.perf_counter() - st)
      us = statistics.median(ts) / C * 1e6
      p = default(typ, rows, cols, glu) if v is None else v
      out.append(dict(shape=name, v=p, default=v is None, us=round(us, 2), gbs=round(nbytes / us / 1e3, 1), ok=ok))
      print(f"{name:10s} {'def' if v is None else '   '} s,r,wg,u,k={p} {us:8.2f} us {nbytes/us/1e3:7.1f} GB/s {'ok' if ok else 'WRONG'}", flush=True)
    except Exception as e: print(f"{name} {v} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
  return out

if __name__ == "__main__":
  names = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else list(SHAPES)
  VAR = [(1,2,1,1,8), (1,2,2,1,8), (1,2,4,1,8), (2,2,1,1,8), (2,2,2,1,8), (4,2,1,1,8)]
  if os.getenv('VARS') is not None: VAR = [tuple(int(a) for a in v.split(',')) for v in os.getenv('VARS').split()]
  res = []
  for n in names: res += run(n, VAR)
  if len(sys.argv) > 2: open(sys.argv[2], "w").write(json.dumps(res, indent=1))
