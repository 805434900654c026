# Clear failures: a GPU fault raises naming the fault and the VA; errors name the ioctl and errno; failed allocations leak nothing.
# A fault leaves the device in its error state for good, so faulting runs happen in a child process.
import errno, gc, os, re, pytest
from tinygrad.device import BufferSpec
from tegra_kernel import emu_kernel, run_child

@pytest.mark.kernel_errors_expected
def test_mmu_fault_names_fault_and_va(dev):
  r = run_child("""
    from tinygrad import Tensor, Device
    from tegra_kernel import nv_kernel
    from tinygrad.runtime.support.hcq import HCQBuffer
    dev = Device["NV"]
    a = Tensor([1., 2.], device="NV").realize()
    prg, gs, ls = nv_kernel(a + 1)
    args = prg.fill_kernargs((HCQBuffer(0x10000000, 8, owner=dev), a.uop.buffer._buf))   # the output VA is not mapped
    dev.hw_compute_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).exec(prg, args, gs, ls) \\
                            .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
    try: dev.synchronize()
    except RuntimeError as e: print("RAISED:", e)
  """)
  assert "RAISED:" in r.stdout, r.stdout + r.stderr
  report = r.stdout.split("RAISED:", 1)[1]
  if "could not be read" in report: pytest.skip("the fault VA is only in the kernel log, which this user may not read")
  assert "MMU fault" in report and "0x10000000" in report, report

FAULT = """
    from tinygrad import Tensor, Device
    from tegra_kernel import nv_kernel
    from tinygrad.runtime.support.hcq import HCQBuffer
    dev = Device["NV"]
    live = [Tensor.ones(64, device="NV").contiguous().realize() for _ in range(5)]   # buffers and programs still alive at exit
    a = Tensor([1., 2.], device="NV").realize()
    prg, gs, ls = nv_kernel(a + 1)
    args = prg.fill_kernargs((HCQBuffer(0x10000000, 8, owner=dev), a.uop.buffer._buf))   # the output VA is not mapped
    dev.hw_compute_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).exec(prg, args, gs, ls) \\
                            .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
"""

@pytest.mark.kernel_errors_expected
def test_after_a_fault_later_calls_name_it_and_exit_says_one_line(dev):
  r = run_child(FAULT + """
    for i in range(2):
      try: print((a * 3).tolist())
      except RuntimeError as e: print(f"RAISED {i}:", repr(str(e)))
  """)
  out = dict(l.split(": ", 1) for l in r.stdout.splitlines() if l.startswith("RAISED"))
  assert set(out) == {"RAISED 0", "RAISED 1"}, r.stdout + r.stderr
  assert "MMU fault" in out["RAISED 0"] and "Device fault detected" not in out["RAISED 0"], out
  assert "NV faulted earlier in this process and must be reopened" in out["RAISED 1"] and "MMU fault" in out["RAISED 1"], out
  assert len(r.stderr.strip().splitlines()) <= 1 and "Traceback" not in r.stderr, r.stderr   # exit: at most one line, no tracebacks

@pytest.mark.kernel_errors_expected
def test_uncaught_fault_is_one_exception(dev):
  r = run_child(FAULT + """
    print((a * 3).tolist())
  """)
  assert r.returncode != 0 and r.stderr.count("Traceback") == 1, r.stderr
  assert "direct cause" not in r.stderr and "During handling" not in r.stderr and "Error: Device fault detected" not in r.stderr, r.stderr
  tail = r.stderr[r.stderr.index("RuntimeError: "):].splitlines()
  assert "MMU fault" in tail[0] and len([l for l in tail if not l.startswith("MMU fault")]) <= 2, r.stderr   # the report, one exit line

