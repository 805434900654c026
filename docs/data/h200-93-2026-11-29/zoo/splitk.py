# a prompt's matmul (T tokens x K) times (N x K)^T as the tree's prompt_matmul runs it, against K split in s runs: a custom kernel whose
# rows are (run, token) pairs, the runs an outer axis, under matmul_tiles' opts for s*T rows of K/s, then the runs summed. argv: OUT.json; C copies of x and w
import sys, json, statistics, time, functools
import numpy as np
from tinygrad import Tensor, TinyJit, Device, UOp, dtypes
from tinygrad.uop.ops import AxisType, KernelInfo
from tinygrad.llm.kernels import nv
dev, C, T, out = Device.DEFAULT, 4, 512, []
SHAPES = {"1b qkv": (2048, 3072), "1b o": (2048, 2048), "1b gate": (2048, 8192), "1b down": (8192, 2048), "qwen3 qkv": (2048, 4096),
          "qwen3 gate": (2048, 6144), "qwen3 down": (6144, 2048), "8b qkv": (4096, 6144), "8b o": (4096, 4096), "8b gate": (4096, 14336),
          "8b down": (14336, 4096)}
def split_kernel(o:UOp, x:UOp, w:UOp, s:int, opts) -> UOp:
  Ks = x.shape[1] // s
  t, n, b, k = UOp.range(x.shape[0], 0), UOp.range(o.shape[1], 1), UOp.range(s, 2), UOp.range(Ks, 3, AxisType.REDUCE)
  acc = (x[t, b * Ks + k] * w[n, b * Ks + k]).cast(dtypes.float).reduce(k, arg=nv.Ops.ADD)
  return o[b * x.shape[0] + t, n].store(acc).end(t, n, b).sink(arg=KernelInfo(name=f"matmul_split{s}_{o.shape[1]}_{Ks}", opts_to_apply=opts))
def split_matmul(x:Tensor, w:Tensor, s:int) -> Tensor|None:
  (N, K), opts = w.shape, nv.matmul_tiles(s * T, w.shape[0], w.shape[1] // s, dev)
  if opts is None or K % (16 * s): return None
  part = Tensor.empty(s * T, N, dtype=dtypes.float, device=dev).custom_kernel(x, w, fxn=nv._kernel_fxn(split_kernel, s=s, opts=opts))[0]
  return part.reshape(s, T, N).sum(0)
for name, (K, N) in SHAPES.items():
  xs = [Tensor.randn(T, K, device=dev).half().contiguous().realize() for _ in range(C)]
  ws = [(Tensor.randn(N, K, device=dev) * 0.05).half().contiguous().realize() for _ in range(C)]
  ref = xs[0].numpy().astype(np.float32) @ ws[0].numpy().astype(np.float32).T
  res = {}
  for s in (1, 2, 4, 8):
    fn = (lambda x, w: nv.prompt_matmul(x, w)) if s == 1 else functools.partial(split_matmul, s=s)
    if fn(xs[0], ws[0]) is None: continue
    jit = TinyJit(lambda fn=fn: Tensor.realize(*[fn(x, w) for x, w in zip(xs, ws)]))
    for _ in range(3): jit()
    ts = []
    for _ in range(20):
      Device[dev].synchronize(); st = time.perf_counter(); jit(); Device[dev].synchronize(); ts.append((time.perf_counter() - st) / C)
    err = float(np.abs(fn(xs[0], ws[0]).numpy() - ref).max())
    us = statistics.median(ts) * 1e6
    out.append(dict(sms=nv.sm_count(dev), shape=name, T=T, K=K, N=N, split=s, us=round(us, 2), TFLOPS=round(2 * T * K * N / us / 1e6, 1), err=err))
    print(f"{nv.sm_count(dev)} SMs {name:11s} {T}x{K}x{N} split {s}: {us:8.2f} us {out[-1]['TFLOPS']:6.1f} TFLOPS err {err:.3g}", flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
