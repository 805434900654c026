#!/usr/bin/env python3
"""The kernels of one LLaMA decode step as a GPU would run them, without a GPU: global x local size, bytes, flops, transcendentals.

Builds the model from a synth_gguf preset's dims with unloaded weights on the NULL device (nothing runs), captures the kernels of
one decode step (T=1, symbolic start_pos, the JIT's path), and lowers each with the CUDA (or NV) renderer's heuristic. Figures
are per launch at --pos, from the lowered code: loads and stores of global memory as the threads execute them (a value read by
many threads counts each time), ALU flops without indexing, and transcendentals (exp2, log2, sin, sqrt, reciprocal).
  usage: python scripts/decode_kernels.py [--preset llama-3.2-1b] [--renderer cuda:sm_90 | nv:sm_87] [--sms 132] [--pos 64] [--max-context 1024]
         [--quantized] [--json FILE]
Needs PYTHONPATH with the tinygrad tree to inspect. --sms gives the renderer the device's SM count (132 an H100, 16 an Orin AGX; 14 and 8
the MPS proxies), from which the matvec heuristic sizes a quantized matvec's threads; MV_* override the heuristic as on a GPU."""
from __future__ import annotations
import argparse, functools, json, operator, os, pathlib, re, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from synth_gguf import PRESETS, ROPE_THETA, RMS_EPS  # noqa: E402

TRANSCENDENTAL = ("EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL")

def build(preset:str, max_context:int, quantized:bool):
  from tinygrad import Tensor, Device, nn, dtypes
  from tinygrad.apps.llm import Transformer, QuantLinear
  Device.DEFAULT = "NULL"  # nothing runs: the kernels are only captured and lowered here
  p = PRESETS[preset]
  model = Transformer(num_blocks=p["n_layers"], dim=p["dim"], hidden_dim=p["ffn"], n_heads=p["n_heads"], n_kv_heads=p["n_kv_heads"],
                      norm_eps=RMS_EPS, vocab_size=p["n_normal"] + p["n_special"], head_dim=p["dim"] // p["n_heads"], rope_theta=ROPE_THETA,
                      max_context=max_context)
  if quantized:  # every linear but the embedding as Q6_K blocks, as GGUF_QUANT=1 loads the synthetic file
    for owner in [*model.blk, model]:
      for name, lin in list(vars(owner).items()):
        if isinstance(lin, nn.Linear): setattr(owner, name, QuantLinear(lin.weight.shape[1], lin.weight.shape[0], 14))
  for blk in model.blk: getattr(blk, "fuse_projections", lambda: None)()  # what Transformer.from_gguf does after loading, where it does
  # the norms and the embedding in fp16 also with --quantized, as from_gguf loads them (HALF=1); the Q6_K blocks keep their integer words
  for t in nn.state.get_parameters(model): t.replace(Tensor.empty(*t.shape, dtype=t.dtype if dtypes.is_int(t.dtype) else "float16"))
  return model

def decode_step(model, pos:int) -> list:
  from tinygrad import Tensor, UOp
  from tinygrad.engine import realize
  from tinygrad.uop.ops import Ops
  class Capture:
    def __init__(self): self.items: list = []
    def add(self, ei): self.items.append(ei)
  sp = UOp.variable("start_pos", 1, model.max_context - 1).bind(pos)
  model.forward(Tensor([[5]], dtype="int32"), sp).realize()  # the first step also makes the KV caches
  realize.capturing.append(cap:=Capture())
  try: model.forward(Tensor([[5]], dtype="int32"), sp).realize()
  finally: realize.capturing.remove(cap)
  return [ei for ei in cap.items if ei.ast.op is Ops.SINK]

