# PTXRenderer has no register or memory types for bfloat16 and the fp8s: their kernels must not reach render() with them (on 0.12.0 a bare
# KeyError from deep in render()). They are emulated on float/half, so the kernels render and assemble for sm_87 with nvJitLink: no GPU needed.
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target, Context
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.runtime.autogen import nvjitlink
from tinygrad.uop.ops import Ops

pytestmark = pytest.mark.skipif(getattr(nvjitlink.dll, "_name", None) is None, reason="no nvJitLink in this environment")

@pytest.mark.parametrize("dtype", [dtypes.bfloat16, *dtypes.fp8s], ids=lambda d: d.name)
@pytest.mark.parametrize("fn", [lambda t: t + 1, lambda t: t.float().contiguous(), lambda t: (t.float() * 2).cast(t.dtype)], ids=["add", "load", "store"])
def test_narrow_float_kernel_assembles(fn, dtype):
  t = fn(Tensor.empty(64, dtype=dtype, device="NULL"))
  ast = next(c.src[0] for c in t.schedule_linear().src if c.src[0].op is Ops.SINK)
  with Context(CCACHE=0): prg = to_program(ast, PTXRenderer(Target("NV", "PTX", "sm_87")))
  assert prg.src[3].arg[:4] == b"\x7fELF"
