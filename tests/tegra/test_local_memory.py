# Growing shader local memory must not free the old buffer while queued kernels may still use it: the allocator hands it out again at
# once, and a direct copy can overwrite it under a running kernel.
import threading
from tinygrad import Tensor

def test_old_local_memory_freed_only_when_idle(dev, monkeypatch):
  (Tensor([1., 2.], device="NV") * 2).realize()   # any compiled program sets up local memory
  assert dev.shader_local_mem is not None
  busy_at_free, free = [], dev.allocator.free
  def checked_free(buf, size, options=None):
    busy_at_free.append(dev.timeline_signal.value < dev.timeline_value - 1)
    return free(buf, size, options)
  monkeypatch.setattr(dev.allocator, "free", checked_free)
  # GPU work stays queued until the CPU opens the gate
  gate = dev.new_signal(value=0)
  dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
  (opener:=threading.Timer(0.2, lambda: setattr(gate, "value", 1))).start()
  dev._ensure_has_local_memory(dev.slm_per_thread + 0x100)
  opener.join()
  dev.synchronize()
  assert busy_at_free == [False]

def test_an_interrupted_wait_leaves_local_memory_as_it_was(dev, monkeypatch):
  # Ctrl-C in the wait before the reallocation: the size a program is checked against must still be the buffer's, or the next program
  # with that much local memory passes the check and overruns the old, smaller buffer
  (Tensor([1., 2.], device="NV") * 2).realize()
  before, buf = dev.slm_per_thread, dev.shader_local_mem
  def interrupted(): raise KeyboardInterrupt
  monkeypatch.setattr(dev, "synchronize", interrupted)
  try: dev._ensure_has_local_memory(before + 0x100)
  except KeyboardInterrupt: pass
  assert (dev.slm_per_thread, dev.shader_local_mem) == (before, buf)
