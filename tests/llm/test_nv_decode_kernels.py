# the kernels of a decode step with tinygrad/llm/kernels/nv.py, lowered for CUDA on NULL (step_kernels.py): nothing runs
import os, pathlib, subprocess, sys, collections
import pytest

@pytest.fixture(scope="module")
def kernels(tiny_gguf) -> dict[bool, list[str]]:
  env = {**os.environ, "DEV": "NULL:CUDA:sm_90", "JIT": "2", "NULL_ALLOW_COPYOUT": "1"}
  run = lambda *a: subprocess.run([sys.executable, str(pathlib.Path(__file__).parent / "step_kernels.py"), str(tiny_gguf), *a], env=env,
                                  check=True, capture_output=True, text=True).stdout.split()
  return {False: run(), True: run("--nv")}

def test_a_matvec_is_one_kernel(kernels):
  # attn_v, attn_output, ffn_gate, ffn_up and ffn_down of 2 blocks and the head; q and k keep nn.Linear
  assert sum(k.startswith("qmatvec_") for k in kernels[True]) == 2 * 5 + 1

def test_a_norm_is_one_kernel(kernels):
  # attn_norm and ffn_norm of 2 blocks and output_norm, and no copy of a norm's weight each step
  names = collections.Counter(kernels[True])
  assert names["rms_norm_256"] == 2 * 2 + 1

def test_kernel_counts(kernels):
  # master 16 a block + 3; here 21 a block + 3: a matvec no longer fuses the norm before it, which runs once, not once a row
  assert len(kernels[False]) == 35 and len(kernels[True]) == 45
