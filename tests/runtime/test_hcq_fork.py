# runtime/hcq/fork: a forked child's copy of a device opened before fork() refuses work with a clear error instead of hanging (the CPU
# device's worker thread is not in the child) or reaching the parent's memory. Upstream this belongs in test/device/test_hcq.py.
import os, subprocess, sys, textwrap

CHILD = """
  import os, sys
  from tinygrad import Tensor
  print("PARENT", (Tensor([1., 2.], device="CPU") + 1).tolist(), flush=True)
  if (pid:=os.fork()) == 0:
    try: print("CHILD ran", (Tensor([3., 4.], device="CPU") + 1).tolist(), flush=True)
    except RuntimeError as e: print("CHILD raised", e, flush=True)
    os._exit(0)
  os.waitpid(pid, 0)
  print("PARENT", (Tensor([5., 6.], device="CPU") + 1).tolist(), flush=True)
"""

def test_device_opened_before_fork_refuses_work_in_the_child():
  r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True, timeout=60,
                     env={**os.environ, "CPU": "1", "ORIN_EMU": "0"})
  lines = r.stdout.splitlines()
  assert lines[0] == "PARENT [2.0, 3.0]" and lines[-1] == "PARENT [6.0, 7.0]", r.stdout + r.stderr[-2000:]
  assert len(lines) == 3 and lines[1].startswith("CHILD raised CPU device opened before fork(): it belongs to process "), r.stdout

def test_hcq_imports_without_fork():
  # Windows has no fork() and no os.register_at_fork (the standard library checks for them too); the CPU device imports hcq.py there
  code = "import os; del os.fork, os.register_at_fork; import tinygrad.runtime.support.hcq, tinygrad.runtime.ops_cpu; print('imported')"
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ, "ORIN_EMU": "0"})
  assert r.stdout == "imported\n", r.stderr[-2000:]
