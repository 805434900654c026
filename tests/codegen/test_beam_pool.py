# BEAM's spawn pool must start its workers without re-running the parent's __main__: a script fed through stdin, or one without a
# __main__ guard, made every worker die at start while the pool replaced them forever.
import os, signal, subprocess, sys
import pytest

SCRIPT = "from tinygrad import Tensor\nprint((Tensor.arange(4) + 1).tolist())\n"
TIMEOUT_S = 120  # the search itself takes seconds; a pool that respawns dying workers never ends

def run_beam(args:list[str], stdin:str, cwd) -> str:
  # PARALLEL=2 asks for a pool of two workers; CACHELEVEL=0 keeps a cached search result from skipping the pool
  env = {**os.environ, "DEV": "CPU", "BEAM": "1", "PARALLEL": "2", "CACHELEVEL": "0"}
  proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=cwd, start_new_session=True)
  try: out, err = proc.communicate(stdin, timeout=TIMEOUT_S)
  except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)  # the workers and the resource tracker share the session
    _, err = proc.communicate()
    pytest.fail(f"BEAM=1 did not finish within {TIMEOUT_S} s; stderr tail:\n{err[-2000:]}")
  assert proc.returncode == 0, err
  return out

def test_beam_script_from_stdin(tmp_path):
  assert run_beam(["-"], SCRIPT, tmp_path).splitlines()[-1] == "[1, 2, 3, 4]"

def test_beam_script_without_main_guard(tmp_path):
  (script:=tmp_path/"script.py").write_text(SCRIPT)
  assert run_beam([str(script)], "", tmp_path).splitlines()[-1] == "[1, 2, 3, 4]"
