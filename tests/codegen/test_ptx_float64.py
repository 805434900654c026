# PTXRenderer must emit PTX that ptxas accepts for float64 exp2/log2/sin/sqrt/reciprocal (there are no .approx f64 forms of these), and
# leave float32/float16 kernels byte for byte as they were. Assembled for sm_87 by nvJitLink as NV_PTX=1 does (NVPTXCompiler), with the
# nvJitLink of the environment (NVJITLINK_PATH from the venv's .pth or the Nix shell, the Nix package's built-in path): no GPU needed.
import hashlib
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.codegen import get_program
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.runtime.autogen import nvjitlink
from tinygrad.runtime.support.compiler_cuda import NVPTXCompiler
from tinygrad.uop.ops import Ops, KernelInfo

def render_ptx(t:Tensor) -> str:
  # a fixed kernel name keeps the source independent of what else this process has rendered
  ast = next(si.ast for si in t.schedule() if si.ast.op is Ops.SINK).replace(arg=KernelInfo(name="k"))
  return get_program(ast, PTXRenderer("sm_87")).src

def unary(op:str, dtype) -> Tensor: return getattr(Tensor.empty(64, dtype=dtype, device="NULL"), op)()
F64_OPS = ["exp2", "log2", "sin", "sqrt", "reciprocal", "exp", "cos"]

@pytest.mark.skipif(not nvjitlink.dll.loaded, reason="no nvJitLink in this environment (NVJITLINK_PATH unset, none in the system library paths)")
@pytest.mark.parametrize("op", F64_OPS)
def test_float64_ptx_assembles(op):
  assert NVPTXCompiler("sm_87").compile(render_ptx(unary(op, dtypes.float64)))[:4] == b"\x7fELF"   # a CompileError carries nvJitLink's log

# sha256 of the PTX that unpatched tinygrad 0.12.0 renders for these kernels
GOLDEN = {
  "exp2_float": "5c8e8b2ae900093481b007dee7f08fff78d254df72e456b487792768780bea2d",
  "exp2_half": "4ee7e7be2349adbab82078a6c4f275223728ffc48038c9fe36580505461d615b",
  "log2_float": "040cf0f54a1c37fb47c52df86d33a1fdf9bcf6f0ee47f292b69fd39c93e33a8f",
  "log2_half": "0833aa35d504c16bf9bbe111922646cdd2cbfccca647efe65ea72244965a6df3",
  "matmul_half_tc": "bd868d626184cea98d51deee61f4110eb12a1a1bd8bcc245e079b96475c9ac9e",
  "reciprocal_float": "adcb54d3516a5e4065ea482d0ffc7769830e7e9531e4eb70eb968dc74419e37d",
  "reciprocal_half": "b0a74adf5b244073fcd4b88808449a5003c89e8a93aeefc471611c7f4062ecf5",
  "sin_float": "1c64db26b3b5061cdbd1d51cee512ff5ad9c7885bad00777ddae60d9dc16b86f",
  "sin_half": "afeb69620971ef6f09c726ce7b6a8fb122e1fb42c99f544df684cebb68c2868a",
  "softmax_float": "8c66675ab1532eaba7550b716e6bd4953a715e576c13242d61468bb40e1db029",
  "sqrt_float": "18308a365b20e6cb752770f2dd10b407a420cb77c67e85a36f331195b4ed63ac",
  "sqrt_half": "ef48e5c4a2f06f612e474ec495d76e500ef678b592a48fb583605b5a3a7fb3f4",
}

def golden_kernels() -> dict[str, Tensor]:
  ret = {f"{op}_{dt.name}": unary(op, dt) for op in ["exp2", "log2", "sin", "sqrt", "reciprocal"] for dt in (dtypes.float32, dtypes.float16)}
  ret["matmul_half_tc"] = Tensor.empty(64, 64, dtype=dtypes.half, device="NULL") @ Tensor.empty(64, 64, dtype=dtypes.half, device="NULL")
  ret["softmax_float"] = Tensor.empty(16, 64, device="NULL").softmax(-1)
  return ret

@pytest.mark.parametrize("name", sorted(golden_kernels()))
def test_float32_float16_ptx_unchanged(name):
  assert hashlib.sha256(render_ptx(golden_kernels()[name]).encode()).hexdigest() == GOLDEN[name]
