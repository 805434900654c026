# NVRTC must compile against the CUDA headers of its own release, not against whatever toolkit sits in /usr/local/cuda (CUDA 13 on our
# machines) or nothing at all: the headers beside a pip wheel's NVRTC (nvidia-cuda-runtime-cu12), else CUDA_INCLUDE_PATH or CUDA_PATH's.
# NVRTC comes from the environment as for users (NVRTC_PATH, a system install), never from importing the wheels. NVRTC compiles without a GPU.
import ctypes, json, os, pathlib, re, shutil, subprocess, sys
import pytest
from tinygrad.runtime.autogen import nvrtc

if (_lib:=getattr(nvrtc.dll, "_name", None)) is None: pytest.skip("no NVRTC in this environment (NVRTC_PATH unset, none found)", allow_module_level=True)
NVRTC_LIB = pathlib.Path(_lib).resolve()

# a fresh interpreter per case: tinygrad binds NVRTC (NVRTC_PATH) and reads the include settings at import
CHILD = """
import json
from tinygrad import Tensor, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target, Context
from tinygrad.renderer.cstyle import CUDARenderer
from tinygrad.uop.ops import Ops
ren = CUDARenderer(Target("NV", "CUDA", "sm_87"))
t = (Tensor.empty(256, dtype=dtypes.half, device="NULL") * 3 + 1).contiguous()
with Context(CCACHE=0): prg = [to_program(c.src[0], ren) for c in t.schedule_linear().src if c.src[0].op is Ops.SINK][-1]
src = prg.src[2].arg
print(json.dumps({"fp16": "#include <cuda_fp16.h>" in src, "options": ren.compiler.compile_options, "cubin": ren.compiler.compile(src)[:4].hex()}))
"""

def compile_fp16_kernel(nvrtc_lib:pathlib.Path=NVRTC_LIB, **env:str) -> dict:
  # a case that sets CUDA_PATH or CUDA_INCLUDE_PATH starts without the environment's
  base = {k:v for k,v in os.environ.items() if not env or k not in {"CUDA_PATH", "CUDA_INCLUDE_PATH"}}
  proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env={**base, "NVRTC_PATH": str(nvrtc_lib), **env})
  assert proc.returncode == 0, proc.stderr
  ret = json.loads(proc.stdout.splitlines()[-1])
  assert ret["fp16"] and ret["cubin"] == b"\x7fELF".hex()
  return ret

def includes(options:list[str]) -> list[str]: return [str(pathlib.Path(o[2:]).resolve()) for o in options if o.startswith("-I")]

def cudart_version(include:str) -> int|None:
  h = pathlib.Path(include)/"cuda_runtime_api.h"
  return int(m[1]) if h.is_file() and (m:=re.search(r"#define\s+CUDART_VERSION\s+(\d+)", h.read_text(errors="replace"))) else None

def nvrtc_version() -> int:
  assert nvrtc.nvrtcVersion(major:=ctypes.c_int(), minor:=ctypes.c_int()) == 0
  return major.value * 1000 + minor.value * 10

# headers of NVRTC's release in this environment: beside a wheel's NVRTC, or where CUDA_INCLUDE_PATH or CUDA_PATH say
CANDIDATES = [NVRTC_LIB.parent.parent.parent/"cuda_runtime"/"include", *filter(None, os.environ.get("CUDA_INCLUDE_PATH", "").split(os.pathsep)),
              *([pathlib.Path(os.environ["CUDA_PATH"])/"include"] if os.environ.get("CUDA_PATH") else [])]
OWN_INCLUDE = next((str(p.resolve()) for p in CANDIDATES if cudart_version(str(p)) == nvrtc_version()), None)

def test_nvrtc_compiles_against_its_own_release_headers():
  found = [(p, cudart_version(p)) for p in includes(compile_fp16_kernel()["options"])]
  assert [v for _, v in found if v is not None][:1] == [nvrtc_version()], (found, nvrtc_version())

def test_cuda_include_path_list(tmp_path):
  assert OWN_INCLUDE is not None
  assert includes(compile_fp16_kernel(CUDA_INCLUDE_PATH=f"{tmp_path}{os.pathsep}{OWN_INCLUDE}")["options"]) == [str(tmp_path), OWN_INCLUDE]

@pytest.fixture
def wheel_nvrtc(tmp_path) -> tuple[pathlib.Path, pathlib.Path]:
  """NVRTC in the pip wheels' layout (site-packages/nvidia/{cuda_nvrtc/lib,cuda_runtime/include}): the environment's own when it is one,
  else a copy of the environment's NVRTC beside a link to its headers, so the wheel case is checked under Nix or a system CUDA too."""
  if NVRTC_LIB.parent.parent.parent.name == "nvidia" and (inc:=NVRTC_LIB.parent.parent.parent/"cuda_runtime"/"include").is_dir(): return NVRTC_LIB, inc
  assert OWN_INCLUDE is not None
  (lib:=tmp_path/"nvidia"/"cuda_nvrtc"/"lib").mkdir(parents=True)
  for f in [NVRTC_LIB, *NVRTC_LIB.parent.glob("libnvrtc-builtins.so*")]: shutil.copy(f.resolve(), lib/f.name)   # NVRTC loads its builtins by name
  (tmp_path/"nvidia"/"cuda_runtime").mkdir()
  (tmp_path/"nvidia"/"cuda_runtime"/"include").symlink_to(OWN_INCLUDE)
  return lib/NVRTC_LIB.name, tmp_path/"nvidia"/"cuda_runtime"/"include"

def test_wheel_nvrtc_ignores_another_toolkits_cuda_path(tmp_path, wheel_nvrtc):
  # CUDA_PATH naming another release (a system CUDA 13, say) must not bring its headers into the wheel NVRTC's 12.6 compile
  (other:=tmp_path/"other"/"include").mkdir(parents=True)
  lib, headers = wheel_nvrtc
  assert includes(compile_fp16_kernel(lib, CUDA_PATH=str(other.parent))["options"]) == [str(headers.resolve())]
