# memory held as later turns reach new key buckets (NULL:CUDA:sm_90): GlobalCounters.mem_used after each turn
import sys, pathlib, time
from tinygrad.llm.kernels import nv
nv.nv_custom_kernels_supported = lambda d: True; nv.sm_count = lambda d: 132
from tinygrad import GlobalCounters
from tinygrad.llm.model import Transformer
m, kv = Transformer.from_gguf(pathlib.Path(sys.argv[1]), max_context=8192)
print(f"loaded: {GlobalCounters.mem_used/1e9:.2f} GB", flush=True)
toks = []
for turn in range(int(sys.argv[2])):
  toks += [(1000 + 7*i + turn) % 120000 for i in range(500)]
  st = time.perf_counter(); toks.append(next(m.generate(list(toks))))
  print(f"turn {turn+1}: {len(toks)} tokens, {time.perf_counter()-st:.1f} s, jits {len(m.prompt_jits)}, mem {GlobalCounters.mem_used/1e9:.2f} GB", flush=True)
