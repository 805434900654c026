# hcq: a forked child's copy of a device opened before fork() refuses work with a clear error instead of running its work as the parent's
# (through the parent's device files and shared memory) and breaking the parent's timeline. Upstream this belongs in test/device/test_hcq.py.
import os, subprocess, sys, textwrap

CHILD = """
  import os
  from tinygrad import Tensor, Device
  dev = Device["NV"]
  (Tensor([1., 2.], device="NV") + 1).realize(); dev.synchronize()
  if (pid:=os.fork()) == 0:
    try: (Tensor([3., 4.], device="NV") + 1).realize(); dev.synchronize(); print("CHILD ran", flush=True)
    except RuntimeError as e: print("CHILD raised", e, flush=True)
    os._exit(0)
  os.waitpid(pid, 0)
  (Tensor([5., 6.], device="NV") + 1).realize(); dev.synchronize()
  print("PARENT synchronized", flush=True)
"""

def test_device_opened_before_fork_refuses_work_in_the_child():
  r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True, timeout=120,
                     env={**os.environ, "DEV": "MOCK+NV:PTX", "HCQDEV_WAIT_TIMEOUT_MS": "3000"})
  lines = [l for l in r.stdout.splitlines() if l.startswith(("CHILD", "PARENT"))]  # the mock prints when it has no PTX emulator
  assert len(lines) == 2 and lines[0].startswith("CHILD raised NV device opened before fork(): it belongs to process "), r.stdout + r.stderr[-2000:]
  assert lines[1] == "PARENT synchronized" and r.returncode == 0, r.stdout + r.stderr[-2000:]
