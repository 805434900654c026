# runtime/hcq/finalize: the exit waits for queued work and says so only when that takes a while (a wait interrupted by Ctrl-C, a long
# kernel); a script whose last work is still queued when it ends exits quietly. Upstream this belongs in test/device/test_hcq.py.
import os, subprocess, sys, textwrap

CHILD = """
  import threading
  from tinygrad import Device
  dev = Device["CPU"]
  gate = dev.new_signal(value=0)   # queued work that ends a moment after the script does
  dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
  threading.Timer(0.3, lambda: setattr(gate, "value", 1)).start()
"""

def test_an_exit_with_work_queued_says_nothing():
  r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True, timeout=120,
                     env={**os.environ, "CPU": "1", "ORIN_EMU": "0"})
  assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr[-2000:]
