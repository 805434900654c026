#!/usr/bin/env python3
"""master's LLM decode kernels (tinygrad/llm/kernels/nv.py) alone: timed on a GPU, or their instructions a weight without one.

  PYTHONPATH=TREE DEV=CUDA python3 scripts/kernel_bench.py matvec [--shapes "8b glu,8b qk"] [--sweep] [--json OUT]
  PYTHONPATH=TREE DEV=CUDA python3 scripts/kernel_bench.py attention [--positions 150,1000,4000]
  PYTHONPATH=TREE python3 scripts/kernel_bench.py sass "8b glu" [--sms 132] [--arch sm_90] --bin DIR

matvec: each shape's kernel (a GLU: gate and up in one) over copies of random blocks past 600 MB (read from DRAM, as in decode), C
launches in one TinyJit graph; the median replay over C gives a launch's us and the weights' GB/s. --sweep also runs other launch shapes
(split, rows a thread, rows a workgroup, unroll, lanes a block) than _matvec_fxn's, each checked against its output. attention: the decode attention
of 32 heads of 128 (LLaMA-3.1-8B), 16 normed ones (Qwen3-1.7B) and 32 of 64 (LLaMA-3.2-1B) over 16 caches of 4096 positions.
sass: the shape's kernel as CUDA's renderer writes it, through NVRTC, then ptxas, cuobjdump and nvdisasm from DIR (Triton's wheel has
them in triton/backends/nvidia/bin): registers, and the instructions of its longest loop by opcode and a weight.
"""
from __future__ import annotations
import argparse, contextlib, json, re, statistics, subprocess, tempfile
import numpy as np
from typing import cast
from bench import timed

Q8_0, Q4_K, Q5_K, Q6_K = 8, 12, 13, 14
# name: (ggml type, rows, columns, GLU): a decode step's matvecs of LLaMA-3.1-8B Q4_K_M, LLaMA-3.2-1B Q6_K / Q4_K_M / Q8_0 and Qwen3-1.7B
# Q4_K_M
SHAPES = {"8b qk": (Q4_K, 5120, 4096, False), "8b v": (Q6_K, 1024, 4096, False), "8b o": (Q4_K, 4096, 4096, False),
          "8b glu": (Q4_K, 14336, 4096, True), "8b down": (Q6_K, 4096, 14336, False), "8b out": (Q6_K, 128256, 4096, False),
          "1b qkv": (Q6_K, 3072, 2048, False), "1b o": (Q6_K, 2048, 2048, False), "1b glu": (Q6_K, 8192, 2048, True),
          "1b down": (Q6_K, 2048, 8192, False), "1b out": (Q6_K, 128256, 2048, False), "1b qk q4_k": (Q4_K, 2560, 2048, False),
          "1b glu q4_k": (Q4_K, 8192, 2048, True), "1b qkv q8_0": (Q8_0, 3072, 2048, False), "1b glu q8_0": (Q8_0, 8192, 2048, True),
          "1b o q4_k": (Q4_K, 2048, 2048, False), "1b down q4_k": (Q4_K, 2048, 8192, False), "8b down q4_k": (Q4_K, 4096, 14336, False),
          "qwen3 qk": (Q4_K, 3072, 2048, False), "qwen3 glu": (Q4_K, 6144, 2048, True), "qwen3 down": (Q4_K, 2048, 6144, False),
          # a Q4_K_M's blocks whose attn_v is Q4_K too (llama.cpp's mix): q, k and v in one matvec
          "8b qkv": (Q4_K, 6144, 4096, False), "1b qkv q4_k": (Q4_K, 3072, 2048, False), "qwen3 qkv": (Q4_K, 4096, 2048, False)}
# (split, rows a thread, rows a workgroup, unroll[, lanes a block: Q4_K's and Q5_K's 8 or 16, else the type's])
SWEEP = [(1,1,4,4), (1,1,2,4), (1,1,8,4), (1,1,1,4), (1,2,2,2), (1,2,4,2), (1,4,1,1), (1,4,2,1), (2,1,2,4), (2,1,4,4), (2,2,2,2),
         (4,1,1,4), (1,1,4,2), (1,1,4,8), (1,2,2,4), (1,1,8,8), (2,4,1,2), (1,4,2,4), (1,2,4,8), (1,1,16,4), (1,1,4,1), (1,2,4,1),
         (1,1,2,1), (2,1,2,1), (1,1,8,1), (1,2,2,1), (2,2,2,1), (4,1,1,1), (2,1,2,2), (1,2,1,1,8), (1,2,2,1,8), (2,2,1,1,8), (2,2,2,1,8),
         (1,4,2,1,8), (2,4,1,1,8)]

def launch_shape(nv, typ:int, rows:int, cols:int, glu:bool, device:str) -> tuple[int, ...]:
  kw = nv._matvec_fxn(typ, device, cols, rows, rows, glu).__wrapped__.keywords
  return (kw["split"], kw["rows_th"], kw["rows_wg"], kw["unroll"], kw["lanes"])