@pytest.mark.kernel_errors_expected
def test_out_of_bounds_custom_kernel_is_one_fault_and_the_next_process_starts_clean(dev):
  r = run_child("""
    from tinygrad import Tensor, UOp
    from tinygrad.uop.ops import KernelInfo
    def oob_store(c:UOp) -> UOp:   # stores 1 GiB past its 64-byte buffer
      i = UOp.range(c.shape[0], 0)
      return c[i + (1 << 28)].store(i.cast(c.dtype)).end(i).sink(arg=KernelInfo(name="oob_store", opts_to_apply=()))
    c = Tensor.custom_kernel(Tensor.empty(16, device="NV"), fxn=oob_store)[0]
    for i, t in enumerate([c, Tensor([1., 2.], device="NV") + 1]):
      try: print(t.tolist())
      except RuntimeError as e: print(f"RAISED {i}:", repr(str(e)))
  """)
  out = dict(l.split(": ", 1) for l in r.stdout.splitlines() if l.startswith("RAISED"))
  assert set(out) == {"RAISED 0", "RAISED 1"}, r.stdout + r.stderr
  assert "MMU fault" in out["RAISED 0"] and "virt write" in out["RAISED 0"], out
  assert "NV faulted earlier in this process and must be reopened" in out["RAISED 1"], out
  assert len(r.stderr.strip().splitlines()) <= 1 and "Traceback" not in r.stderr, r.stderr   # exit: at most one line, no tracebacks
  r = run_child("from tinygrad import Tensor\nprint((Tensor([1., 2.], device='NV') + 1).tolist())")
  assert r.stdout == "[2.0, 3.0]\n" and r.returncode == 0 and r.stderr == "", r.stdout + r.stderr[-2000:]

MISALIGNED = """
    from tinygrad import Tensor, Device
    from tegra_kernel import nv_kernel
    from tinygrad.runtime.support.hcq import HCQBuffer
    dev = Device["NV"]
    a = Tensor([1., 2., 3., 4.], device="NV").realize()
    prg, gs, ls = nv_kernel(a + 1)
    buf = a.uop.buffer._buf
    args = prg.fill_kernargs((buf, HCQBuffer(buf.va_addr + 2, 16, owner=dev)))   # the input 2 bytes off: a misaligned load
    dev.hw_compute_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).exec(prg, args, gs, ls) \\
                            .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
"""
def raised(r) -> str:
  assert "RAISED:" in r.stdout, r.stdout + r.stderr
  return r.stdout.split("RAISED:", 1)[1]
CATCH = """
    try: dev.synchronize()
    except RuntimeError as e: print("RAISED:", e)
"""

# a board with TPCs fused off has fewer SMs than GPCs x TPCs per GPC x 2; the kernel refuses SM ids past the SMs present
@pytest.mark.parametrize("env", [{}, {"ORIN_EMU_TPC_MASKS": "0x7"}], ids=["all TPCs", "a TPC fused off"])
@pytest.mark.kernel_errors_expected
def test_sm_exception_named_with_its_pc(dev, env):
  report = raised(run_child(MISALIGNED + CATCH, **env))
  assert "GR exception" in report and re.search(r"SM \d+: misaligned address at PC 0x[0-9a-f]+ \(warp ESR 0xf, global ESR", report), report

@pytest.mark.kernel_errors_expected
def test_trap_is_a_gr_exception(dev):
  # PTX trap: the SM stops the kernel and interrupts the host (which ESR bits it sets is not in the r36.4 sources)
  report = raised(run_child("""
    from tinygrad import Device
    from tinygrad.device import TinyELF
    dev = Device["NV"]
    (prg:=dev.runtime(TinyELF(dev.compiler.compile('extern "C" __global__ void k() { asm volatile("trap;"); }'), "k", dev.renderer.target, ())))()
  """ + CATCH))
  assert report.splitlines()[0].strip() == "GPU channel 511: GR exception" and re.search(r"SM \d+: .* at PC 0x", report), report

@pytest.mark.parametrize("err", ["ENOENT", "EACCES"])
@pytest.mark.kernel_errors_expected
def test_fault_report_without_a_kernel_log(dev, err):
  # a container without /dev/kmsg, a user outside adm: the notifier still says what broke, the report says what it could not read
  if emu_kernel() is None: pytest.skip("needs the emulated kernel's fault injection")
  r = run_child(FAULT + CATCH, ORIN_EMU_FAULTS=",".join([f"open:/dev/kmsg:{err}"] * 4))
  report = raised(r)
  assert report.splitlines()[0].strip() == "GPU channel 511: MMU fault" and "/dev/kmsg: " + os.strerror(getattr(errno, err)) in report, report

