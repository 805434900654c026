# PTXRenderer must emit PTX that ptxas accepts for float64 exp2/log2/sin/sqrt/reciprocal (there are no .approx f64 forms of these), and
# leave float32/float16 kernels byte for byte as they were (the tensor-core matmul's loads aside). Assembled for sm_87 by nvJitLink as
# DEV=NV:PTX does (NVPTXCompiler), with the nvJitLink of the environment (NVJITLINK_PATH, a system install): no GPU needed.
import hashlib
import pytest
from tinygrad import Tensor, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target, Context
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.runtime.autogen import nvjitlink
from tinygrad.uop.ops import Ops, KernelInfo

def render_ptx(t:Tensor) -> str:
  # a fixed kernel name keeps the source independent of what else this process has rendered; to_program assembles it with nvJitLink
  ast = next(c.src[0] for c in t.schedule_linear().src if c.src[0].op is Ops.SINK)
  with Context(CCACHE=0): return to_program(ast.replace(arg=KernelInfo(name="k")), PTXRenderer(Target("NV", "PTX", "sm_87"))).src[2].arg

def unary(op:str, dtype) -> Tensor: return getattr(Tensor.empty(64, dtype=dtype, device="NULL"), op)()
F64_OPS = ["exp2", "log2", "sin", "sqrt", "reciprocal", "exp", "cos"]

@pytest.mark.skipif(getattr(nvjitlink.dll, "_name", None) is None, reason="no nvJitLink in this environment (NVJITLINK_PATH unset, none found)")
@pytest.mark.parametrize("op", F64_OPS)
def test_float64_ptx_assembles(op):
  assert ".f64" in render_ptx(unary(op, dtypes.float64))   # a CompileError carries nvJitLink's log

# sha256 of the PTX that pristine a9069c17 renders for these kernels, but the half matmul's: its lanes load 8 bytes a row, two k16 mmas a WMMA
GOLDEN = {
  "exp2_float": "f1a5e882b314c294d15cf0026cfc76c001f7fc391fcd6776bf9e2a3d30982a95",
  "exp2_half": "190cfd866d1f577d921ef059906614dc6738dd853ac50ce23daabcfea4d2c3f1",
  "log2_float": "11362891f80f20cb9cdfc7952be791124565c3a905e9d4790acd4ea8c339c301",
  "log2_half": "7c2df8437a8c0576ca66b6ce9f697c9bef67c13d00bb32210de09bf0186b455c",
  "matmul_half_tc": "35030cb14a612bb858669ab86834015d164114cef542cffb8a25fb051b84f51f",
  "reciprocal_float": "272ea60dece9ac3e88bfb4edfe459237918a560be679f70de4aa3f670e34a9fd",
  "reciprocal_half": "1b9fb17c9196b852449b69bbd997dfdf6590fe7df2f3c23e88bfe7067644795b",
  "sin_float": "0e3e85855198b8a830e85aeee914bb210511b54f097ef4f7f220751487c66c9e",
  "sin_half": "57291cf47e140adf3cacfcdb48c0049903fcde30999829e50924e1379e9ea814",
  "softmax_float": "2493aa2fe0567a8be356ee7b6f4cec6de864dae27851a9a7c4ce730f8c727b27",
  "sqrt_float": "97c5f2352c84949ee6bfeadba4d4a36b2b2a0fdf946aa3e2e21809a69666c2d7",
  "sqrt_half": "3a33d49d3b79bb7e63d34920da9c87bf1a943993266daadd2d31b1bd07f1a2be",
}

def golden_kernels() -> dict[str, Tensor]:
  ret = {f"{op}_{dt.name}": unary(op, dt) for op in ["exp2", "log2", "sin", "sqrt", "reciprocal"] for dt in (dtypes.float32, dtypes.float16)}
  ret["matmul_half_tc"] = Tensor.empty(64, 64, dtype=dtypes.half, device="NULL") @ Tensor.empty(64, 64, dtype=dtypes.half, device="NULL")
  ret["softmax_float"] = Tensor.empty(16, 64, device="NULL").softmax(-1)
  return ret

@pytest.mark.parametrize("name", sorted(golden_kernels()))
def test_float32_float16_ptx_unchanged(name):
  assert hashlib.sha256(render_ptx(golden_kernels()[name]).encode()).hexdigest() == GOLDEN[name]
