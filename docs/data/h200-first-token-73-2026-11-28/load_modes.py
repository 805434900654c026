# load and the first tokens' seconds, the GGUF passed as a path (the LLM app's way) or as a tensor moved to the device (bench.py's)
import sys, pathlib, time, os
from tinygrad.llm.kernels import nv
if os.environ.get("DEV", "").startswith("NULL"): nv.nv_custom_kernels_supported = lambda d: True; nv.sm_count = lambda d: 132
from tinygrad import Tensor, Device
from tinygrad.llm import model as M
st = time.perf_counter()
src = Tensor(pathlib.Path(sys.argv[1])).to(Device.DEFAULT) if sys.argv[2] == "to" else pathlib.Path(sys.argv[1])
m, kv = M.Transformer.from_gguf(src, max_context=1024)
Device[Device.DEFAULT].synchronize()
out = [f"load {time.perf_counter()-st:.2f}"]
g = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
for i in range(3):
  st = time.perf_counter(); next(g); out.append(f"t{i+1} {time.perf_counter()-st:.2f}")
print(sys.argv[2], *out, [None if getattr(l, "blocks", None) is None else l.blocks[1] for l in (m.output, m.blk[0].attn_q, m.blk[0].ffn_down)])
