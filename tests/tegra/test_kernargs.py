# The kernargs ring wraps around: arguments of kernels still queued must not be overwritten by new launches.
import threading, numpy as np
from tinygrad import Tensor
from tinygrad.engine.realize import get_runner
from tinygrad.runtime.support.memory import BumpAllocator

def test_kernargs_wrap_waits_for_queued_kernels(dev, monkeypatch):
  a = Tensor([1., 2., 3., 4.], device="NV").realize()
  runner = get_runner(dev.device, (a + 1).schedule()[-1].ast)
  outs = [Tensor.zeros(4, device="NV").contiguous().realize() for _ in range(6)]
  dev.synchronize()
  # a ring of room for three launches, so six launches wrap it twice
  monkeypatch.setattr(dev, "kernargs_offset_allocator", BumpAllocator(3 * runner._prg.kernargs_alloc_size, wrap=True))
  gate = dev.new_signal(value=0)
  dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)   # launches stay queued until it opens
  (opener:=threading.Timer(0.2, lambda: setattr(gate, "value", 1))).start()
  for o in outs: runner._prg(o.uop.buffer._buf, a.uop.buffer._buf, global_size=runner.p.global_size, local_size=runner.p.local_size)
  opener.join()
  for o in outs: np.testing.assert_equal(o.numpy(), [2., 3., 4., 5.])
