# Decode's custom kernels as lowered for CUDA (patch "apps/llm: decode's custom kernels keep their loads in flight"): the attention's loops
# over k and v read 8 values an iteration and the greedy token's keys 4 (a loop only past 4 x 128 x 256 logits), so a thread keeps that
# many loads in flight where one dependent load an iteration left it waiting on memory; a RMSNorm thread reads and writes its values in
# vectors, without a loop. A tiny model's decode step (2 blocks) at start_pos 5, the keys of Qwen3's 151936 logits and LLaMA-3.2-1B's
# RMSNorm (a thread 8 of 2048 values), lowered on NULL with the H100's renderer as scripts/decode_kernels.py does, in a process of its own
# (it makes NULL the default device).
import json, pathlib, subprocess, sys
import pytest

HERE = pathlib.Path(__file__).resolve()

def lowered() -> dict:
  """each kernel's values loaded from global memory in one iteration of each loop that loads any (not those of loops inside it), and the
  element counts of its global loads and stores"""
  sys.path.insert(0, str(HERE.parents[2] / "scripts"))
  from decode_kernels import build, decode_step
  from tinygrad import Device, Tensor, nn
  from tinygrad.apps.llm import rms_norm, argmax_keys_kernel
  from tinygrad.codegen import get_program
  from tinygrad.renderer.cstyle import CUDARenderer
  from tinygrad.uop.ops import Ops, AddrSpace
  ren, null = CUDARenderer("sm_90", 132), Device["NULL"]
  compiler = null._select_compiler_pair()[1]
  null._select_compiler_pair = lambda: (ren, compiler)
  keys = Tensor.empty(128, dtype="uint64", device="NULL").custom_kernel(Tensor.empty(1, 151936, device="NULL"), fxn=argmax_keys_kernel)[0]
  items = decode_step(build("tiny", 32, True), 5) + rms_norm(nn.RMSNorm(2048), Tensor.empty(1, 1, 2048, device="NULL")).schedule() + \
    keys.schedule()
  out = {}
  for prg in (get_program(ei.ast, ren) for ei in items):
    stack, loops, counts = [], [], []
    for u in prg.uops:
      if u.op is Ops.RANGE: stack.append(0)
      elif u.op is Ops.END and stack and (n := stack.pop()): loops.append(n)
      elif u.op in (Ops.LOAD, Ops.STORE) and u.src[0].dtype.addrspace == AddrSpace.GLOBAL:
        counts.append((u.dtype if u.op is Ops.LOAD else u.src[1].dtype).count)
        if u.op is Ops.LOAD and stack: stack[-1] += u.dtype.count
    out[prg.name] = dict(loop_loads=loops, counts=counts)
  return out

@pytest.fixture(scope="module")
def kernels() -> dict:
  return json.loads(subprocess.run([sys.executable, HERE], check=True, capture_output=True, text=True).stdout)

@pytest.mark.parametrize("kernel,least", [("decode_attention_4_2_64", 8), ("argmax_keys_151936", 4)])
def test_loops_keep_loads_in_flight(kernels, kernel, least):
  loops = kernels[kernel]["loop_loads"]
  assert loops and all(n >= least for n in loops), loops

def test_rms_norm_loads_and_stores_vectors(kernels):
  assert kernels["rms_norm_2048"]["loop_loads"] == [] and kernels["rms_norm_2048"]["counts"] and \
    all(c == 4 for c in kernels["rms_norm_2048"]["counts"]), kernels["rms_norm_2048"]

if __name__ == "__main__": print(json.dumps(lowered()))
