# decode attention variants interleaved in one process: (threads, v loads a thread) for hd 128, and the split from a lower position
import sys, statistics, json
sys.path.insert(0, sys.argv[1])
from bench import timed
from tinygrad import Tensor, TinyJit, Device, UOp, nn
from tinygrad.llm.kernels import nv
dev, ctx, C, out = Device.DEFAULT, 4096, 48, []
real_thr, real_k = nv._attention_threads, nv._attention_kernel
import inspect
SRC = inspect.getsource(real_k)
def variant(old, new):
  assert old in SRC, old
  ns = dict(nv.__dict__); exec(SRC.replace(old, new), ns); return ns["_attention_kernel"]
KERNELS = {"nopv": variant("vj = (j3 < sp).where(kv[((n_kv_heads + kvh) * ctx + j3.valid(j3 < sp)) * hd + d], vn)", "vj = vn"),
           "nok": variant("ks = [kv[(kvh * ctx + j.valid(j < sp)) * hd + e] for e in range(hd)]", "ks = [qk[n * hd + e] for e in range(hd)]")}
VARS = {"base": ((128, 1), 256), "u4": ((128, 4), 256), "t256": ((256, 1), 256), "t256u2": ((256, 2), 256), "t256u4": ((256, 4), 256), "nopv": ((128, 1), 256), "nok": ((128, 1), 256)}
for H, KV, hd, normed in ((16, 8, 128, True), (32, 8, 128, False), (32, 8, 64, False)):
  caches = [Tensor.randn(2, 1, KV, ctx, hd, device=dev).contiguous().realize() for _ in range(C)]
  q, k, v = (Tensor.randn(1, n, 1, hd, device=dev).realize() for n in (H, KV, KV))
  f, norms = Tensor.randn(ctx, hd, device=dev).realize(), [nn.RMSNorm(hd, 1e-6) for _ in range(2 if normed else 0)]
  jits, res = {}, {}
  for rnd in range(5):
    for sp in (40, 80, 127, 200, 1000):
      for name, (tu, sf) in VARS.items():
        if hd == 64 and name not in ("base", "nopv", "nok"): continue
        nv._attention_threads, nv.SPLIT_FROM = (lambda d, tu=tu: (256, 4) if d <= 64 else tu), sf
        nv._kernel_fxn.cache_clear(); nv._attention_kernel = KERNELS.get(name, real_k)
        lo = sf if sp >= sf else 0
        if (jit:=jits.get((name, lo))) is None: jit = jits[(name, lo)] = TinyJit(lambda sp: Tensor.realize(*[nv.attention(q, k, v, c, f, sp, *norms) for c in caches]))
        ts = timed(lambda: jit(UOp.variable("start_pos", lo, ctx-1).bind(sp)), Device[dev].synchronize, 10, warmup=3 if rnd == 0 else 1)
        res.setdefault((name, sp), []).extend(t / C * 1e6 for t in ts)
  for sp in (80, 200, 1000):
    outs = {}
    for name, (tu, sf) in VARS.items():
      if hd == 64 and name not in ("base", "nopv", "nok"): continue
      nv._attention_threads, nv.SPLIT_FROM = (lambda d, tu=tu: (256, 4) if d <= 64 else tu), sf
      nv._kernel_fxn.cache_clear(); nv._attention_kernel = KERNELS.get(name, real_k)
      outs[name] = nv.attention(q, k, v, caches[0], f, UOp.variable("start_pos", sf if sp >= sf else 0, ctx-1).bind(sp), *norms).numpy()
    print(f"attention {H}/{KV} of {hd} at {sp}: max diff to base", {n: float(abs(o - outs['base']).max()) for n, o in outs.items()}, flush=True)
  for (name, sp), ts in sorted(res.items(), key=lambda x: (x[0][1], x[0][0])):
    out.append(dict(heads=H, kv_heads=KV, head_dim=hd, normed=normed, variant=name, position=sp, us=round(statistics.median(ts), 2)))
    print(f"attention {H}/{KV} of {hd}{' normed' if normed else ''} at {sp:4d} {name:8s} {out[-1]['us']:7.2f} us", flush=True)
  nv._attention_threads, nv.SPLIT_FROM = real_thr, 256
json.dump(out, open(sys.argv[2], "w"), indent=1)
