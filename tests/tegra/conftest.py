# Tegra suites: run on a Jetson as they are (DEV=NV finds /dev/nvgpu/igpu0/ctrl), elsewhere on the emulated Orin (ORIN_EMU=1).
import pathlib, sys, pytest
# the suite's helper modules (tegra_kernel, klog) import by name in any import mode, whatever the rootdir
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

@pytest.fixture(scope="session")
def dev():
  from tinygrad import Device
  try: d = Device["NV"]
  except Exception as e: pytest.skip(f"no NV device (not a Jetson and ORIN_EMU=1 not set): {e}")
  assert type(d.iface).__name__ == "TegraIface", "DEV=NV on Tegra must pick TegraIface"
  return d

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
