#!/usr/bin/env python3
"""One LLaMA-3.2-1B projection as a single kernel, timed on the device: fp16 weights vs Q6_K blocks dequantized inside
the matvec, the way the series lays them out now (apps/llm QuantLinear) and the flat layout it had before
(x @ ggml_blocks_to_tensor(blocks).T). Prints one line per (shape, form, MV) and writes JSON.

  python3 scripts/qmatvec_bench.py --dev CUDA --mv 4,64,1 --mv 4,32,1 --lanes 8,16 --out qmv.json

--lanes sets apps.llm.QUANT_LANES (patch 0033: lanes a block, 32/lanes consecutive weights a lane) for the q6_k form; a tree without 0033
has no QUANT_LANES and runs its own layout (32 lanes, one weight each).

Each kernel runs over enough copies of its weights (>= 256 MB together) that they come from DRAM, not L2, as they do in
decode; the figure is the median device time of one launch (ExecItem.run(wait=True)), GB/s counts the weight bytes.
"""
from __future__ import annotations
import argparse, json, math, os, pathlib, statistics, sys, time
import numpy as np

SHAPES = {"q|o": (2048, 2048), "k|v": (2048, 512), "gate|up": (2048, 8192), "down": (8192, 2048), "lm_head": (2048, 128256)}

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--dev", default="CUDA")
  ap.add_argument("--mv", action="append", default=[], help="MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD[,NAME=VALUE...] for the Q6_K kernels")
  ap.add_argument("--ref-mv", default="4,64,1", help="MV for the fp16 and flat Q6_K reference kernels")
  ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of: " + " ".join(SHAPES))
  ap.add_argument("--forms", default="q6_k,q6_k flat,fp16", help="comma list of: q6_k (QuantLinear of this tree), q6_k flat, fp16")
  ap.add_argument("--lanes", default="", help="comma list of QUANT_LANES for the q6_k form (trees with patch 0033)")
  ap.add_argument("--reps", type=int, default=40)
  ap.add_argument("--out", default="qmatvec.json")
  args = ap.parse_args()
  from tinygrad import Tensor, Device, dtypes, helpers, nn
  from tinygrad.apps import llm
  from tinygrad.apps.llm import QuantLinear, quant_blocks
  from tinygrad.engine import realize
  sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
  from synth_gguf import random_q6_k
  rng, rows = np.random.default_rng(0), []
  forms = {"q6_k": lambda lin, x: lin(x), "q6_k flat": lambda lin, x: x.linear(nn.state.ggml_blocks_to_tensor(lin.raw, 14).cast(x.dtype).T),
           "fp16": lambda lin, x: x.linear(lin.w16.T)}
  for shape in args.shapes.split(","):
    in_f, out_f = SHAPES[shape]
    raw = Tensor(random_q6_k(rng, out_f, in_f).reshape(out_f, in_f // 256, 210), device=args.dev).realize()
    w16 = nn.state.ggml_blocks_to_tensor(raw, 14).cast(dtypes.half).realize()
    lins = []
    for _ in range(max(1, math.ceil(256e6 / w16.nbytes()))):  # copies of the weights, together past any L2
      lin = QuantLinear(in_f, out_f, 14)
      # QuantLinear's uint32 words (quant_blocks: each block padded to 212 bytes), the bytes for the flat form
      lin.blocks, lin.w16, lin.raw = quant_blocks(raw + 0).realize(), (w16 + 0).realize(), (raw + 0).realize()
      lins.append(lin)
    x = Tensor(rng.standard_normal((1, 1, in_f)).astype(np.float16), device=args.dev).realize()
    ref = x.linear(w16.T).float().numpy()
    for form, f in [(n, forms[n]) for n in args.forms.split(",")]:
      for lanes, mv in [(l, m) for l in ([int(l) for l in args.lanes.split(",") if l] or [None]) for m in args.mv] if form == "q6_k" else [(None, args.ref_mv)]:
        # B,T,R then any NAME=VALUE of the heuristic (e.g. MV_THREADS_PER_SM=0), the earlier setting's extras undone
        for k in [k for k in os.environ if k.startswith("MV_")]: del os.environ[k]
        for k, v in zip(("MV_BLOCKSIZE", "MV_THREADS_PER_ROW", "MV_ROWS_PER_THREAD"), mv.split(",")[:3]): os.environ[k] = v
        os.environ.update(e.split("=", 1) for e in mv.split(",")[3:])
        if lanes: llm.QUANT_LANES = lanes
        lanes = getattr(llm, "QUANT_LANES", 32) if form == "q6_k" else None
        helpers.getenv.cache_clear(); realize.method_cache.clear()
        st = time.perf_counter()
        # the matvec is the last kernel; before it, a kernel may make x's buffer (float32 since patch 0038): run those once, untimed
        scheds = [f(lin, x).schedule() for lin in lins]
        for si in [si for sched in scheds for si in sched[:-1]]: si.lower().run()
        eis = [sched[-1].lower() for sched in scheds]
        out = eis[0].bufs[0]
        compile_s = time.perf_counter() - st
        for ei in eis[:2]: ei.run(wait=True)
        ts = [eis[i % len(eis)].run(wait=True) for i in range(args.reps)]
        got = np.frombuffer(out.as_buffer(), dtype=np.float16).astype(np.float32)
        err = float(np.abs(got - ref.flatten()).max() / np.abs(ref).max())
        us = statistics.median(ts) * 1e6
        nbytes = (w16 if form == "fp16" else raw).nbytes()
        rows.append(dict(shape=shape, in_f=in_f, out_f=out_f, form=form, mv=mv, lanes=lanes, kernel=eis[0].prg.p.function_name, us=us, weight_GB_s=nbytes / us / 1e3,
                         opts=[str(o) for o in eis[0].prg.p.applied_opts], max_rel_err=err, compile_s=compile_s, copies=len(lins)))
        print(f"{shape:8s} {form:10s} MV={mv:28s} lanes={lanes or '-':<2} {us:8.1f} us {nbytes/us/1e3:7.0f} GB/s  err {err:.1e}  "
              f"{eis[0].prg.p.function_name} {eis[0].prg.p.local_size}", flush=True)
  json.dump(dict(device=Device[args.dev].renderer.arch if hasattr(Device[args.dev].renderer, "arch") else args.dev, rows=rows),
            open(args.out, "w"), indent=1)

if __name__ == "__main__": main()
