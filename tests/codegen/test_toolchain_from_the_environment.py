# The NVRTC and nvJitLink tests take CUDA from the environment, as tinygrad does for users: under Nix (the flake's check, the shell) or a
# system CUDA there are no pip wheels to import, so with `nvidia` unimportable they must still run, none of them skipped.
import os, pathlib, subprocess, sys
import pytest
from tinygrad.runtime.autogen import nvjitlink, nvrtc

HERE = pathlib.Path(__file__).resolve().parent
FILES = [HERE/"test_cuda_include_path.py", HERE/"test_ptx_float64.py"]
CHILD = """
import sys, pytest
try: import nvidia.cuda_nvrtc
except ImportError: pass
else: sys.exit("the nvidia wheels are still importable")
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-rs", *sys.argv[1:]]))
"""

@pytest.mark.skipif(not {nvrtc.dll.nm, nvjitlink.dll.nm} <= nvrtc.dll._loaded_, reason="no NVRTC or nvJitLink in this environment")
def test_toolchain_tests_run_without_the_pip_wheels(tmp_path):
  (tmp_path/"nvidia").mkdir()
  (tmp_path/"nvidia"/"__init__.py").write_text('raise ImportError("the pip wheels are blocked: CUDA comes from the environment")\n')
  # on PYTHONPATH, so the tests' own child processes cannot import the wheels either
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
  r = subprocess.run([sys.executable, "-c", CHILD, *map(str, FILES)], cwd=HERE, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0 and " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
