# the decode attention kernel as CUDA's renderer writes it for sm_87 (an Orin's)
from dataclasses import replace
import pytest
from tinygrad import UOp, dtypes
from tinygrad.uop.ops import Ops
from tinygrad.llm.kernels import nv
from llm_helpers import cuda_program

def cuda_attention(heads:int, kv_heads:int, hd:int, ctx:int=1024) -> str:
  shapes = [(1, heads, 1, hd), (1, heads, 1, hd), (1, kv_heads, 1, hd), (1, kv_heads, 1, hd), (2, 1, kv_heads, ctx, hd), (ctx, hd)]
  var = UOp.variable("start_pos", 0, ctx-1)
  phs = [UOp.placeholder(s, dtypes.float, i) for i, s in enumerate(shapes)] + [UOp(Ops.PARAM, src=var.src, arg=replace(var.arg, slot=6))]
  return cuda_program(nv._attention_kernel(*phs, n_kv_heads=kv_heads, rope_dim=hd, eps=None), "sm_87").src[2].arg

@pytest.mark.parametrize("hd,threads,loads", [(64, 256, 4), (128, 128, 1)])
def test_values_loop_keeps_loads_in_flight(hd, threads, loads):
  # heads of 64 leave registers for 256 threads and v loads of 4 positions an iteration; heads of 128 fill them with the score dot's loads
  src = cuda_attention(8, 2, hd)
  values = src[(at:=src.rfind("for (")):src.index("}", at)]
  assert f"__launch_bounds__({threads})" in src and values.count("data4_") == loads
