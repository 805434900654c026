#!/usr/bin/env python3
"""Instructions per weight of the quantized decode matvecs of LLaMA-3.2-1B (Q4_K/Q6_K weights as GPUs load them), counted on the CPU: no GPU needed.

  PYTHONPATH=build/tinygrad:. python3 scripts/qmatvec_count.py [--types q6_k,q4_k] [--sms 16] [--mv 4,64,1] [--no-emu] [--json out.json]

One decode step (T=1, start_pos 30) of a one-layer LLaMA-3.2-1B-shaped model (+ the tied lm_head) is scheduled on the NULL device with
every projection a QuantLinear; each kernel that reads a projection's blocks (the RMSNorm, residual and SiLU fused into it as decode
has them) is lowered for sm_87 with both renderers:
- cuda_c: NVRenderer -> NVRTC. ptx: PTXRenderer -> nvJitLink. PTX lines of the loop that loads the blocks, per weight (static).
- SASS of the same loop from the cubin (static), by kind, where nvdisasm is found ($NVDISASM or PATH; the nvidia-cuda-nvdisasm wheel
  has one): all instructions, global/shared loads (LD), I2F/F2I/F2F conversions (CVT: 16/clk/SM on sm_86/87, 1/8 of FP32 rate).
- emu: the kernel run on the emulated Orin's PTX interpreter (orin_emu/ptx) over its first workgroups: executed PTX
  instructions per weight, prologue and cross-thread reduce included (thread_instructions / weights the workgroups cover).
"loop/w" = loop instructions / weights a thread covers per iteration. The Orin figures at the end are estimates, not measurements:
  ALU ms/token = SASS instr/weight x weights / (16 SMs x 128 lanes x 1.3 GHz), CVT ms = cvt/weight x weights / (16 x 16 x 1.3 GHz),
  LD ms = loads/weight x weights / (16 x 32 x 1.3 GHz), memory ms = bytes / 204.8 GB/s.
"""
from __future__ import annotations
import argparse, json, os, re, shutil, subprocess, sys, tempfile, pathlib
import numpy as np

PROJ = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")
TYPES = {"q4_k": 12, "q6_k": 14}
ORIN = dict(sms=16, lanes=128, cvt=16, ld=32, ghz=1.3, gbs=204.8)
N_LAYERS = 16

def decode_kernels(ggml_type:int):
  """{projection: (ExecItem, in_f, out_f)} of one decode step, layer 0 and the lm_head"""
  from tinygrad import Tensor, nn, dtypes, Device
  from tinygrad.apps.llm import Transformer, QuantLinear
  from tinygrad.engine import realize
  from tinygrad.uop.ops import Ops
  Device.DEFAULT = "NULL"
  m = Transformer(num_blocks=1, dim=2048, hidden_dim=8192, n_heads=32, n_kv_heads=8, norm_eps=1e-5, vocab_size=128256, head_dim=64,
                  rope_theta=500000.0, max_context=1024)
  lins = {a: (m.blk[0], a) for a in PROJ} | {"lm_head": (m, "output")}
  for owner, attr in lins.values():
    w = getattr(owner, attr).weight
    setattr(owner, attr, QuantLinear(w.shape[1], w.shape[0], ggml_type))
  # fp16 norm and embedding weights, as from_gguf loads them (HALF=1)
  for p in nn.state.get_parameters(m): p.replace(Tensor.empty(*p.shape, dtype=dtypes.half if dtypes.is_float(p.dtype) else p.dtype))
  class Capture(list):
    def add(self, ei): self.append(ei)
  realize.capturing.append(cap:=Capture())
  try: m.forward(Tensor([[5]], dtype="int32"), 30).realize()
  finally: realize.capturing.remove(cap)
  out = {}
  for name, (owner, attr) in lins.items():
    lin = getattr(owner, attr)
    eis = [ei for ei in cap if ei.ast.op is Ops.SINK and any(b is lin.blocks.uop.buffer for b in ei.bufs)]
    assert len(eis) == 1, f"{name}: {len(eis)} kernels read its blocks"
    out[name] = (eis[0], lin.blocks.shape[1] * 256, lin.blocks.shape[0])
  return out

