import os, sys, pathlib, time
os.environ.setdefault("DEV", "NULL:CUDA:sm_90"); os.environ.setdefault("NULL_ALLOW_COPYOUT", "1")
from tinygrad import Tensor
from tinygrad.llm.kernels import nv
nv.nv_custom_kernels_supported, nv.sm_count = (lambda d: True), (lambda d: 132)
from tinygrad.llm import model
calls = [0]
orig = model.FFNBlock.__call__
def counted(self, *a, **k):
  calls[0] += 1
  return orig(self, *a, **k)
model.FFNBlock.__call__ = counted
if len(sys.argv) > 2:
  model.BlockTraces.__call__ = lambda self, block, x, sp: block(x, sp)
m, kv = model.Transformer.from_gguf(pathlib.Path(sys.argv[1]), max_context=512)
gen = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
toks = []
for i in range(4):
  calls[0] = 0; st = time.perf_counter(); toks.append(next(gen))
  print(f"token {i+1}: {time.perf_counter()-st:.2f} s, blocks traced {calls[0]}")
print(toks)
