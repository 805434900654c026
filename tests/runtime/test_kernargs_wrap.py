# runtime/hcq: arguments are bump-allocated from the device's kernargs ring, which wraps; before it wraps onto arguments that queued
# kernels may not have read yet, the device is synchronized. Upstream this belongs in test/device/test_hcq.py (any HCQ device; here the
# CPU device, with a ring of room for three launches).
from tinygrad import Tensor, Device
from tinygrad.engine.realize import get_runner
from tinygrad.runtime.support.memory import BumpAllocator

def test_kernargs_ring_wrap_synchronizes_first(monkeypatch):
  dev, a = Device["CPU"], Tensor([1., 2., 3., 4.], device="CPU").realize()
  prg = get_runner("CPU", (a + 1).schedule()[-1].ast)._prg
  monkeypatch.setattr(prg, "kernargs_alloc_size", 64)
  monkeypatch.setattr(dev, "kernargs_offset_allocator", BumpAllocator(3 * 64, wrap=True))
  syncs, sync = [], dev.synchronize
  monkeypatch.setattr(dev, "synchronize", lambda: syncs.append(1) or sync())
  for _ in range(7): prg.fill_kernargs((a.uop.buffer._buf,))
  assert len(syncs) == 2   # before the 4th and the 7th arguments, the ring's two wraps
