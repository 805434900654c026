# first token's host time by section, unprofiled (argv gguf)
import sys, pathlib, time, collections, functools
from tinygrad.llm.kernels import nv
import os
if os.environ.get("DEV", "").startswith("NULL"): nv.nv_custom_kernels_supported = lambda d: True; nv.sm_count = lambda d: 132
from tinygrad import Tensor
from tinygrad.engine import realize
import importlib; S = importlib.import_module("tinygrad.schedule"); F = importlib.import_module("tinygrad.function")
from tinygrad.schedule import rangeify as RF, indexing as IX
from tinygrad.llm import model as M
T = collections.defaultdict(float)
def timed(name, mod, attr):
  f = getattr(mod, attr)
  @functools.wraps(f)
  def g(*a, **k):
    st = time.perf_counter()
    try: return f(*a, **k)
    finally: T[name] += time.perf_counter() - st
  setattr(mod, attr, g)
timed("schedule", Tensor, "linear_with_vars")
_gkg = S.get_kernel_graph
def gkg(f):
  st = time.perf_counter(); r = _gkg(f); print(f"get_kernel_graph {len(f.toposort())} uops -> {(time.perf_counter()-st)*1e3:.0f} ms", flush=True); T["  get_kernel_graph"] += time.perf_counter()-st; return r
S.get_kernel_graph = gkg; timed("  create_schedule", S, "create_schedule")
timed("  memory_plan", S, "memory_plan_rewrite")
timed("run_linear", realize, "run_linear"); timed("  compile_linear", realize, "compile_linear")
timed("forward", M.Transformer, "forward"); timed("  ggml_blocks", nv, "ggml_blocks")
timed("  function call", F._function, "__call__")
timed("    attention", M.TransformerBlock, "_attention"); timed("    feed_forward", M.FFNBlock, "_feed_forward")
timed("    fn graph_rewrite", F, "graph_rewrite"); timed("    fn renumber", F, "renumber_invalid_outputs"); timed("    fn invalid_outputs", F, "invalid_outputs")
timed("    fn get_state_dict", F, "get_state_dict")
from tinygrad.uop.ops import UOp
timed("    substitute", UOp, "substitute"); timed("    call", UOp, "call")
def by_name(prefix, mod):
  # a module's graph_rewrite timed by the rewrite's name
  f = mod.graph_rewrite
  def g(*a, **k):
    st = time.perf_counter()
    try: return f(*a, **k)
    finally: T[prefix + str(k.get("name"))] += time.perf_counter() - st
  mod.graph_rewrite = g
by_name("  S.gr ", S); by_name("    RF.gr ", RF)
m, kv = M.Transformer.from_gguf(pathlib.Path(sys.argv[1]), max_context=1024)
g = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
  T.clear(); st = time.perf_counter(); next(g); tot = time.perf_counter()-st
  print(f"token {i+1}: {tot:.2f} s", {k: round(v, 3) for k, v in T.items()}, flush=True)
