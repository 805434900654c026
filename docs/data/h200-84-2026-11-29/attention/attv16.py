# the decode attention of the tree's nv.py against a second nv.py (argv[2]) interleaved in one process, each model's heads; argv[4]: positions
import sys, statistics, json, importlib.util
sys.path.insert(0, sys.argv[1])
from bench import timed
from tinygrad import Tensor, TinyJit, Device, UOp, nn
from tinygrad.llm.kernels import nv
spec = importlib.util.spec_from_file_location("nv_b", sys.argv[2]); nvb = importlib.util.module_from_spec(spec); spec.loader.exec_module(nvb)
MODS = {"base": nv, "v16": nvb}
dev, ctx, C, out = Device.DEFAULT, 4096, 48, []
POS = [int(p) for p in sys.argv[4].split(",")] if len(sys.argv) > 4 else [40, 80, 127, 200, 300, 1000, 3000]
for H, KV, hd, normed in ((16, 8, 128, True), (32, 8, 128, False), (32, 8, 64, False)):
  caches = [Tensor.randn(2, 1, KV, ctx, hd, device=dev).contiguous().realize() for _ in range(C)]
  q, k, v = (Tensor.randn(1, n, 1, hd, device=dev).realize() for n in (H, KV, KV))
  f, norms = Tensor.randn(ctx, hd, device=dev).realize(), [nn.RMSNorm(hd, 1e-6) for _ in range(2 if normed else 0)]
  jits, res = {}, {}
  for rnd in range(5):
    for sp in POS:
      for name, m in MODS.items():
        lo = m.SPLIT_FROM if sp >= m.SPLIT_FROM else 0
        if (jit:=jits.get((name, lo))) is None: jit = jits[(name, lo)] = TinyJit(lambda sp, m=m: Tensor.realize(*[m.attention(q, k, v, c, f, sp, *norms) for c in caches]))
        ts = timed(lambda: jit(UOp.variable("start_pos", lo, ctx-1).bind(sp)), Device[dev].synchronize, 10, warmup=3 if rnd == 0 else 1)
        res.setdefault((name, sp), []).extend(t / C * 1e6 for t in ts)
  for sp in [p for p in (80, 300, 3000) if p in POS]:
    outs = {name: m.attention(q, k, v, caches[0], f, UOp.variable("start_pos", m.SPLIT_FROM if sp >= m.SPLIT_FROM else 0, ctx-1).bind(sp), *norms).numpy() for name, m in MODS.items()}
    print(f"attention {H}/{KV} of {hd} at {sp}: max diff v16 to base {float(abs(outs['v16'] - outs['base']).max()):.3g}", flush=True)
  for (name, sp), ts in sorted(res.items(), key=lambda x: (x[0][1], x[0][0])):
    out.append(dict(heads=H, kv_heads=KV, head_dim=hd, normed=normed, variant=name, position=sp, us=round(statistics.median(ts), 2)))
    print(f"attention {H}/{KV} of {hd}{' normed' if normed else ''} at {sp:4d} {name:5s} {out[-1]['us']:7.2f} us", flush=True)
json.dump(out, open(sys.argv[3], "w"), indent=1)
