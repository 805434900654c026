# A matvec over quantized blocks (QuantLinear) gets the same matvec opts as an fp16 one: GROUP over the reduce, LOCAL and UPCAST over rows.
# Kernels are scheduled on the NULL device and lowered with the sm_87 renderers: no GPU needed.
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.apps.llm import QuantLinear
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.nn.state import GGML_BLOCKS
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.renderer.ptx import PTXRenderer

RENDERERS = {"cuda_c": lambda: NVRenderer("sm_87"), "ptx": lambda: PTXRenderer("sm_87", device="NV")}
# (in, out) of the LLaMA-3.2-1B projections: q and o, k and v, gate and up, down, the tied lm_head
SHAPES = {"q,o": (2048, 2048), "k,v": (2048, 512), "gate,up": (2048, 8192), "down": (8192, 2048), "lm_head": (2048, 128256)}

def is_matvec(o:tuple[Opt, ...]) -> bool: return [(x.op, x.arg) for x in o] == [(OptOps.GROUP, 8), (OptOps.LOCAL, 4), (OptOps.UPCAST, 4)] and \
  o[1].axis == o[2].axis

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_quantized_matvec_gets_matvec_opts(shape, ggml_type, ren):
  (in_f, out_f), (values, nbytes) = shape, GGML_BLOCKS[ggml_type]
  lin = QuantLinear(in_f, out_f, ggml_type)
  lin.blocks = Tensor.empty(out_f, in_f // values, nbytes, dtype=dtypes.uint8, device="NULL")
  sched = lin(Tensor.empty(1, 1, in_f, dtype=dtypes.half, device="NULL")).schedule()
  assert len(sched) == 1, "dequantize and matvec are one kernel"
  assert is_matvec(get_program(sched[0].ast, ren()).applied_opts)
