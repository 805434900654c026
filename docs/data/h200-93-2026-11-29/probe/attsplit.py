# the decode attention below SPLIT_FROM (start_pos bound from 0, as decode_pos binds it) with a head's positions split in S runs, S
# forced (1 = the tree's), each model's heads; interleaved in one process. argv: TREE/scripts OUT.json [positions] [splits]
import sys, statistics, json
sys.path.insert(0, sys.argv[1])
from bench import timed
from tinygrad import Tensor, TinyJit, Device, UOp, nn
from tinygrad.llm.kernels import nv
dev, ctx, C, out = Device.DEFAULT, 4096, 32, []
POS = [int(p) for p in sys.argv[3].split(",")] if len(sys.argv) > 3 else [23, 40, 80, 127, 200]
SPL = [int(p) for p in sys.argv[4].split(",")] if len(sys.argv) > 4 else [1, 2, 4, 8, 16]
forced = [1]
nv.attention_splits = lambda heads, device, first: forced[0]
for H, KV, hd, normed in ((16, 8, 128, True), (32, 8, 128, False), (32, 8, 64, False)):
  caches = [Tensor.randn(2, 1, KV, ctx, hd, device=dev).contiguous().realize() for _ in range(C)]
  q, k, v = (Tensor.randn(1, n, 1, hd, device=dev).realize() for n in (H, KV, KV))
  f, norms = Tensor.randn(ctx, hd, device=dev).realize(), [nn.RMSNorm(hd, 1e-6) for _ in range(2 if normed else 0)]
  jits, res = {}, {}
  for rnd in range(5):
    for p in POS:
      for S in SPL:
        if (jit:=jits.get(S)) is None: jit = jits[S] = TinyJit(lambda sp, S=S: (forced.__setitem__(0, S), Tensor.realize(*[nv.attention(q, k, v, c, f, sp, *norms) for c in caches]))[1])
        forced[0] = S
        ts = timed(lambda: jit(UOp.variable("start_pos", 0, nv.SPLIT_FROM-1).bind(p)), Device[dev].synchronize, 10, warmup=3 if rnd == 0 else 1)
        res.setdefault((S, p), []).extend(t / C * 1e6 for t in ts)
  ref = None
  for S in SPL:
    forced[0] = S
    o = nv.attention(q, k, v, caches[0], f, UOp.variable("start_pos", 0, nv.SPLIT_FROM-1).bind(POS[-1]), *norms).numpy()
    if ref is None: ref = o
    print(f"attention {H}/{KV} of {hd} at {POS[-1]} split {S}: max diff to split 1 {float(abs(o - ref).max()):.3g}", flush=True)
  for (S, p), ts in sorted(res.items(), key=lambda x: (x[0][1], x[0][0])):
    out.append(dict(heads=H, kv_heads=KV, head_dim=hd, normed=normed, splits=S, position=p, us=round(statistics.median(ts), 2)))
    print(f"attention {H}/{KV} of {hd}{' normed' if normed else ''} at {p:4d} split {S:2d} {out[-1]['us']:7.2f} us", flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)
