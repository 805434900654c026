#!/usr/bin/env python3
"""What plain reads reach on this GPU (or its MPS share): torch's float16 sum over distinct buffers of the 8B Q4_K_M decode step's
matvec sizes, graphed as a step is (32 layers of q+k, v, o, gate+up, down, then the output), and each size alone in a graph of copies
past L2. Prints GB/s."""
import sys, torch
MB = 1 << 20
LAYER = {"qk": 5120 * 4096 // 256 * 144, "v": 1024 * 4096 // 256 * 210, "o": 4096 * 4096 // 256 * 144, "glu": 2 * 14336 * 4096 // 256 * 144,
         "down": 4096 * 14336 // 256 * 210}
OUT = 128256 * 4096 // 256 * 210
def graph_gbs(sizes:list[int], reps=20) -> tuple[float, float]:
  bufs = [torch.randn(s // 2, dtype=torch.float16, device="cuda") for s in sizes]
  outs = [torch.empty((), dtype=torch.float16, device="cuda") for _ in sizes]
  s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
  with torch.cuda.stream(s):
    for _ in range(2):
      for b, o in zip(bufs, outs): torch.sum(b, 0, out=o)
  torch.cuda.current_stream().wait_stream(s)
  g = torch.cuda.CUDAGraph()
  with torch.cuda.graph(g):
    for b, o in zip(bufs, outs): torch.sum(b, 0, out=o)
  for _ in range(3): g.replay()
  ts = []
  for _ in range(reps):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / 1e3)
  ts.sort(); t = ts[len(ts) // 2]
  del bufs, outs, g; torch.cuda.empty_cache()
  return t, sum(sizes) / t / 1e9
tag = sys.argv[1] if len(sys.argv) > 1 else "?"
print(f"[{tag}] SMs {torch.cuda.get_device_properties(0).multi_processor_count}", flush=True)
step = [LAYER[k] for _ in range(32) for k in ("qk", "v", "o", "glu", "down")] + [OUT]
t, gbs = graph_gbs(step)
print(f"[{tag}] 8B step as {len(step)} sums: {sum(step)/1e9:.2f} GB in {t*1e3:.3f} ms = {gbs:.1f} GB/s", flush=True)
for k, s in LAYER.items():
  t, gbs = graph_gbs([s] * max(2, 700 * MB // s))
  print(f"[{tag}] {k:5s} {s/MB:6.1f} MB a launch: {gbs:.1f} GB/s", flush=True)
t, gbs = graph_gbs([2 << 30]); print(f"[{tag}] one 2 GiB sum: {gbs:.1f} GB/s", flush=True)