def lowered(ast, renderer, pos:int) -> dict:
  """launch dims and per-launch counts of one kernel at start_pos=pos"""
  from tinygrad.codegen import get_program
  from tinygrad.uop.ops import Ops, sym_infer
  prg = get_program(ast, renderer)
  ev = lambda x: int(sym_infer(x, {"start_pos": pos}))
  at = lambda u: u.substitute({v: v.const_like(pos) for v in u.toposort() if v.op is Ops.DEFINE_VAR}).simplify()
  ld = st = 0
  tr: dict[str, int] = {}
  foot: dict[tuple, tuple] = {}  # (buffer, LOAD/STORE, its bytes, element size) -> (bytes its addresses can reach, lowest and highest element + 1)
  mults, stack = 1, []
  for u in prg.uops:
    if u.op is Ops.RANGE: stack.append(mults); mults = mults * ev(u.src[0])
    elif u.op is Ops.END: mults = stack.pop()
    elif u.op is Ops.SPECIAL: mults = mults * ev(u.src[0])
    elif u.op in (Ops.LOAD, Ops.STORE):
      buf = u
      while len(buf.src): buf = buf.src[0]
      if buf.op is not Ops.DEFINE_GLOBAL: continue
      sz = u.dtype.itemsize if u.op is Ops.LOAD else u.src[1].dtype.itemsize
      if u.op is Ops.LOAD: ld += sz * mults
      else: st += sz * mults
      idx = u.src[0]
      while idx.op is Ops.CAST: idx = idx.src[0]
      # the address only, not a gate (a store gated to one thread of a group reaches one element per address): at most one element per
      # combination of the loops and threads it depends on, and at most its span
      addr = at(idx.src[1] if idx.op is Ops.INDEX else idx)
      n = functools.reduce(operator.mul, [ev(a.src[0]) for a in addr.toposort() if a.op in (Ops.RANGE, Ops.SPECIAL)], 1)
      n0, lo, hi = foot.get(key:=(buf.arg, u.op, buf.ptrdtype.size * buf.dtype.itemsize, buf.dtype.itemsize), (0, addr.vmax, addr.vmin))
      foot[key] = (n0 + sz * n, min(lo, addr.vmin), max(hi, addr.vmax + sz // buf.dtype.itemsize))
    elif u.op.name in TRANSCENDENTAL: tr[u.op.name] = tr.get(u.op.name, 0) + mults * u.dtype.count
  read, written = (sum(min(nbytes, n, int(hi - lo) * isz) for (_, o, nbytes, isz), (n, lo, hi) in foot.items() if o is op)
                   for op in (Ops.LOAD, Ops.STORE))
  return dict(name=prg.name, grid="x".join(str(ev(g)) for g in prg.global_size), block="x".join(str(ev(l)) for l in prg.local_size or [1, 1, 1]),
              read=read, written=written, loads=ld, stores=st, flops=ev(prg.estimates.ops), tr=tr,
              opts=[f"{o.op.name} {o.axis} {o.arg}" for o in (prg.applied_opts or ())])

def what(ei) -> str:
  names = [m.name for m in ei.metadata] if ei.metadata else []
  return ",".join(dict.fromkeys(names))[:60] or "-"

def table(items:list, renderer, pos:int) -> tuple[list[dict], str]:
  from tinygrad.helpers import ansistrip
  rows: dict[tuple, dict] = {}
  for ei in items:
    k = lowered(ei.ast, renderer, pos)
    name = re.sub(r"n\d+$", "", ansistrip(k.pop("name")))  # the same kernel in each layer gets a numbered name
    r = rows.setdefault((name, what(ei), k["flops"], str(k["tr"])), dict(kernel=name, what=what(ei), launches=0, **k))
    r["launches"] += 1
  out = list(rows.values())
  tot = lambda f: sum(r["launches"] * f(r) for r in out)
  lines = ["| kernel | tensor ops | launches | grid x block | read B | written B | loads issued B | flops | transcendentals | opts |",
           "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |"]
  for r in out:
    trs = " ".join(f"{n.lower()} {c}" for n, c in r["tr"].items()) or "-"
    lines.append(f"| `{r['kernel']}` | {r['what']} | {r['launches']} | {r['grid']} x {r['block']} | {r['read']} | {r['written']} | {r['loads']} | "
                 f"{r['flops']} | {trs} | {', '.join(r['opts'])} |")
  trs_all = sum(sum(r["tr"].values()) * r["launches"] for r in out)
  lines.append(f"| **step** | | {tot(lambda r: 1)} | | {tot(lambda r: r['read'])} | {tot(lambda r: r['written'])} | {tot(lambda r: r['loads'])} | "
               f"{tot(lambda r: r['flops'])} | {trs_all} | |")
  return out, "\n".join(lines)

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--preset", default="llama-3.2-1b", choices=list(PRESETS))
  ap.add_argument("--renderer", default="cuda:sm_90", help="cuda:ARCH (DEV=CUDA, the H100 runs) or nv:ARCH (DEV=NV, sm_87 on Orin)")
  ap.add_argument("--pos", type=int, default=64, help="start_pos the symbolic sizes are evaluated at")
  ap.add_argument("--max-context", type=int, default=1024)
  ap.add_argument("--quantized", action="store_true", help="linears as Q6_K QuantLinear, as a GPU loads a Q6_K GGUF")
  ap.add_argument("--sms", type=int, help="the device's SM count, as its renderer has it (CUDA and NV read it off the GPU)")
  ap.add_argument("--json", help="also write the rows here")
  args = ap.parse_args()
  from tinygrad.renderer.cstyle import CUDARenderer, NVRenderer
  kind, arch = args.renderer.split(":")
  renderer = {"cuda": CUDARenderer, "nv": NVRenderer}[kind](arch, args.sms)
  from tinygrad import Device
  # nothing runs on NULL, but it lowers with the GPU's renderer (apps.llm writes the RMSNorm with workgroups where the device has them)
  null, (_, compiler) = Device["NULL"], Device["NULL"]._select_compiler_pair()
  null._select_compiler_pair = lambda: (renderer, compiler)
  model = build(args.preset, args.max_context, args.quantized)
  items = decode_step(model, args.pos)
  rows, md = table(items, renderer, args.pos)
  mv = " ".join(f"{k}={v}" for k, v in os.environ.items() if k.startswith("MV"))
  print(f"{args.preset}, {args.renderer}, {args.sms or 'no'} SMs, start_pos {args.pos}, max_context {args.max_context}{', ' + mv if mv else ''}"
        f"{', Q6_K' if args.quantized else ', fp16'}: {len(items)} kernels a step")
  print(md)
  if args.json: pathlib.Path(args.json).write_text(json.dumps(dict(args=vars(args), kernels=len(items), rows=rows), indent=1))

if __name__ == "__main__": main()
