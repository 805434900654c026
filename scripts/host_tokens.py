#!/usr/bin/env python3
"""The host's seconds for each of a GGUF's first tokens through master's generate, with no GPU: on NULL:CUDA:sm_90 kernels cost nothing,
so what is left is tracing, scheduling and lowering (a warm CACHEDB skips compiling). The LLM kernels' device checks are told NULL is a
CUDA GPU of --sms SMs, so the kernels traced are a GPU's.
  CACHEDB=/tmp/host.db PYTHONPATH=build/master/tinygrad python3 scripts/host_tokens.py GGUF [--tokens 4] [--sms 132] [--max-context 1024]
Run it twice on one CACHEDB: the first run compiles (for nothing: NULL's programs are empty) and stores the lowered programs. A line a
token: its seconds, the forward's trace and the schedules."""
import argparse, collections, functools, os, pathlib, time

def main(gguf:str, tokens:int, sms:int, max_context:int):
  os.environ.setdefault("DEV", "NULL:CUDA:sm_90"); os.environ.setdefault("NULL_ALLOW_COPYOUT", "1")
  from tinygrad import Tensor
  from tinygrad.llm.kernels import nv
  nv.nv_custom_kernels_supported, nv.sm_count = (lambda d: True), (lambda d: sms)
  from tinygrad.llm import model
  spent: dict[str, float] = collections.defaultdict(float)
  def timed(name:str, f):
    @functools.wraps(f)
    def g(*a, **kw):
      st = time.perf_counter()
      try: return f(*a, **kw)
      finally: spent[name] += time.perf_counter() - st
    return g
  Tensor.linear_with_vars, model.Transformer.forward = timed("schedule", Tensor.linear_with_vars), timed("trace", model.Transformer.forward)
  st = time.perf_counter()
  m, kv = model.Transformer.from_gguf(pathlib.Path(gguf), max_context=max_context)
  print(f"load {time.perf_counter() - st:.2f} s")
  gen = m.generate([kv["tokenizer.ggml.bos_token_id"]] + list(range(1000, 1015)))
  for i in range(tokens):
    spent.clear(); st = time.perf_counter(); next(gen)
    print(f"token {i+1}: {time.perf_counter() - st:.2f} s (trace {spent['trace']:.2f} s, schedule {spent['schedule']:.2f} s)", flush=True)

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("gguf"); ap.add_argument("--tokens", type=int, default=4); ap.add_argument("--sms", type=int, default=132)
  ap.add_argument("--max-context", type=int, default=1024)
  a = ap.parse_args()
  main(a.gguf, a.tokens, a.sms, a.max_context)
