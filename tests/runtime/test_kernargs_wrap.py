# hcq: arguments are bump-allocated from the device's kernargs ring, which wraps; before it wraps onto arguments that queued kernels may
# not have read yet, the device is synchronized. Upstream this belongs in test/device/test_hcq.py.
from tinygrad import Tensor, Device
from tinygrad.codegen import to_program
from tinygrad.engine.realize import get_runtime
from tinygrad.runtime.support.memory import BumpAllocator

def test_kernargs_ring_wrap_synchronizes_first(monkeypatch):
  dev, a = Device["NV"], Tensor([1., 2., 3., 4.], device="NV").realize()
  prg = get_runtime(dev.device, to_program((a + 1).schedule_linear().src[-1].src[0], dev.renderer))
  monkeypatch.setattr(dev, "kernargs_offset_allocator", BumpAllocator(3 * prg.kernargs_alloc_size, wrap=True))
  syncs, sync = [], dev.synchronize
  monkeypatch.setattr(dev, "synchronize", lambda *a, **kw: syncs.append(dev.kernargs_offset_allocator.ptr) or sync(*a, **kw))
  for _ in range(7): prg.fill_kernargs((a.uop.buffer._buf,))
  assert syncs == [3 * prg.kernargs_alloc_size] * 2   # before the 4th and the 7th arguments, the ring's two wraps
