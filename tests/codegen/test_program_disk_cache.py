# lowered programs are kept on disk, keyed by the kernel, the renderer and a digest of tinygrad's code: a later process lowers none of
# them (a prompt's first call is mostly lowering), a changed tinygrad lowers them all again; beam search keeps its own cache
import os, pathlib, subprocess, sys

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

def lowered(tmp_path, digest="-", **env) -> int:
  env = {**{k: v for k, v in os.environ.items() if k != "ORIN_EMU_PTX_DIR"}, "DEV": "CPU", "PARALLEL": "0", "CACHEDB": str(tmp_path / "cache.db"),
         "PYTHONPATH": os.pathsep.join([str(pathlib.Path(__file__).parents[2]), *filter(None, [os.environ.get("PYTHONPATH")])]), **env}
  r = subprocess.run([sys.executable, "-c", CHILD, digest], env=env, capture_output=True, text=True)
  assert r.returncode == 0, r.stderr[-3000:]
  return int(r.stdout.split()[-1])

def test_a_later_process_takes_the_lowered_programs_from_disk(tmp_path):
  assert lowered(tmp_path) > 0
  assert lowered(tmp_path) == 0

def test_changed_code_lowers_again(tmp_path):
  first = lowered(tmp_path)
  assert lowered(tmp_path, "another tinygrad") == first > 0

def test_beam_searches_again(tmp_path):
  # beam search's own cache of opts is what a later process reuses: its kernels are lowered, and timed, again
  first = lowered(tmp_path, BEAM="1")
  assert lowered(tmp_path, BEAM="1") == first > 0

def test_the_emulated_orin_runs_programs_from_disk(tmp_path):
  # its SMs run the PTX registered when a program was compiled, in its store beside the disk cache, not only in this process
  emu = dict(DEV="NV", ORIN_EMU="1", HCQDEV_WAIT_TIMEOUT_MS="240000")
  assert lowered(tmp_path, **emu) > 0
  assert lowered(tmp_path, **emu) == 0 and (tmp_path / "orin-emu-ptx").is_dir()
