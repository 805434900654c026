# Opening the device is all or nothing: whichever ioctl or mmap of the bring-up fails (a transient ENOMEM: the emulated kernel's fault
# injection at every one of them in turn), the failed open leaves nothing behind (fds, CPU mappings at GPU VAs, nvmap handles and memory,
# GPU mappings, channels, TSG, AS, HCQ's peer group and signal pool), and opening it again in the same process works.
import pytest
from tegra_kernel import emu_kernel, run_child

SWEEP = """
  import errno, traceback
  from tinygrad import Device, Tensor
  from tinygrad.runtime.support.hcq import HCQCompiled
  from orin_emu.kernel import kernel
  from orin_emu.kernel.memory import file_mappings
  k = kernel()
  def state(): return k.counts(), len(file_mappings(k.dram.ino)) + len(file_mappings(k.usermode.ino)), \\
                      [len(d["NV"]) for d in (HCQCompiled.peer_groups, HCQCompiled.signal_pages, HCQCompiled.signal_pool)]
  def drop(e):
    # what the exception holds goes with it: its frames' locals, the fds of the call that failed. It sits in reference cycles
    # (ExitStack's, select_first_inited's), so it would otherwise go at the next collection.
    for x in [e, e.__context__, *getattr(e, "exceptions", ())]:
      if x is not None: traceback.clear_frames(x.__traceback__)
  before = state()
  for n in range(1, 1000):
    k.faults.WHAT(None, errno.ENOMEM, n)   # the nth WHAT of any kind fails
    try: Device["NV"]
    except Exception as e: message = f"{type(e).__name__}: {e}"; drop(e)
    else: break
    assert state() == before, (n, message, before, state())
  k.faults.clear()   # the open that got through is the retry
  print("FAILED", n - 1, "TIMES, LAST:", message)
  print("RETRY", (Tensor([1., 2.], device="NV") + 1).tolist())
"""

@pytest.mark.parametrize("what,least", [("ioctl", 150), ("mmap", 30)])   # 179 ioctls and 42 mmaps in this series
@pytest.mark.kernel_errors_expected
def test_failed_bring_up_leaves_nothing_and_a_retry_works(what, least):
  if emu_kernel() is None: pytest.skip("needs the emulated kernel's fault injection")
  r = run_child(SWEEP.replace("WHAT", what))
  assert "RETRY [2.0, 3.0]" in r.stdout, r.stdout[-3000:] + r.stderr[-5000:]
  assert int(r.stdout.split("FAILED ")[1].split()[0]) >= least, r.stdout   # each of them failed once
