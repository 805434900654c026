# Python threads issuing work at once (a threaded server, a data loader): tinygrad's state is process-wide, so they take turns and
# each gets its own right answer, on the emulated Orin as on the CPU.
import pytest
from tegra_kernel import run_child

THREADS = """
  import threading, numpy as np
  from tinygrad import Tensor, TinyJit
  errors = []
  def work(k):
    step = TinyJit(lambda x: (x * 2 + 1).realize())   # a JIT's outputs are its own buffers, reused by its next call: one per thread
    try:
      for r in range(5):
        a = np.full((16, 16), k + r, np.float32)
        np.testing.assert_equal((Tensor(a) @ Tensor(a)).numpy(), a @ a)
        np.testing.assert_equal(step(Tensor.full((4,), float(k + r)).contiguous()).numpy(), np.full(4, 2 * (k + r) + 1, np.float32))
    except Exception as e: errors.append(f"thread {k}: {type(e).__name__}: {e}")
  threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  print("ERRORS", errors)
"""

@pytest.mark.parametrize("device", ["NV", "CPU"])
def test_threads_take_turns(request, device):
  if device == "NV": request.getfixturevalue("dev")   # skips without an Orin
  r = run_child(THREADS, DEV=device)   # a fresh process: the threads open the device too
  assert "ERRORS []" in r.stdout and r.returncode == 0 and r.stderr == "", r.stdout + r.stderr[-3000:]
