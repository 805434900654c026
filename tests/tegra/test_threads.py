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

CAPTURE = """
  import threading
  from tinygrad import Tensor, TinyJit
  t, inside, got = Tensor([3.0]).realize(), threading.Event(), []
  def f(x):
    inside.set(); threading.Event().wait(0.5)   # another thread reads while this one's JIT captures
    return (x + 1).realize()
  jit = TinyJit(f)
  jit(Tensor([1.0]).contiguous())
  inside.clear()
  def read():
    inside.wait(10)
    try: got.append(t.tolist())
    except Exception as e: got.append(f"{type(e).__name__}: {e}")
  (reader:=threading.Thread(target=read)).start()
  jit(Tensor([2.0]).contiguous())
  reader.join()
  print("GOT", got)
"""

@pytest.mark.parametrize("device", ["NV", "CPU"])
def test_a_thread_reads_after_another_threads_jit_capture(request, device):
  # the capture's check that no data is read (it would be baked in) is the capturing thread's, not every thread's
  if device == "NV": request.getfixturevalue("dev")
  r = run_child(CAPTURE, DEV=device)
  assert "GOT [[3.0]]" in r.stdout and r.returncode == 0, r.stdout + r.stderr[-3000:]