INSTR = re.compile(r"^\s*(@!?%?\w+\s+)?([a-z][\w.]*)[^:]*;\s*$")
def ptx_loop(ptx:str) -> list[str]:
  """the instructions of the PTX loop (label .. backward bra) that holds the most global loads"""
  lines, labels, best = [l.split("//")[0].strip() for l in ptx.splitlines()], {}, []
  for i, l in enumerate(lines):
    if re.match(r"^[\$\w]+:$", l): labels[l[:-1]] = i
    if (mm:=re.search(r"\bbra(\.uni)?\s+([\$\w]+);", l)) and mm[2] in labels and labels[mm[2]] < i:
      body = [x for x in lines[labels[mm[2]]:i+1] if INSTR.match(x)]
      if sum("ld.global" in x for x in body) > sum("ld.global" in x for x in best): best = body
  return best

SASS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)")
def sass_loop(sass:str) -> list[str]:
  """opcodes of the SASS loop (label .. backward BRA) with the most global loads"""
  ins, labels, best = [], {}, []
  for l in sass.splitlines():
    if (mm:=re.match(r"^\s*(\.L_x_\d+):", l)): labels[mm[1]] = len(ins)
    if (mm:=SASS.search(l)):
      ins.append(mm[3])
      if mm[3] == "BRA" and (t:=re.search(r"`\((\.L_x_\d+)\)", l)) and t[1] in labels and labels[t[1]] < len(ins) - 1:
        body = ins[labels[t[1]]:]
        if sum(o.startswith("LDG") for o in body) > sum(o.startswith("LDG") for o in best): best = body
  return best

def sass_kinds(ops:list[str]) -> dict[str, int]:
  return {"all": len(ops), "ld": sum(o.startswith(("LDG", "LDS", "LD.", "LDC")) for o in ops),
          "cvt": sum(o.split(".")[0] in ("I2F", "F2I", "F2F", "I2FP", "F2IP") for o in ops),
          "fp32": sum(o.split(".")[0] in ("FADD", "FMUL", "FFMA") for o in ops)}

def nvdisasm() -> str|None:
  if (p:=os.environ.get("NVDISASM")) or (p:=shutil.which("nvdisasm")): return p
  try:
    import nvidia
    return next((str(f) for d in nvidia.__path__ for f in pathlib.Path(d).glob("*/bin/nvdisasm")), None)
  except ImportError: return None

def disassemble(tool:str, cubin:bytes) -> str:
  with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(cubin); f.flush()
    return subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout

