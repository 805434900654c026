#!/usr/bin/env python3
"""One graphed LLaMA decode step's kernels timed by Nsight Compute: where a step's time goes, kernel by kernel, without the launch and
synchronization that timing each kernel alone (bench.py --profile) adds.
  ncu --profile-from-start off --clock-control none --cache-control none --csv --print-units base \\
      --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \\
      python3 scripts/ncu_step.py run GGUF > step.csv        # on the GPU (DEV=CUDA, PYTHONPATH the tinygrad tree)
  python3 scripts/ncu_step.py run GGUF --prompt 512 > prompt.csv  # or a prompt of 512 tokens to its first token
  python3 scripts/ncu_step.py summary step.csv [...] [--json OUT]  # anywhere: time a kernel name, slowest first
run decodes 40 tokens through generate (v0.12.0's apps/llm or master's tinygrad.llm) and 55 steps from position 100 (the JIT captured
and graphed), then profiles the step at 155 only (cuProfilerStart/Stop). With --prompt N: generate from empty caches to the first token of
an N-token prompt four times (compile, capture, replay) and profile a fifth; each run's seconds go to stderr. ncu replays each kernel of
the graph alone: --cache-control none leaves the L2 as the step before left it."""
import argparse, csv, ctypes, json, pathlib, signal, sys, time
from bench import llm_app, step_inputs

def run(gguf:str, dev="CUDA", prompt=0):
  from tinygrad import Tensor, Device
  model, kv = llm_app().from_gguf(Tensor(pathlib.Path(gguf)).to(dev), max_context=max(512, 2 * prompt))
  cu = ctypes.CDLL("libcuda.so.1")
  if prompt:
    toks = [(1000 + i) % model.token_embd.weight.shape[0] for i in range(prompt)]
    for i in range(5):
      model._cached_tokens = []
      Device[dev].synchronize(); st = time.perf_counter()
      if i == 4: cu.cuProfilerStart()
      next(model.generate(list(toks))); Device[dev].synchronize()
      if i == 4: cu.cuProfilerStop()
      print(f"prompt {prompt} run {i}: {time.perf_counter() - st:.4f} s", file=sys.stderr)
    return
  gen = model.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
  toks = [next(gen) for _ in range(40)]
  (v, temp), t, p = step_inputs(model), Tensor([[toks[-1]]], dtype="int32"), 100
  for _ in range(55): t, p = model(t, v.bind(p), *temp).realize(), p + 1
  Device[dev].synchronize()
  cu.cuProfilerStart(); model(t, v.bind(p), *temp).realize(); Device[dev].synchronize(); cu.cuProfilerStop()

def summary(path:str) -> dict:
  rows = [r for r in csv.reader(open(path)) if len(r) > 10]
  hdr, kernels = rows[0], {}
  # without the launch__ metrics, a launch's grid and block as ncu's columns give them
  for r in rows[1:]:
    k = kernels.setdefault(r[hdr.index("ID")], {"name": r[hdr.index("Kernel Name")], "launch__grid_size": r[hdr.index("Grid Size")],
                                                "launch__block_size": r[hdr.index("Block Size")], "launch__registers_per_thread": "-"})
    k[r[hdr.index("Metric Name")]] = r[hdr.index("Metric Value")]
  by_name: dict[str, dict] = {}
  for k in kernels.values():
    us = float(k["gpu__time_duration.sum"].replace(",", "")) / 1e3
    r = by_name.setdefault(k["name"].split("(")[0], dict(launches=0, us=0.0, grid=k["launch__grid_size"], block=k["launch__block_size"],
                                                         regs=k["launch__registers_per_thread"]))
    r["launches"] += 1; r["us"] = round(r["us"] + us, 2)
  return dict(file=path, kernels=len(kernels), us=round(sum(r["us"] for r in by_name.values()), 1),
              by_kernel=dict(sorted(by_name.items(), key=lambda kv: -kv[1]["us"])))

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  r = sub.add_parser("run"); r.add_argument("gguf"); r.add_argument("--prompt", type=int, default=0, help="profile a prompt of this many tokens")
  s = sub.add_parser("summary"); s.add_argument("csv", nargs="+"); s.add_argument("--json")
  args = ap.parse_args()
  if args.cmd == "run": sys.exit(run(args.gguf, prompt=args.prompt))
  out = [summary(p) for p in args.csv]
  # before the printout: a reader that stops early (| head) ends this process at a print, quietly as other filters end
  if args.json: pathlib.Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
  signal.signal(signal.SIGPIPE, signal.SIG_DFL)
  for o in out:
    print(f"{o['file']}: {o['kernels']} kernels, {o['us']} us")
    for n, r in o["by_kernel"].items():
      print(f"  {n:40s} {r['launches']:4d} x {r['us'] / r['launches']:8.2f} us = {r['us']:8.1f} us  grid {r['grid']} block {r['block']} regs {r['regs']}")
