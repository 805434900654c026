# a body of params and of buffers still to be allocated (a @function's, a realize's outer graph) is scheduled alike by every process of
# the same code and flags: its schedule is kept on disk beside the programs, so a warm process's first token does not schedule a model
# block's body or the forward around the blocks again
import json, os, pathlib, subprocess, sys

RUN = """
import json
import tinygrad.schedule as S
from tinygrad import Tensor, function
made, real = [], S.create_schedule
S.create_schedule = lambda sink: made.append(1) or real(sink)
@function
def body(x:Tensor, w:Tensor) -> Tensor: return ((x @ w).relu() * 2 + 1).contiguous()
w = Tensor.arange(16, dtype='float32').reshape(4, 4).contiguous().realize()
out = body(Tensor.ones(2, 4).contiguous().realize(), w).numpy()
print(json.dumps({"scheduled": len(made), "out": out.tolist()}))
"""

# a precompiled body's call leaves the buffers between its kernels to the outer graph's schedule: fresh buffers, numbered anew by
# each process
FRESH = """
import json
import tinygrad.schedule as S
from tinygrad import Tensor, function
made, real = [], S.create_schedule
S.create_schedule = lambda sink: made.append(1) or real(sink)
@function(precompile=True)
def body(x:Tensor) -> Tensor: return ((x @ x.T).relu().contiguous() * 2).sum(1).contiguous()
out = body(Tensor.ones(2, 4).contiguous().realize()).numpy()
print(json.dumps({"scheduled": len(made), "out": out.tolist()}))
"""

def run(tmp_path, code=RUN, **env) -> dict:
  e = {**os.environ, "DEV": "CPU", "CACHEDB": str(tmp_path / "cache.db"), **env}
  return json.loads(subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True).stdout.splitlines()[-1])

def test_a_bodys_schedule_is_kept_for_the_next_process(tmp_path):
  cold, warm = run(tmp_path), run(tmp_path)
  assert cold["scheduled"] >= 2 and warm["scheduled"] == 0 and warm["out"] == cold["out"] == [[49.0, 57.0, 65.0, 73.0]] * 2
  # other flags, other schedules; no disk cache, none kept
  assert run(tmp_path, SPLIT_REDUCEOP="0")["scheduled"] == run(tmp_path, CACHELEVEL="0")["scheduled"] == cold["scheduled"]
  # the scheduler's knobs read with getenv are flags too
  assert run(tmp_path, REDUCEOP_SPLIT_THRESHOLD="1")["scheduled"] == cold["scheduled"]

def test_every_knob_the_scheduler_reads_with_getenv_keys_its_schedules():
  # a knob upstream adds to the scheduler outside the context variables would otherwise serve schedules made under its old value
  import re, tinygrad.schedule as S
  src = "".join(f.read_text() for f in pathlib.Path(S.__file__).parent.glob("*.py"))
  assert set(re.findall(r'getenv\("([A-Z0-9_]+)"', src)) == set(S.SCHEDULE_ENV)

def test_a_new_shell_finds_the_schedule(tmp_path):
  # a login's own variables (its SSH connection, its working directory) are no flag: the next session's first token is warm
  cold = run(tmp_path)
  assert run(tmp_path, SSH_CLIENT="10.0.0.2 52114 22", OLDPWD="/home/orin/src")["scheduled"] == 0 and cold["scheduled"] >= 2

def test_a_schedule_with_fresh_buffers_is_kept_for_the_next_process(tmp_path):
  cold, warm = run(tmp_path, FRESH), run(tmp_path, FRESH)
  assert cold["scheduled"] >= 3 and warm["scheduled"] == 0 and warm["out"] == cold["out"] == [16.0, 16.0]