def emu_count(p, cubin:bytes, ei, in_f:int, out_f:int, wgs:int=2) -> float:
  """executed PTX thread-instructions per weight over the first wgs workgroups (the emulated Orin's PTX interpreter)"""
  from orin_emu.ptx import sm, launch
  from orin_emu.ptx.testing import DictMemory, Loaded, nv_cbuf0, SHARED_WINDOW, LOCAL_WINDOW
  mem = DictMemory()
  vas = [mem.map(max(b.nbytes, 1))[0] for b in ei.bufs]
  ld = Loaded(mem, cubin, p.function_name)
  gs, ls = p.launch_dims({})
  grid = (min(wgs, gs[0]), 1, 1)
  before = sm.STATS["thread_instructions"]
  launch(ld.image(), grid=grid, block=tuple(ls), cbuf0=nv_cbuf0(cubin, vas, []), shared_bytes=0x400, mem=mem, shared_window=SHARED_WINDOW,
         local_window=LOCAL_WINDOW, program_va=ld.prog_va)
  return (sm.STATS["thread_instructions"] - before) / (in_f * out_f * grid[0] / np.prod(gs))

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--types", default="q6_k,q4_k")
  ap.add_argument("--mv", help="MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD (default: the heuristic's choice)")
  ap.add_argument("--proj", default=",".join(PROJ + ("lm_head",)), help="comma list of projections to print")
  ap.add_argument("--sms", type=int, help="the renderer's SM count (what the matvec heuristic sizes threads to; 16 an Orin AGX, 8 its MPS proxy)")
  ap.add_argument("--no-emu", action="store_true")
  ap.add_argument("--json")
  args = ap.parse_args()
  for k, v in zip(("MV_BLOCKSIZE", "MV_THREADS_PER_ROW", "MV_ROWS_PER_THREAD"), args.mv.split(",") if args.mv else ()): os.environ[k] = v
  sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
  from orin_emu.ptx.testing import compilers
  from tinygrad.codegen import get_program
  from tinygrad.nn.state import GGML_BLOCKS
  from tinygrad.runtime.support.compiler_cuda import CUDACompiler
  from tinygrad.uop.ops import Ops, AxisType
  tool, backends, rows = nvdisasm(), compilers(), []
  for ren, _ in backends.values(): ren.compute_units = args.sms
  print(f"nvdisasm: {tool or 'not found, no SASS columns'}  MV={args.mv}  SMs={args.sms}")
  print(f"{'type':5s} {'proj':11s} {'be':6s} {'kernel':22s} {'w/thr':>6s} {'ptx loop/w':>10s} {'sass/w':>7s} {'ld/w':>5s} {'cvt/w':>5s} {'fp32/w':>6s} {'emu/w':>6s}")
  for tname in args.types.split(","):
    for proj, (ei, in_f, out_f) in decode_kernels(TYPES[tname]).items():
      if proj not in args.proj.split(","): continue
      for be, (ren, comp) in backends.items():
        p = get_program(ei.ast, ren)
        cubin = comp.compile(p.src)
        ptx = CUDACompiler("sm_87").compile(p.src).decode() if be == "nv" else p.src
        gs, ls = p.launch_dims({})
        per_thread = in_f * out_f / (int(np.prod(gs)) * int(np.prod(ls)))
        loops = [u for u in p.uops if u.op is Ops.RANGE and u.arg[-1] is AxisType.REDUCE]
        trips = loops[0].src[0].arg if loops else 1
        per_iter = per_thread / trips
        body = ptx_loop(ptx)
        r = dict(type=tname, proj=proj, backend="cuda_c" if be == "nv" else "ptx", kernel=p.function_name, in_f=in_f, out_f=out_f,
                 opts=[str(o) for o in p.applied_opts], weights_per_thread=per_thread, weights_per_iter=per_iter,
                 ptx_loop=len(body), ptx_loop_per_w=len(body) / per_iter, bytes=out_f * in_f // GGML_BLOCKS[TYPES[tname]][0] * GGML_BLOCKS[TYPES[tname]][1])
        if tool:
          k = sass_kinds(sass_loop(disassemble(tool, cubin)))
          r |= {f"sass_{n}_per_w": v / per_iter for n, v in k.items()}
        if not args.no_emu: r["emu_per_w"] = emu_count(p, cubin, ei, in_f, out_f)
        rows.append(r)
        f = lambda key, w=6, d=1: f"{r[key]:{w}.{d}f}" if key in r else " " * (w - 1) + "-"
        print(f"{tname:5s} {proj:11s} {r['backend']:6s} {p.function_name:22s} {per_thread:6.0f} {r['ptx_loop_per_w']:10.2f} {f('sass_all_per_w', 7, 2)} "
              f"{f('sass_ld_per_w', 5, 2)} {f('sass_cvt_per_w', 5, 2)} {f('sass_fp32_per_w', 6, 2)} {f('emu_per_w', 6, 2)}", flush=True)
    # Orin estimates for a whole token: 16 layers of the 7 projections + the lm_head, cuda_c kernels
    tok = [r for r in rows if r["type"] == tname and r["backend"] == "cuda_c"]
    n = lambda r: r["in_f"] * r["out_f"] * (1 if r["proj"] == "lm_head" else N_LAYERS)
    weights, nbytes = sum(n(r) for r in tok), sum(r["bytes"] * (1 if r["proj"] == "lm_head" else N_LAYERS) for r in tok)
    est = {"weights": weights, "bytes": nbytes, "mem_ms": nbytes / ORIN["gbs"] / 1e6}
    if tool:
      for key, rate in (("sass_all_per_w", ORIN["lanes"]), ("sass_cvt_per_w", ORIN["cvt"]), ("sass_ld_per_w", ORIN["ld"])):
        est[key.split("_")[1] + "_ms"] = sum(r[key] * n(r) for r in tok) / (ORIN["sms"] * rate * ORIN["ghz"] * 1e9) * 1e3
    if len(tok) < len(PROJ) + 1: continue
    print(f"{tname} Orin estimate per token (cuda_c, {weights/1e9:.2f} G weights, {nbytes/1e9:.2f} GB): " +
          "  ".join(f"{k} {v:.2f}" for k, v in est.items() if k.endswith("_ms")))
    rows.append(dict(type=tname, estimate=est))
  if args.json: json.dump(rows, open(args.json, "w"), indent=1)

if __name__ == "__main__": main()
