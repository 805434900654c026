# the decode attention kernel as CUDA's renderer writes it for sm_87 (an Orin's)
import math, re
from dataclasses import replace
import pytest
from tinygrad import UOp, dtypes
from tinygrad.uop.ops import Ops
from tinygrad.llm.kernels import nv
from llm_helpers import cuda_program

def cuda_attention(heads:int, kv_heads:int, hd:int, ctx:int=1024, splits:int=1, src=True, grouped=False):
  out = (1, heads, 1, hd) if splits == 1 else (heads * splits * (hd + 2),)
  shapes = [out, (1, heads, 1, hd), (1, kv_heads, 1, hd), (1, kv_heads, 1, hd), (2, 1, kv_heads, ctx, hd), (ctx, hd)]
  var = UOp.variable("start_pos", 0, ctx-1)
  phs = [UOp.placeholder(s, dtypes.float, i) for i, s in enumerate(shapes)] + [UOp(Ops.PARAM, src=var.src, arg=replace(var.arg, slot=6))]
  prg = cuda_program(nv._attention_kernel(*phs, n_kv_heads=kv_heads, rope_dim=hd, eps=None, splits=splits, grouped=grouped), "sm_87")
  return prg.src[2].arg if src else prg

@pytest.mark.parametrize("hd,splits,threads,loads", [(64, 1, 256, 4), (64, 4, 256, 4), (128, 1, 128, 1), (128, 4, 128, 4)])
def test_values_loop_keeps_loads_in_flight(hd, splits, threads, loads):
  # heads of 64 leave registers for 256 threads and v loads of 4 positions an iteration; heads of 128 fill them with the score dot's loads,
  # and load 4 positions' values at once only where split: a whole head's loop runs slower with them
  src = cuda_attention(8, 2, hd, splits=splits)
  values = src[(at:=src.rfind("for (")):src.index("}", at)]
  assert f"__launch_bounds__({threads})" in src and values.count("data4_") == loads

@pytest.mark.parametrize("hd,splits,grouped,vec", [(128, 1, False, False), (128, 4, False, True), (64, 1, False, True), (64, 4, True, False)])
def test_values_loop_reads_16_bytes_a_thread(hd, splits, grouped, vec):
  # where a head's workgroup loads 4 positions' values at once, each thread sums 4 dims of them, one 16-byte load a position; a grouped
  # workgroup keeps a dim a thread, its partial sums' shared memory a float a thread and head
  src = cuda_attention(8, 2, hd, splits=splits, grouped=grouped)
  values = src[(at:=src.rfind("for (")):src.index("}", at)]
  loads = re.findall(r"(\(float4\*\)\(\()?data4_", values)
  assert loads and all(bool(f) == vec for f in loads), values

@pytest.mark.parametrize("sms,heads,first,want", [(132, 32, 256, 8), (132, 16, 256, 8), (132, 16, 1024, 16), (132, 4, 4096, 16),
  (16, 32, 256, 1), (16, 16, 256, 2), (8, 4, 256, 4), (132, 32, 0, 1), (132, 32, 63, 1), (132, 32, 64, 2)])
def test_a_heads_positions_split_for_twice_the_sms(sms, heads, first, want, monkeypatch):
  # a workgroup a head leaves a big GPU's SMs idle, each reading its keys and values at a few tens of GB/s: a head's positions are split
  # into runs, a workgroup each, for twice the SMs (up to 16 runs), each of at least 32 of the positions start_pos's bound gives
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  assert nv.attention_splits(heads, "CUDA", first) == want

def test_a_split_heads_runs_take_a_workgroup_each():
  prg = cuda_attention(8, 2, 64, splits=4, src=False)
  assert math.prod(prg.arg.global_size) == 8 * 4 and "attention_8_2_64_4" in prg.src[2].arg

def test_a_grouped_workgroup_takes_a_kv_heads_heads():
  prg = cuda_attention(8, 2, 64, splits=4, src=False, grouped=True)
  assert math.prod(prg.arg.global_size) == 2 * 4 and "attention_8_2_64_4_g" in prg.src[2].arg

@pytest.mark.parametrize("sms,hd,kv,first,ctx,want", [(132, 64, 8, 0, 4096, (1, False)), (132, 64, 8, 255, 4096, (4, False)),
  (132, 64, 8, 256, 4096, (8, True)), (8, 64, 8, 256, 4096, (2, True)), (8, 64, 8, 256, 8192, (1, False)), (132, 128, 8, 256, 4096, (8, False)),
  (8, 64, 4, 256, 4096, (1, False)), (132, 64, 4, 256, 4096, (8, True))])
def test_a_long_context_groups_a_kv_heads_heads(sms, hd, kv, first, ctx, want, monkeypatch):
  # from SPLIT_FROM on a workgroup takes a kv head's heads of 64 (the 1B's 4 a kv head, TinyLlama's 8), reading its keys and values
  # once, where the kernel fits 48 KB of shared memory; before it a head a workgroup, and heads of 128 always
  from tinygrad import Tensor
  seen, real = [], nv._attention_kernel
  def spy(*args, **kw):
    seen.append((kw["splits"], kw["grouped"]))
    return real(*args, **kw)
  monkeypatch.setattr(nv, "_attention_kernel", spy)
  for f in ("nv_custom_kernels_supported", "has_local"): monkeypatch.setattr(nv, f, lambda device: True)
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  q, k, v = (Tensor.empty(1, n, 1, hd) for n in (32, kv, kv))
  nv.attention(q, k, v, Tensor.empty(2, 1, kv, ctx, hd), Tensor.empty(ctx, hd), UOp.variable("start_pos", first, ctx - 1).bind(first))
  assert seen == [want]

@pytest.mark.parametrize("heads,kv_heads,hd,splits,grouped", [(8, 2, 64, 4, True), (32, 4, 64, 2, True), (8, 2, 128, 4, False), (8, 2, 128, 1, False),
  (4, 4, 64, 1, False)])
def test_shared_memory_is_attention_smems(heads, kv_heads, hd, splits, grouped):
  # the bytes attention() holds to 48 KB are those the kernel declares
  src = cuda_attention(heads, kv_heads, hd, ctx=2048, splits=splits, grouped=grouped)
  declared = sum(int(n) * 4 for n in re.findall(r"__shared__[^;\[]*\[(\d+)\]", src))
  assert declared == nv.attention_smem(heads // kv_heads if grouped else 1, hd, -(-2048 // splits), False, splits) > 0

def test_decode_steps_split_only_where_the_attention_runs(monkeypatch):
  # past 8192 positions the scores leave shared memory and attention() does not run: no second decode JIT for it
  monkeypatch.setattr(nv, "nv_custom_kernels_supported", lambda device: True)
  assert nv.attention_split_from("CUDA", 8192) == nv.SPLIT_FROM and nv.attention_split_from("CUDA", 8193) is None
