# The decode kernels of patches 0027-0034 (lane-first quantized matvecs with GROUP QUANT_LANES over shared memory, attention over 16-rounded
# positions) run on the emulated Orin (EMU: the PTX interpreter room, launched like NV) with the logits the CPU gives.
import json, os, pathlib, subprocess, sys
import numpy as np
import tinygrad
from tinygrad.apps.llm import QUANT_LANES

HERE = pathlib.Path(__file__).resolve().parent
# one process per device: apps.llm caches its RoPE table on the device of first use
CODE = """
import json, pathlib, sys
import orin_emu.ptx.device
from tinygrad import Tensor, Device
Device.DEFAULT = sys.argv[1]
from tinygrad.apps.llm import Transformer, QuantLinear
from tinygrad.codegen import get_program
from test_decode_attention import decode_logits
m, _ = Transformer.from_gguf(Tensor(pathlib.Path(sys.argv[2])).to(sys.argv[1]), max_context=32, quantized=True)
opts = [str(o) for o in get_program(m.blk[0].ffn_gate_up(Tensor.empty(1, 1, 256, dtype="half")).schedule()[-1].ast, Device[sys.argv[1]].renderer).applied_opts]
print(json.dumps({"logits": decode_logits(m, [768, 300, 301], 5, stale=list(range(700, 712))).tolist(), "ffn_gate_up_opts": opts}))
"""

def run(dev:str, gguf:pathlib.Path) -> dict:
  # the tinygrad this test imported, also where PYTHONPATH holds relative paths (the child runs in HERE)
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parents[1]), str(pathlib.Path(tinygrad.__file__).parents[1])]),
         "MV_BLOCKSIZE": "4", "MV_THREADS_PER_ROW": "64", "MV_ROWS_PER_THREAD": "1"}
  r = subprocess.run([sys.executable, "-c", CODE, dev, str(gguf)], capture_output=True, text=True, env=env, cwd=HERE)
  assert r.returncode == 0, r.stderr[-3000:]
  return json.loads(r.stdout.strip().splitlines()[-1])

def test_quantized_decode_on_the_emulated_orin_matches_cpu(tiny_gguf):
  emu, cpu = run("EMU", tiny_gguf), run("CPU", tiny_gguf)
  assert emu["ffn_gate_up_opts"][0].startswith(f"Opt(op=OptOps.GROUP, axis=0, arg={QUANT_LANES})"), emu["ffn_gate_up_opts"]
  want = np.array(cpu["logits"])
  np.testing.assert_allclose(np.array(emu["logits"]), want, atol=2e-3 * np.abs(want).max())
