"""What overlays/tinygrad.nix relies on in tinygrad's library lookup (runtime/support/c.py, compiler_cuda.py), checked
against the tinygrad this environment runs (the pinned base plus our series): a substituted absolute path is used
as-is, a missing one (no driver in the build sandbox) leaves the library unloaded instead of failing the import,
<NAME>_PATH still overrides, and the dev shell's CUDA_PATH directory serves both NVRTC's include root and libcuda."""
import os, pathlib, subprocess, sys, _ctypes

ELF = _ctypes.__file__  # any shared object will do: findlib checks the ELF magic, not the library's name

def run(code:str, **env:str) -> str:
  clean = {k: v for k, v in os.environ.items() if not k.endswith("_PATH") or k in ("PATH", "PYTHONPATH")}
  # the project venv defaults NVRTC_PATH/NVJITLINK_PATH to the pip wheels; blank is "unset" to tinygrad's findlib
  clean |= {"NVRTC_PATH": "", "NVJITLINK_PATH": ""}
  return subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True).stdout.strip()

def findlib(nm:str, paths:list[str], **env:str) -> str:
  return run(f"from tinygrad.runtime.support.c import DLL; print(DLL.findlib({nm!r}, {paths!r}))", **env)

def test_substituted_absolute_path_is_used_as_is():
  assert findlib("nvrtc", [ELF]) == ELF

def test_absent_driver_library_leaves_it_unloaded():
  assert findlib("cuda", ["/run/opengl-driver-absent/lib/libcuda.so"]) == "None"
  assert run("import tinygrad.runtime.autogen.cuda as c; print(c.dll.nm)") == "cuda"   # imports; a call would say what failed to load

def test_name_path_variable_overrides_the_substitution():
  assert findlib("nvrtc", ["/nix/store/x-cuda_nvrtc-lib/lib/libnvrtc.so"], NVRTC_PATH=ELF) == ELF
  assert findlib("nvjitlink", ["/nix/store/x-libnvjitlink-lib/lib/libnvJitLink.so"], NVJITLINK_PATH=ELF) == ELF

def test_cuda_path_directory_serves_libcuda_and_nvrtc_includes(tmp_path):
  (tmp_path/"include").mkdir()
  (tmp_path/"libcuda.so").symlink_to(ELF)
  # the dev shell's CUDA_PATH, for an editable checkout whose DLL('cuda', ...) is upstream's
  assert findlib("cuda", ["cuda"], CUDA_PATH=str(tmp_path)) == str(tmp_path/"libcuda.so")
  assert run("from tinygrad.runtime.support import compiler_cuda as c; print(c.CUDA_PATH)", CUDA_PATH=str(tmp_path)) == str(tmp_path)
  # upstream passes -I{CUDA_PATH}/include; our series keeps that when CUDA_INCLUDE_PATH is unset
  src = pathlib.Path(run("from tinygrad.runtime.support import compiler_cuda as c; print(c.__file__)")).read_text()
  assert '{CUDA_PATH}/include"' in src