@contextlib.contextmanager
def launch_shape_of(nv, shape:tuple[int, ...]|None):
  """nv.matvec's kernels with this launch shape (None: _matvec_fxn's own) inside the block"""
  real = nv._matvec_fxn
  def fxn(typ, device, cols, rows, div, glu, **kw):
    s, r, wg, u, *lanes = cast(tuple[int, ...], shape)
    return nv._kernel_fxn(nv._matvec_kernel, typ=typ, local=True, perm=nv.has_byte_perm(device), rows_wg=wg, split=s, unroll=u, rows_th=r,
                          lanes=lanes[0] if lanes else 0, glu=glu, **kw)
  if shape is not None: nv._matvec_fxn = fxn
  try: yield
  finally: nv._matvec_fxn = real

def matvec(names:list[str], sweep:bool, reps=20) -> list[dict]:
  from tinygrad import Tensor, TinyJit, Device
  from tinygrad.llm.kernels import nv
  dev, out = Device.DEFAULT, []
  for name in names:
    typ, rows, cols, glu = SHAPES[name]
    bs, nb, K = nv.QUANTS[typ]
    nbytes, rng = rows * cols // bs * nb * (2 if glu else 1), np.random.default_rng(0)
    C = max(2, -(-600_000_000 // nbytes))
    def blocks() -> Tensor:
      a = rng.integers(0, 256, size=(rows * cols // bs, nb), dtype=np.uint8)
      a[:, {Q4_K: [1, 3], Q6_K: [209], Q8_0: [1]}[typ]] = 0x20  # small finite float16 scales
      return Tensor(a.reshape(-1), device=dev).realize()
    raws, x = [blocks() for _ in range(C * (2 if glu else 1))], Tensor(rng.standard_normal(cols).astype(np.float32), device=dev).realize()
    ref = None
    for shape in [None] + (SWEEP if sweep else []):
      # past 128 weights a thread takes of a matrix, its registers spill; 8 lanes a block are Q4_K's and Q5_K's
      L = shape[4] if shape is not None and len(shape) > 4 else K
      if shape is not None and (rows % (shape[1] * shape[2]) or shape[3] * shape[1] * bs // L > 128 or (L != K and typ not in (Q4_K, Q5_K))):
        continue
      with launch_shape_of(nv, shape):
        f = TinyJit(lambda: Tensor.realize(*[nv.matvec(raws[i], typ, x, rows, up=raws[C + i] if glu else None) for i in range(C)]))
        got = f()[0].numpy()
        ts = timed(f, Device[dev].synchronize, reps)
      ok = ref is None or bool(np.allclose(got, ref, rtol=1e-3, atol=1e-3 * float(np.abs(ref).max())))
      if ref is None: ref = got
      us = statistics.median(ts) / C * 1e6
      row = dict(shape=name, launch=(*shape[:4], L) if shape else launch_shape(nv, typ, rows, cols, glu, dev), default=shape is None, us=round(us, 2),
                 GB_s=round(nbytes / us / 1e3, 1), same_output=ok)
      print(f"{name:12s} {'default' if shape is None else '':7s} split,rows_th,rows_wg,unroll,lanes={row['launch']} {us:8.2f} us "
            f"{row['GB_s']:7.1f} GB/s{'' if ok else ' OUTPUT DIFFERS'}", flush=True)
      out.append(row)
  return out

def attention(positions:list[int], reps=20) -> list[dict]:
  from tinygrad import Tensor, TinyJit, Device, UOp, nn
  from tinygrad.llm.kernels import nv
  dev, ctx, C, out = Device.DEFAULT, 4096, 16, []
  for H, KV, hd, normed in ((32, 8, 128, False), (16, 8, 128, True), (32, 8, 64, False)):
    caches = [Tensor.randn(2, 1, KV, ctx, hd, device=dev).contiguous().realize() for _ in range(C)]
    q, k, v = (Tensor.randn(1, n, 1, hd, device=dev).realize() for n in (H, KV, KV))
    f, norms = Tensor.randn(ctx, hd, device=dev).realize(), [nn.RMSNorm(hd, 1e-6) for _ in range(2 if normed else 0)]
    jits: dict[int, TinyJit] = {}
    for sp in positions:
      # start_pos bound as the model's decode_pos binds it: from the attention's SPLIT_FROM on (where the tree has it), a JIT of its own
      lo = far if (far:=getattr(nv, "SPLIT_FROM", None)) is not None and sp >= far else 0
      if (jit:=jits.get(lo)) is None: jit = jits[lo] = TinyJit(lambda sp: Tensor.realize(*[nv.attention(q, k, v, c, f, sp, *norms) for c in caches]))
      ts = timed(lambda: jit(UOp.variable("start_pos", lo, ctx-1).bind(sp)), Device[dev].synchronize, reps, warmup=3)
      out.append(dict(heads=H, kv_heads=KV, head_dim=hd, normed=normed, position=sp, us=round(statistics.median(ts) / C * 1e6, 2)))
      print(f"attention {H} heads ({KV} kv) of {hd}{', normed' if normed else ''} at {sp}: {out[-1]['us']:.2f} us", flush=True)
  return out

def loop_ops(dump:str) -> tuple[bool, dict[str, int]]:
  """the opcodes of cuobjdump's SASS in its longest loop (a branch back to an earlier address), or in all of it where there is none"""
  ins = [(int(m[1], 16), m[2]) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([^;]+);", dump)]
  back = [(int(m[1], 16), a) for a, t in ins if (m:=re.match(r"BRA(?:\.\w+)*\s+(?:\w+,\s*)?0x([0-9a-f]+)", t)) and int(m[1], 16) < a]
  lo, hi = max(back, key=lambda b: b[1] - b[0]) if back else (0, ins[-1][0])
  ops: dict[str, int] = {}
  for a, t in ins:
    if lo <= a <= hi: ops[op] = ops.get(op:=t.split()[0].split(".")[0], 0) + 1
  return bool(back), ops

def sass(name:str, sms:int, arch:str, bindir:str) -> dict:
  from tinygrad import UOp, dtypes
  from tinygrad.helpers import Target
  from tinygrad.codegen import to_program
  from tinygrad.renderer.cstyle import CUDARenderer
  from tinygrad.runtime.support.compiler_cuda import NVRTCCompiler
  from tinygrad.llm.kernels import nv
  typ, rows, cols, glu = SHAPES[name]
  bs, nb, _ = nv.QUANTS[typ]
  nv.sm_count, nv.has_local, nv.has_byte_perm = (lambda d: sms), (lambda d: True), (lambda d: True)
  split, rows_th, rows_wg, unroll, K = launch_shape(nv, typ, rows, cols, glu, "CUDA")
  views = [(rows * cols // bs * nb // dt.itemsize, dt) for dt, u in zip(nv.VIEWS, nv.used_views(typ)) if u] * (2 if glu else 1)
  phs = [UOp.placeholder((n,), dt, i) for i, (n, dt) in enumerate([(rows, dtypes.float), *views, (cols, dtypes.float)])]
  sink = nv._matvec_kernel(*phs, typ=typ, local=True, perm=True, rows_wg=rows_wg, split=split, unroll=unroll, rows_th=rows_th, lanes=K, glu=glu)
  src = to_program(sink, CUDARenderer(Target("CUDA", arch=arch))).src[2].arg
  with tempfile.TemporaryDirectory() as d:
    with open(f"{d}/k.ptx", "wb") as fh: fh.write(NVRTCCompiler(arch).compile(src).rstrip(b"\0"))
    err = subprocess.run([f"{bindir}/ptxas", f"-arch={arch}", "-v", "-o", f"{d}/k.cubin", f"{d}/k.ptx"], capture_output=True, text=True,
                         check=True).stderr
    # cuobjdump runs the nvdisasm it finds on PATH
    dump = subprocess.run([f"{bindir}/cuobjdump", "-sass", f"{d}/k.cubin"], capture_output=True, text=True, check=True, env={"PATH": bindir}).stdout
  looped, ops = loop_ops(dump)
  # a loop iteration: unroll steps of a lane's weights, for each row of the thread and each matrix; a thread of one iteration has no loop
  steps = 1 if looped else -(-(cols // bs * K) // (nv.WARP * split * unroll))
  weights = steps * unroll * rows_th * bs // K * (2 if glu else 1)
  ret = dict(shape=name, sms=sms, arch=arch, launch=(split, rows_th, rows_wg, unroll, K), registers=int(re.findall(r"Used (\d+) registers", err)[0]))
  n = sum(ops.values())
  ret |= dict(counted="loop" if looped else "kernel", instructions=n, weights=weights, per_weight=round(n / weights, 2),
              ops=dict(sorted(ops.items(), key=lambda kv: -kv[1])))
  print(json.dumps(ret))
  return ret

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  m = sub.add_parser("matvec"); m.add_argument("--shapes", default=",".join(SHAPES)); m.add_argument("--sweep", action="store_true")
  a = sub.add_parser("attention"); a.add_argument("--positions", default="150,1000,4000")
  s = sub.add_parser("sass"); s.add_argument("shape", choices=list(SHAPES)); s.add_argument("--sms", type=int, default=132)
  s.add_argument("--arch", default="sm_90"); s.add_argument("--bin", required=True, help="folder with ptxas, cuobjdump and nvdisasm")
  for p in (m, a): p.add_argument("--json")
  args = ap.parse_args()
  if args.cmd == "sass": sass(args.shape, args.sms, args.arch, args.bin)
  else:
    res = matvec(args.shapes.split(","), args.sweep) if args.cmd == "matvec" else attention([int(p) for p in args.positions.split(",")])
    if args.json:
      with open(args.json, "w") as fh: fh.write(json.dumps(res, indent=1) + "\n")
