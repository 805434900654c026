# Tegra suites: run on a Jetson as they are (NV=1 finds /dev/nvgpu/igpu0/ctrl), elsewhere on the emulated Orin (ORIN_EMU=1).
import sys, pytest

def emu_kernel():
  """The emulated Orin's kernel room when these tests run on it, None on a real Jetson."""
  if "orin_emu.hook" not in sys.modules: return None   # ORIN_EMU=1 imports the hook
  from orin_emu.kernel import kernel
  return kernel()

@pytest.fixture(scope="session")
def dev():
  from tinygrad import Device
  try: d = Device["NV"]
  except Exception as e: pytest.skip(f"no NV device (not a Jetson and ORIN_EMU=1 not set): {e}")
  assert type(d.iface).__name__ == "TegraIface", "NV=1 on Tegra must pick TegraIface"
  return d

def nvmap_buffer(handle:int):
  """The emulated kernel's record of an nvmap handle; skips on a real Jetson, where nvmap's bookkeeping is not visible."""
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's view of nvmap buffers")
  return k.buffers[handle]

def kernel_log() -> list[str]:
  """This boot's kernel messages: the emulated kernel's log, or /dev/kmsg on a Jetson (skips when the user may not read it)."""
  if (k:=emu_kernel()) is not None: return k.klog.lines()
  import os
  try: fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
  except PermissionError: pytest.skip("/dev/kmsg is not readable (kernel.dmesg_restrict): run as root or in the adm group")
  lines = []
  try:
    while True: lines.append(os.read(fd, 8192).decode(errors="replace").split(";", 1)[-1].rstrip("\n"))
  except BlockingIOError: pass
  finally: os.close(fd)
  return lines

def pytest_configure(config):
  config.addinivalue_line("markers", "kernel_errors_expected: the test provokes GPU errors on purpose; the kernel-log check is off")

@pytest.fixture(autouse=True)
def kernel_log_check(request):
  """Fail a test that made the kernel log new GPU errors (faults, nvgpu [ERR] lines, nvmap warnings)."""
  from klog import read_log, gpu_errors
  try: before = len(read_log())
  except OSError: before = None   # no /dev/kmsg access (a Jetson user outside adm, a container): no check
  yield
  if before is None or request.node.get_closest_marker("kernel_errors_expected"): return
  assert not (new:=gpu_errors(read_log()[before:])), "new GPU errors in the kernel log:\n" + "\n".join(new)
