# PTXRenderer's float != and float->bool must follow IEEE/C semantics: NaN != NaN is true (isnan is x != x), -0.0 is false. PTX's setp.ne
# is ordered (false when either side is NaN) and setp.ne.b32 compares bits, so both need the unordered float compare, setp.neu. Checked on
# the PTX rendered for sm_87 and assembled by nvJitLink: no GPU needed.
import re
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target, Context
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.runtime.autogen import nvjitlink
from tinygrad.uop.ops import Ops

pytestmark = pytest.mark.skipif(getattr(nvjitlink.dll, "_name", None) is None, reason="no nvJitLink in this environment")

def setps(fn, dtype) -> list[str]:
  t = fn(Tensor.empty(5, dtype=dtype, device="NULL"))
  ast = next(c.src[0] for c in t.schedule_linear().src if c.src[0].op is Ops.SINK)
  with Context(CCACHE=0): src = to_program(ast, PTXRenderer(Target("NV", "PTX", "sm_87"))).src[2].arg
  return re.findall(r"setp\.(\w+)\.(\w+)", src)

@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16], ids=["float", "half"])
@pytest.mark.parametrize("fn", [lambda t: t.isnan(), lambda t: t != t, lambda t: t.cast(dtypes.bool)], ids=["isnan", "ne_self", "to_bool"])
def test_float_ne_is_unordered(fn, dtype):
  assert (s:=setps(fn, dtype)) and all(cmp == "neu" and ty[0] == "f" for cmp, ty in s), s
