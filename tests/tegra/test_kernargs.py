# The kernargs ring wraps around: arguments of kernels still queued must not be overwritten by new launches.
import threading, numpy as np
from tinygrad import Tensor
from tinygrad.runtime.support.memory import BumpAllocator
from tegra_kernel import nv_kernel

def test_kernargs_wrap_waits_for_queued_kernels(dev, monkeypatch):
  a = Tensor([1., 2., 3., 4.], device="NV").realize()
  prg, gs, ls = nv_kernel(a + 1)
  outs = [Tensor.zeros(4, device="NV").contiguous().realize() for _ in range(6)]
  dev.synchronize()
  # a ring of room for three launches, so six launches wrap it twice
  monkeypatch.setattr(dev, "kernargs_offset_allocator", BumpAllocator(3 * prg.kernargs_alloc_size, wrap=True))
  gate = dev.new_signal(value=0)
  dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)   # launches stay queued until it opens
  (opener:=threading.Timer(0.2, lambda: setattr(gate, "value", 1))).start()
  for o in outs: prg(o.uop.buffer._buf, a.uop.buffer._buf, global_size=gs, local_size=ls)
  opener.join()
  for o in outs: np.testing.assert_equal(o.numpy(), [2., 3., 4., 5.])
