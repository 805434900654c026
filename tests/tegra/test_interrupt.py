# Ctrl-C while the host waits on the GPU: the wait raises KeyboardInterrupt at once; the exit that follows says what it still waits for
# (the work queued before the interrupt), and a second Ctrl-C ends it quietly instead of waiting out HCQ's timeout. SIGTERM ends it at once.
import os, queue, signal, subprocess, sys, textwrap, threading, time
from tegra_kernel import run_child

CHILD = """
  import signal
  # Ctrl-C as a terminal sends it: a shell's background job (nohup ... &, as a CI runner may start the suites) inherits SIGINT ignored
  signal.signal(signal.SIGINT, signal.default_int_handler)
  from tinygrad import Device, Tensor
  dev = Device["NV"]
  x = (Tensor([1., 2.], device="NV") + 1).realize()   # a Tensor script: its program is still alive at exit
  # queued work that never finishes: the GPU waits on a signal nobody sets, as a long kernel keeps it busy
  dev.hw_compute_queue_t().wait(dev.new_signal(value=0), 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
  try:
    print("WAITING", flush=True)   # inside the try: a Ctrl-C from here on, even before the wait starts on a loaded machine, is the wait's
    dev.synchronize()
  except KeyboardInterrupt: print("INTERRUPTED", flush=True); raise
"""

def test_ctrl_c_interrupts_the_wait_and_the_exit():
  p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, "DEV": "NV", "HCQDEV_WAIT_TIMEOUT_MS": "120000"})   # a wait that does not end by itself in this test
  lines:queue.Queue = queue.Queue()
  threading.Thread(target=lambda: [lines.put(ln.rstrip("\n")) for ln in p.stdout], daemon=True).start()
  seen: list[str] = []
  def until(text:str, timeout:float):
    end = time.monotonic() + timeout
    try:
      while not seen.append(lines.get(timeout=max(end - time.monotonic(), 0))) and not seen[-1].startswith(text): pass
    except queue.Empty:
      p.kill()
      raise AssertionError(f"no {text!r} in {timeout} s; the child printed {seen} and wrote to stderr: {p.stderr.read()[-2000:]}") from None
  try:
    until("WAITING", 120)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    # each within 30 s: at once, not at the end of the 120 s wait, with room for a 2-core CI machine running two other emulated GPUs beside it
    until("INTERRUPTED", 30)
    until("NV: waiting for queued work before finalizing", 30)   # the exit says what it waits for, and how to skip it
    p.send_signal(signal.SIGINT)
    until("NV: finalizing without waiting for queued work", 30)
    p.wait(timeout=60)
  finally: p.kill()
  err = p.stderr.read()
  assert "KeyboardInterrupt" in err and "Exception ignored" not in err and err.count("Traceback") == 1, err   # the script's own, only

def test_sigterm_during_a_kernel_ends_the_process_and_the_next_starts_clean(dev):
  p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, "DEV": "NV", "HCQDEV_WAIT_TIMEOUT_MS": "120000"})
  try:
    assert p.stdout.readline().strip() == "WAITING", p.stderr.read()[-2000:]
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == -signal.SIGTERM   # no handler: the process ends at once, its channel with it
  finally: p.kill()
  r = run_child("from tinygrad import Tensor\nprint((Tensor([1., 2.], device='NV') + 1).tolist())")
  assert r.stdout == "[2.0, 3.0]\n" and r.returncode == 0 and r.stderr == "", r.stdout + r.stderr[-2000:]
