# Clear failures: a GPU fault raises naming the fault and the VA; errors name the ioctl and errno; failed allocations leak nothing.
# A fault leaves the device in its error state for good, so faulting runs happen in a child process.
import errno, gc, os, pytest
from tinygrad.device import BufferSpec
from tegra_kernel import emu_kernel, run_child

@pytest.mark.kernel_errors_expected
def test_mmu_fault_names_fault_and_va(dev):
  r = run_child("""
    from tinygrad import Tensor, Device
    from tinygrad.engine.realize import get_runner
    from tinygrad.runtime.support.hcq import HCQBuffer
    dev = Device["NV"]
    a = Tensor([1., 2.], device="NV").realize()
    runner = get_runner(dev.device, (a + 1).schedule()[-1].ast)
    args = runner._prg.fill_kernargs((HCQBuffer(0x10000000, 8, owner=dev), a.uop.buffer._buf))   # the output VA is not mapped
    dev.hw_compute_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).exec(runner._prg, args, runner.p.global_size, runner.p.local_size) \\
                            .signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
    try: dev.synchronize()
    except RuntimeError as e: print("RAISED:", e)
  """)
  assert "RAISED:" in r.stdout, r.stdout + r.stderr
  report = r.stdout.split("RAISED:", 1)[1]
  if "may not read" in report: pytest.skip("the fault VA is only in the kernel log, which this user may not read")
  assert "MMU fault" in report and "0x10000000" in report, report

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
