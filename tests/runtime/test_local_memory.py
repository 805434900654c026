# nv: growing shader local memory must not free the old buffer while queued kernels may still use it: the allocator's cache hands it
# out again to the next allocation of that size. Upstream this belongs in test/device/ (NV).
from tinygrad import Device

def test_old_local_memory_freed_only_when_idle(monkeypatch):
  dev = Device["NV"]
  dev._ensure_has_local_memory(dev.slm_per_thread + 0x100)
  busy_at_free, free = [], dev.allocator.free
  def checked_free(buf, size, options=None):
    busy_at_free.append(dev.timeline_signal.value < dev.timeline_value - 1)
    return free(buf, size, options)
  monkeypatch.setattr(dev.allocator, "free", checked_free)
  # queued work stays pending until the CPU opens the gate, which a wait for the device does first
  gate, sync = dev.new_signal(value=0), dev.synchronize
  def open_and_sync(*args, **kwargs):
    gate.value = 1
    return sync(*args, **kwargs)
  monkeypatch.setattr(dev, "synchronize", open_and_sync)
  dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
  dev._ensure_has_local_memory(dev.slm_per_thread + 0x100)
  open_and_sync()
  assert busy_at_free == [False]

def test_an_interrupted_wait_leaves_local_memory_as_it_was(monkeypatch):
  # Ctrl-C in the wait: the size programs are checked against must still be the old buffer's
  dev = Device["NV"]
  dev._ensure_has_local_memory(dev.slm_per_thread + 0x100)
  before, buf = dev.slm_per_thread, dev.shader_local_mem
  def interrupted(*args, **kwargs): raise KeyboardInterrupt
  monkeypatch.setattr(dev, "synchronize", interrupted)
  try: dev._ensure_has_local_memory(before + 0x100)
  except KeyboardInterrupt: pass
  assert (dev.slm_per_thread, dev.shader_local_mem) == (before, buf)
