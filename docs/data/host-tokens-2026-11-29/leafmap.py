# which implicit inputs of a block's call come from the block's own state (get_state_dict), and which are made during the trace
import os, sys, pathlib, importlib
os.environ.setdefault("DEV", "NULL:CUDA:sm_90"); os.environ.setdefault("NULL_ALLOW_COPYOUT", "1")
from tinygrad import Tensor
from tinygrad.llm.kernels import nv
nv.nv_custom_kernels_supported, nv.sm_count = (lambda d: True), (lambda d: 132)
from tinygrad.llm import model
from tinygrad.nn.state import get_state_dict
from tinygrad.uop.ops import UOp, Ops
orig, calls = UOp.call, []
def call(self, *srcs, **kw):
  if "_run" in str(kw.get("name")): calls.append(srcs)
  return orig(self, *srcs, **kw)
UOp.call = call
m, kv = model.Transformer.from_gguf(pathlib.Path(sys.argv[1]), max_context=512)
gen = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
next(gen); n1 = len(calls); next(gen)
def state(blk): return {k: t.uop for k, t in get_state_dict(blk, tensor_type=(Tensor,)).items()}
for tag, c0 in (("prompt", calls[0]), ("decode", calls[n1])):
  st = state(m.blk[0]); inv = {u: k for k, u in st.items()}
  base_bufs = {u.buf_uop: k for k, u in st.items() if u.op in (Ops.BUFFER,)}
  print(tag, "state keys", len(st), sorted(st)[:40])
  for s in c0[2:]:
    where = inv.get(s) or base_bufs.get(s) or "-"
    print("  ", s.op.name, s.shape, s.dtype, "realized" if s.op is Ops.BUFFER and s.is_realized else "", "->", where)
