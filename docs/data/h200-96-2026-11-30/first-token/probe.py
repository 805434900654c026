# where a warm first token goes: python probe.py GGUF [p] (p: profile it too); run twice, the first fills the compile cache; LOAD=tensor
# loads as bench.py does (the file as a tensor moved to the device), else as tinygrad.llm's cli (the path)
import os, pathlib, sys, time, collections, cProfile, pstats
from tinygrad import Device, Tensor
from tinygrad.llm import model
import tinygrad.tensor as T, tinygrad.engine.realize as R, tinygrad.runtime.ops_cuda as C, tinygrad.device as D
acc, cnt, on = collections.defaultdict(float), collections.Counter(), [False]
def wrap(obj, n, key):
  f = getattr(obj, n)
  def g(*a, **k):
    st = time.perf_counter()
    try: return f(*a, **k)
    finally:
      if on[0]: acc[key] += time.perf_counter() - st; cnt[key] += 1
  setattr(obj, n, g)
for o, n in ((T, "create_linear_with_vars"), (T, "run_linear"), (T, "transform_to_call"), (R, "compile_linear"), (C.CUDAProgram, "__init__"),
             (D.Compiler, "compile_cached"), (model.Transformer, "forward")): wrap(o, n, f"{getattr(o, '__name__', '')}.{n}")
st = time.perf_counter()
g = pathlib.Path(sys.argv[1])
m, kv = model.Transformer.from_gguf(Tensor(g).to(Device.DEFAULT) if os.getenv("LOAD") == "tensor" else g, max_context=1024)
Device[Device.DEFAULT].synchronize(); print(f"load {time.perf_counter() - st:.2f} s")
gen, on[0] = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015))), True
pr = cProfile.Profile() if len(sys.argv) > 2 else None
if pr: pr.enable()
st = time.perf_counter(); next(gen); print(f"first token {time.perf_counter() - st:.3f} s")
if pr: pr.disable()
for k, v in sorted(acc.items(), key=lambda x: -x[1]): print(f"  {k} {v * 1e3:.0f} ms x{cnt[k]}")
if pr: pstats.Stats(pr).sort_stats("tottime").print_stats(25)
