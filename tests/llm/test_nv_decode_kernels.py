# the kernels of a decode step with tinygrad/llm/kernels/nv.py, lowered for CUDA on NULL (step_kernels.py): nothing runs
import os, pathlib, subprocess, sys, collections
import pytest

def step_kernels(gguf:pathlib.Path, *args:str) -> list[str]:
  env = {**os.environ, "DEV": "NULL:CUDA:sm_90", "JIT": "2", "NULL_ALLOW_COPYOUT": "1"}
  return subprocess.run([sys.executable, str(pathlib.Path(__file__).parent / "step_kernels.py"), str(gguf), *args], env=env,
                        check=True, capture_output=True, text=True).stdout.split()

@pytest.fixture(scope="module")
def kernels(tiny_gguf) -> dict[bool, list[str]]: return {False: step_kernels(tiny_gguf), True: step_kernels(tiny_gguf, "--nv")}

def test_a_matvec_is_one_kernel(kernels):
  # q, k and v of a block one kernel (q and k with their rows moved for RoPE), o and down, and the head; gate and up with their SiLU one
  assert sum(k.startswith("qmatvec_") for k in kernels[True]) == 2 * 3 + 1 and sum(k.startswith("qglu_") for k in kernels[True]) == 2
  assert collections.Counter(kernels[True])["qmatvec_14_512_256"] == 2

def test_a_norm_is_one_kernel(kernels):
  # attn_norm and ffn_norm of 2 blocks and output_norm, and no copy of a norm's weight each step
  names = collections.Counter(kernels[True])
  assert names["rms_norm_256"] == 2 * 2 + 1

def test_attention_and_the_token_are_one_kernel_each(kernels):
  # no reduce of the step is left to the heuristic: scores, softmax and values in attention_, the vocabulary's argmax in argmax_
  names = collections.Counter(kernels[True])
  assert names["attention_4_2_64"] == 2 and names["argmax_320"] == 1 and not any(k.startswith("r_") for k in names)

def test_kernel_counts(kernels):
  # master 16 a block + 5; here 8 a block + 10: a matvec does not fuse the norm before it, which runs once, not once a row; q, k and v
  # are one kernel, q and k come out in RoPE's order, turned, stored into the KV cache and attended in one kernel, whose output is the
  # o projection's input as it is; the residual before ffn_norm is added in the norm where both its terms are buffers (not in block 0,
  # whose input is the embedding's lookup); gate, up, SiLU and their product are one kernel; the residual after it is added at the down
  # matvec's stores, whose output is the block's (not in block 0 either). Both store the token in `sampled`, which the step reads its
  # token from, through a copy of it
  assert len(kernels[False]) == 37 and len(kernels[True]) == 25

def test_a_long_context_decodes_with_a_heads_positions_split(tmp_path, kernels):
  # decode steps from attention's SPLIT_FROM on bind start_pos to a variable bounded below by it, a JIT of their own: a workgroup takes
  # a kv head's 2 heads and one of 8 runs of positions on 132 SMs, then a combine a block. Short contexts keep one workgroup a head
  from llm_helpers import tiny_llama
  names = collections.Counter(long:=step_kernels(tiny_llama(tmp_path / "tiny.gguf", 14, context=512), "--nv", "--at", "300"))
  assert names["attention_4_2_64_8_g"] == names["attention_combine_4_64_8"] == 2 and len(long) == len(kernels[True]) + 2

def test_qwen3_moe_attention_and_experts_are_one_kernel_each(tmp_path):
  # heads of 128 with q and k normed a head before RoPE (qk_norm): the norms are in the one-kernel attention (4 kernels fewer a block,
  # 38 a step with q, k and v one kernel); the picked experts' gate and up are one GLU kernel and their down one matvec, reading the
  # experts' blocks as stored
  from llm_helpers import tiny_llama
  names = collections.Counter(kernels:=step_kernels(tiny_llama(tmp_path / "q3moe.gguf", 14, moe=True), "--nv"))
  assert names["attention_4_2_128"] == names["qglu_experts_14_1024_256"] == names["qmatvec_experts_14_512_1024"] == 2 and len(kernels) == 38
