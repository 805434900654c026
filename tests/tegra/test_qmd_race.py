# A queue resubmitted with new signal values must not let the GPU pick up the next submission's value early (upstream test_hcq's
# test_exec_2_kernels_100_times read 198 instead of 200 on the Orin: the final signal arrived before the last kernels ran).
import contextlib
from tinygrad import Tensor
from tinygrad.uop.ops import UOp
from tinygrad.dtype import dtypes
from tegra_kernel import emu_kernel, nv_kernel

@contextlib.contextmanager
def widened_qmd_race(seconds:float):
  # the emulated GPU waits this long between a kernel's end and re-reading its QMD for the releases, as SKED's writeback does
  gpu = k.gpu if (k:=emu_kernel()) is not None else None
  if gpu is not None: gpu.qmd_race_s, old = seconds, gpu.qmd_race_s
  try: yield
  finally:
    if gpu is not None: gpu.qmd_race_s = old

def test_resubmitted_queue_signals_its_own_value(dev):
  a = Tensor([0., 1.], device="NV").realize()
  prg, gs, ls = nv_kernel(a + 1)
  b = (a + 1).realize()
  ab = prg.fill_kernargs((a.uop.buffer._buf, b.uop.buffer._buf))
  ba = prg.fill_kernargs((b.uop.buffer._buf, a.uop.buffer._buf))

  val = UOp.variable("sig_val", 0, 0xffffffff, dtypes.uint32)
  q = dev.hw_compute_queue_t().wait(dev.timeline_signal, val - 1).exec(prg, ab, gs, ls).exec(prg, ba, gs, ls) \
                               .signal(dev.timeline_signal, val)
  with widened_qmd_race(0.002):
    for _ in range(20):
      q.submit(dev, {"sig_val": dev.timeline_value})
      dev.timeline_value += 1
    dev.timeline_signal.wait(dev.timeline_value - 1)
    # read right at the signal, as the host may (each submission: a = b + 1, then b = a + 1)
    assert b.uop.buffer._buf.cpu_view().view(fmt='f')[0] == 41.0  # b starts at 1
