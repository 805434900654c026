# lowered programs are kept on disk, keyed by the kernel, the renderer and a digest of tinygrad's code: a later process lowers none of
# them (a prompt's first call is mostly lowering), a changed tinygrad lowers them all again
import os, subprocess, sys

CHILD = """
import sys
import tinygrad.codegen as cg, tinygrad.engine.realize as realize
from tinygrad import Tensor
if sys.argv[1] != "-": cg._code_digest = lambda: sys.argv[1]
lowered, compile_kernel = [], realize._compile_kernel
realize._compile_kernel = lambda x: lowered.append(x) or compile_kernel(x)
assert (Tensor([1.0, 2.0, 3.0]).contiguous() * 3 + 1).tolist() == [4.0, 7.0, 10.0]
print(len(lowered))
"""

def lowered(tmp_path, digest="-") -> int:
  env = {**os.environ, "DEV": "CPU", "PARALLEL": "0", "CACHEDB": str(tmp_path / "cache.db")}
  return int(subprocess.run([sys.executable, "-c", CHILD, digest], env=env, check=True, capture_output=True, text=True).stdout)

def test_a_later_process_takes_the_lowered_programs_from_disk(tmp_path):
  assert lowered(tmp_path) > 0
  assert lowered(tmp_path) == 0

def test_changed_code_lowers_again(tmp_path):
  first = lowered(tmp_path)
  assert lowered(tmp_path, "another tinygrad") == first > 0
