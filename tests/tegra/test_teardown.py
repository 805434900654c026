# What a Tegra device holds and gives back: no memory it never uses, no fd it no longer needs, and everything (channels, their rings
# and USERDs, buffers, CPU mappings, the AS, fds) when the device is finalized (upstream's interface hook, device_fini) rather than
# at process exit.
import os, sys
from tegra_kernel import run_child

def test_no_unused_rm_notifiers():
  # NVDevice asks every interface for a 48 MiB RM error notifier per channel; Tegra reports channel errors on a page of its own. In a
  # fresh process: one that ran other tests may hold a 48 MiB mapping of its own
  r = run_child("""
    from tinygrad import Device
    Device["NV"]
    with open("/proc/self/maps") as f: print(sum(int((r:=ln.split()[0].split("-"))[1], 16) - int(r[0], 16) == 48 << 20 for ln in f))""")
  assert r.returncode == 0 and r.stdout == "0\n", r.stdout + r.stderr[-2000:]

def test_channel_buffers_hold_no_fds_or_handles(dev):
  # SETUP_BIND and the CPU views keep the rings and USERDs alive: their dma-buf fds and nvmap handles are not kept open
  if "orin_emu.hook" not in sys.modules: import pytest; pytest.skip("needs the emulated kernel's view of fds and handles")
  from orin_emu.kernel import kernel
  k = kernel()
  assert k.counts()["fds"].get("dmabuf", 0) == 0
  pinned = {b for ch in k.channels.values() for b in (ch.gpfifo, ch.userd)}
  assert len(pinned) == 4 and not [b for b in pinned if b.id in b.client.handles]

def test_finalize_gives_back_everything():
  r = run_child("""
    import os, sys
    from tinygrad import Device, Tensor
    d = Device["NV"]
    (Tensor([1, 2]) + 1).realize()
    emu = "orin_emu.hook" in sys.modules
    def state():
      if not emu: return len(os.listdir("/proc/self/fd"))
      from orin_emu.kernel import kernel
      c = kernel().counts()
      return c["channels"], c["tsgs"], c["buffers"], c["proc_fds"]
    before = state()
    d.finalize()
    print("RESULT", before, state())
    d.iface.sleep(0)   # a wait's poll after finalize reads no error notifier it no longer maps (a fault would raise)
    print("SLEEP quiet")
    try: (Tensor([1, 2]) + 1).realize()
    except RuntimeError as e: print("AFTER", e)
  """)   # and at exit, atexit's finalize of the same device is quiet
  line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT")) if "RESULT" in r.stdout else ""
  assert line, r.stdout[-2000:] + r.stderr[-3000:]
  before, after = eval(line[len("RESULT"):].replace(") (", "), ("))
  if isinstance(before, int): assert after <= before - 6   # a Jetson: two channels, the TSG, the AS, nvmap and ctrl closed
  else: assert before[:2] == (2, 1) and after == (0, 0, 0, before[3] - 6)   # every buffer freed, those six fds closed
  assert "SLEEP quiet" in r.stdout and "AFTER NV device was finalized" in r.stdout and r.returncode == 0 and r.stderr == "", r.stdout[-2000:] + r.stderr[-3000:]

def test_finalizer_run_on_the_emulated_gpu_thread_does_not_wait_for_itself():
  # the emulated GPU is threads of the test process: a garbage collection there runs the host's finalizers, and freeing memory
  # synchronizes, so a free in the middle of a launch waited for that very launch until the wait timed out and the device was dead
  if "orin_emu.hook" not in sys.modules: import pytest; pytest.skip("the emulated GPU's threads only exist on the emulated Orin")
  r = run_child("""
    from tinygrad import Tensor, Device
    from tinygrad.device import BufferSpec
    from orin_emu.kernel import kernel
    dev, spec = Device["NV"], BufferSpec(nolru=True)
    pending, launch = [dev.allocator.alloc(0x1000, spec)], kernel().gpu.executor
    def executor(*args, **kwargs):   # what a finalizer the GPU thread's garbage collection ran would do: free memory mid-launch
      if pending: dev.allocator.free(pending.pop(), 0x1000, spec)
      return launch(*args, **kwargs)
    kernel().gpu._executor = executor
    print((Tensor([1., 2.]) + 1).tolist())
  """, HCQDEV_WAIT_TIMEOUT_MS="5000")
  assert r.returncode == 0 and r.stdout.strip() == "[2.0, 3.0]", r.stdout + r.stderr[-2000:]
