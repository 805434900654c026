# fork() after NV was used: nvgpu and nvmap serve an inherited fd in any process (no owner check in gk20a_channel_ioctl or
# nvmap_ioctl), while the doorbell page and every dma-buf CPU mapping are VM_DONTCOPY (gk20a_ctrl_dev_mmap, __nvmap_map), so they
# are not in the child. The child's copy of the device must refuse all work with a clear error, never reach the parent's objects,
# never crash, and exit quietly; the parent's results stay right whatever the child tried.
import re
from tegra_kernel import run_child

FORK = """
  import gc, os, sys
  from tinygrad import Tensor, TinyJit, Device
  @TinyJit
  def add(x, y): return (x.to("NV") + y).realize()
  for _ in range(3): add(Tensor([1., 2.], device="CPU").realize(), Tensor([10., 20.], device="NV").realize())   # a graph, a CPU copy beside it
  a = Tensor([5., 6.], device="NV").realize()
  print("PARENT", (a * 2).tolist(), flush=True)
  pid = os.fork()
  if pid == 0:
    CHILD
    sys.exit(0)   # a normal exit: atexit handlers and finalizers run in the child too
  _, status = os.waitpid(pid, 0)
  print("STATUS", os.waitstatus_to_exitcode(status), flush=True)
  print("PARENT", (a * 2).tolist(), (Tensor([1., 2.], device="NV") + 1).tolist(),
        add(Tensor([3., 4.], device="CPU").realize(), Tensor([10., 20.], device="NV").realize()).tolist(), flush=True)
"""

def fork(child:str):
  r = run_child(FORK.replace("CHILD", child))
  assert "STATUS" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
  return r, int(re.search(r"STATUS (-?\d+)", r.stdout)[1])

def test_child_gets_a_clear_error_and_the_parent_stays_right():
  r, status = fork("""
    dev = Device["NV"]
    tries = {"new tensor": lambda: (Tensor([5., 6.], device="NV") * 2 + 1).tolist(), "parent's tensor": lambda: (a * 3).tolist(),
             "jit": lambda: add(Tensor([7., 8.], device="CPU").realize(), a).tolist(), "synchronize": dev.synchronize,
             "alloc": lambda: dev.allocator.alloc(0x1000), "submit": lambda: dev.hw_compute_queue_t().signal(dev.timeline_signal, 99).submit(dev)}
    for name, fn in tries.items():
      try: print("CHILD", name, "ran:", fn(), flush=True)
      except RuntimeError as e: print("CHILD", name, "raised:", e, flush=True)
    del a; gc.collect()   # the parent's buffers go out of scope here
  """)
  assert status == 0, r.stdout[-3000:] + r.stderr[-3000:]
  lines = [ln for ln in r.stdout.splitlines() if ln.startswith("CHILD")]
  # the JIT's CPU input meets the CPU device first: it was opened before fork() too (its worker thread is the parent's)
  assert len(lines) == 6 and all(re.search(r"raised: (NV|CPU) device opened before fork\(\): it belongs to process \d+", ln) for ln in lines), \
    "\n".join(lines)
  assert r.stdout.splitlines()[-1] == "PARENT [10.0, 12.0] [2.0, 3.0] [13.0, 24.0]", r.stdout[-3000:]
  assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr[-3000:]

def test_child_that_never_uses_the_device_exits_quietly():
  r, status = fork("print('CHILD done', flush=True)")
  assert status == 0 and "CHILD done" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
  assert r.stdout.splitlines()[-1] == "PARENT [10.0, 12.0] [2.0, 3.0] [13.0, 24.0]", r.stdout[-3000:]
  assert r.stderr == "", r.stderr[-3000:]
