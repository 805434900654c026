"""The kernels of one decode step of a GGUF as CUDA would run them, without a GPU: DEV=NULL:CUDA:sm_90 JIT=2 NULL_ALLOW_COPYOUT=1
  usage: python step_kernels.py FILE.gguf [--nv] [--at N]   (--nv: nv_custom_kernels_supported on NULL, whose renderer is CUDA's here, an
  H100's 132 SMs; --at: a prompt of N more tokens first)
prints the kernel names of the last decode JIT's step, one a line"""
import re, sys
from tinygrad.llm import gguf
from tinygrad.llm.model import Transformer
from tinygrad.llm.kernels import nv
from tinygrad.uop.ops import Ops

if __name__ == "__main__":
  at = int(sys.argv[sys.argv.index("--at") + 1]) if "--at" in sys.argv else 0
  if "--nv" in sys.argv: nv.nv_custom_kernels_supported, nv.sm_count = (lambda d: True), (lambda d: 132)
  gguf.TensorIO = lambda t: open(sys.argv[1], "rb", buffering=0)  # the header from the file: NULL holds no bytes
  m, _ = Transformer.from_gguf(sys.argv[1], max_context=64 + at)
  gen = m.generate([0, 5, 9] + [i % 256 for i in range(at)])
  for _ in range(4): next(gen)  # the prompt, a decode step, the JIT's capture, a replay
  print("\n".join(re.sub(r"\x1b\[\d+m", "", c.src[0].arg.name) for c in list(m.rollout_jits.values())[-1].captured._linear.src if c.src[0].op is Ops.PROGRAM))
