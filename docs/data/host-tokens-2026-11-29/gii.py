import os, sys, pathlib, time, importlib
os.environ.setdefault("DEV", "NULL:CUDA:sm_90"); os.environ.setdefault("NULL_ALLOW_COPYOUT", "1")
from tinygrad.llm.kernels import nv
nv.nv_custom_kernels_supported, nv.sm_count = (lambda d: True), (lambda d: 132)
fn = importlib.import_module("tinygrad.function")
spent, real = [0.0], fn.graph_rewrite
def gr(sink, pm, ctx=None, **kw):
  st = time.perf_counter()
  try: return real(sink, pm, ctx, **kw)
  finally:
    if kw.get("name") == "get_implicit_inputs": spent[0] += time.perf_counter() - st
fn.graph_rewrite = gr
from tinygrad.llm import model
m, kv = model.Transformer.from_gguf(pathlib.Path(sys.argv[1]), max_context=512)
gen = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
out = []
for i in range(3):
  spent[0] = 0.0; st = time.perf_counter(); next(gen); out.append(f"token {i+1} {time.perf_counter()-st:.2f} s, implicit inputs {spent[0]:.3f} s")
print("; ".join(out))
