# NVRTC from the PyPI wheel must compile against the CUDA headers of its own release (the nvidia-cuda-runtime-cu12 wheel), not against
# whatever toolkit sits in /usr/local/cuda (CUDA 13 on our machines) or nothing at all. NVRTC compiles without a GPU.
import json, os, pathlib, subprocess, sys
import nvidia.cuda_nvrtc, nvidia.cuda_runtime

NVRTC_LIB = pathlib.Path(nvidia.cuda_nvrtc.__file__).parent/"lib"/"libnvrtc.so.12"
WHEEL_INCLUDE = (pathlib.Path(nvidia.cuda_runtime.__file__).parent/"include").resolve()

# a fresh interpreter per case: tinygrad binds NVRTC (NVRTC_PATH) and reads the include settings at import
CHILD = """
import json
from tinygrad import Tensor, dtypes
from tinygrad.codegen import get_program
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.runtime.support.compiler_cuda import NVCompiler
t = (Tensor.empty(256, dtype=dtypes.half, device="NULL") * 3 + 1).contiguous()
src = get_program(t.schedule()[-1].ast, NVRenderer("sm_87")).src
compiler = NVCompiler("sm_87")
print(json.dumps({"fp16": "#include <cuda_fp16.h>" in src, "options": compiler.compile_options, "cubin": compiler.compile(src)[:4].hex()}))
"""

def compile_fp16_kernel(**env:str) -> dict:
  base = {k:v for k,v in os.environ.items() if k not in {"CUDA_PATH", "CUDA_INCLUDE_PATH"}}
  proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env={**base, "NVRTC_PATH": str(NVRTC_LIB), **env})
  assert proc.returncode == 0, proc.stderr
  ret = json.loads(proc.stdout.splitlines()[-1])
  assert ret["fp16"] and ret["cubin"] == b"\x7fELF".hex()
  return ret

def includes(options:list[str]) -> list[str]: return [str(pathlib.Path(o[2:]).resolve()) for o in options if o.startswith("-I")]

def test_wheel_nvrtc_uses_wheel_headers():
  assert includes(compile_fp16_kernel()["options"]) == [str(WHEEL_INCLUDE)]

def test_cuda_include_path_list(tmp_path):
  assert includes(compile_fp16_kernel(CUDA_INCLUDE_PATH=f"{tmp_path}{os.pathsep}{WHEEL_INCLUDE}")["options"]) == [str(tmp_path), str(WHEEL_INCLUDE)]

def test_wheel_nvrtc_ignores_another_toolkits_cuda_path(tmp_path):
  # CUDA_PATH naming another release (a system CUDA 13, say) must not bring its headers into the wheel NVRTC's 12.6 compile
  (tmp_path/"include").mkdir()
  assert includes(compile_fp16_kernel(CUDA_PATH=str(tmp_path))["options"]) == [str(WHEEL_INCLUDE)]
