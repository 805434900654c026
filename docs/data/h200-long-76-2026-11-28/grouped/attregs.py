import sys, re, subprocess, tempfile
from dataclasses import replace
from tinygrad import UOp, dtypes
from tinygrad.uop.ops import Ops
from tinygrad.helpers import Target
from tinygrad.codegen import to_program
from tinygrad.renderer.cstyle import CUDARenderer
from tinygrad.runtime.support.compiler_cuda import NVRTCCompiler
from tinygrad.llm.kernels import nv
# PYTHONPATH=TREE python3 attregs.py ARCH PTXAS: registers and spills of the split attention kernels, no GPU
arch, ptxas = sys.argv[1], sys.argv[2]
for heads,kvh,hd,splits,grouped,normed in [(32,8,128,8,False,False),(32,8,128,8,True,False),(16,8,128,8,True,True),(16,8,128,8,False,True),(32,8,64,8,True,False),(32,8,64,8,False,False)]:
  ctx=4096
  out = (heads * splits * (hd + 2),)
  shapes = [out, (1, heads, 1, hd), (1, kvh, 1, hd), (1, kvh, 1, hd), (2, 1, kvh, ctx, hd), (ctx, hd)]
  var = UOp.variable('start_pos', 256, ctx-1)
  phs = [UOp.placeholder(s, dtypes.float, i) for i, s in enumerate(shapes)]
  if normed: phs += [UOp.placeholder((hd,), dtypes.half, 6), UOp.placeholder((hd,), dtypes.half, 7)]
  phs += [UOp(Ops.PARAM, src=var.src, arg=replace(var.arg, slot=len(phs)))]
  sink = nv._attention_kernel(*phs, n_kv_heads=kvh, rope_dim=hd, eps=1e-6 if normed else None, splits=splits, grouped=grouped)
  src = to_program(sink, CUDARenderer(Target("CUDA", arch=arch))).src[2].arg
  with tempfile.TemporaryDirectory() as d:
    open(f"{d}/k.ptx","wb").write(NVRTCCompiler(arch).compile(src).rstrip(b"\0"))
    err = subprocess.run([ptxas, f"-arch={arch}", "-v", "-o", f"{d}/k.cubin", f"{d}/k.ptx"], capture_output=True, text=True).stderr
  print(heads, kvh, hd, splits, "grouped" if grouped else "-", "normed" if normed else "", " | ".join(l.strip() for l in err.splitlines() if "registers" in l or "spill" in l))