@pytest.mark.kernel_errors_expected
def test_fault_report_leaves_out_earlier_processes_faults(dev):
  # channel ids are reused: the first process's MMU fault on channel 511 is in the log when the next one faults on its channel 511
  assert "0x10000000" in raised(run_child(FAULT + CATCH))
  report = raised(run_child(MISALIGNED + CATCH))
  assert "misaligned address" in report and "MMU fault" not in report and "0x10000000" not in report, report

def test_wait_timeout_without_fault_says_so(dev):
  # the GPU waits on a signal nobody sets: no fault, only the host's wait runs out (HCQDEV_WAIT_TIMEOUT_MS, 30 s by default)
  r = run_child("""
    from tinygrad import Device
    dev = Device["NV"]
    dev.hw_compute_queue_t().wait(dev.new_signal(value=0), 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
    try: dev.synchronize()
    except RuntimeError as e: print("RAISED:", e)
  """, HCQDEV_WAIT_TIMEOUT_MS="300")
  assert "RAISED:" in r.stdout, r.stdout + r.stderr
  report = r.stdout.split("RAISED:", 1)[1].splitlines()[0]   # the exception's own line, not what exit-time finalizing prints
  assert "Wait timeout: 300 ms" in report and "timeline signal at 0x" in report and "no fault" in report, report

def test_a_kernel_that_outlives_the_wait_is_a_timeout(dev):
  # a timeout is no fault: once the GPU gets past the wait, the same device computes again
  r = run_child("""
    from tinygrad import Device, Tensor
    dev = Device["NV"]
    gate = dev.new_signal(value=0)
    dev.hw_compute_queue_t().wait(gate, 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
    try: dev.synchronize()
    except RuntimeError as e: print("RAISED:", e)
    gate.value = 1
    print("AFTER", (Tensor([1., 2.], device="NV") + 1).tolist())
  """, HCQDEV_WAIT_TIMEOUT_MS="300")
  assert "RAISED: NV timeline signal at 0x" in r.stdout and "Wait timeout: 300 ms" in r.stdout, r.stdout + r.stderr
  assert "AFTER [2.0, 3.0]" in r.stdout and r.returncode == 0 and r.stderr == "", r.stdout + r.stderr[-3000:]

@pytest.mark.kernel_errors_expected
def test_ioctl_error_names_ioctl_and_errno(dev):
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's fault injection")
  k.faults.ioctl("NVGPU_AS_IOCTL_MAP_BUFFER_EX", errno.EINVAL)
  with pytest.raises(OSError, match=r"NVGPU_AS_IOCTL_MAP_BUFFER_EX failed: EINVAL") as e: dev.iface.alloc(0x1000)
  assert e.value.errno == errno.EINVAL

@pytest.mark.parametrize("ioctl,err", [("NVMAP_IOC_ALLOC", errno.ENOMEM), ("NVMAP_IOC_GET_FD", errno.EMFILE),
                                       ("NVGPU_AS_IOCTL_MAP_BUFFER_EX", errno.ENOMEM)])
@pytest.mark.kernel_errors_expected
def test_failed_alloc_leaks_nothing(dev, ioctl, err):
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's fault injection")
  dev.synchronize()
  gc.collect()   # a traceback kept by an earlier test holds the frame, and with it a dma-buf fd, until collected
  before = k.counts()
  k.faults.ioctl(ioctl, err)
  with pytest.raises(MemoryError if err == errno.ENOMEM else OSError, match=ioctl): dev.iface.alloc(0x1000)
  gc.collect()
  assert k.counts() == before

def test_alloc_free_keeps_fds_and_mappings_flat(dev):
  def count(): return len(os.listdir("/proc/self/fd")), open("/proc/self/maps").read().count("\n")
  dev.allocator.free(dev.allocator.alloc(0x1000, BufferSpec(nolru=True)), 0x1000, BufferSpec(nolru=True))
  before = count()
  for i in range(1000): dev.allocator.free(dev.allocator.alloc(0x1000 * (1 + i % 7), BufferSpec(nolru=True)), 0x1000 * (1 + i % 7), BufferSpec(nolru=True))
  assert count() == before

def test_permission_denied_names_the_group():
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's fault injection")
  from tinygrad.runtime.ops_nv import TegraIface
  k.faults.open("/dev/nvgpu/igpu0/ctrl", errno.EACCES)
  with pytest.raises(PermissionError, match="group 'video'"): TegraIface(None, 0)
