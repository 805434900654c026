# Tegra suites: run on a Jetson as they are (NV=1 finds /dev/nvgpu/igpu0/ctrl), elsewhere on the emulated Orin (ORIN_EMU=1).
import sys, pytest

def emu_kernel():
  """The emulated Orin's kernel room when these tests run on it, None on a real Jetson."""
  core = sys.modules.get("orin_emu.kernel.core")
  return core.kernel() if core is not None else None

@pytest.fixture(scope="session")
def dev():
  from tinygrad import Device
  try: d = Device["NV"]
  except Exception as e: pytest.skip(f"no NV device (not a Jetson and ORIN_EMU=1 not set): {e}")
  assert type(d.iface).__name__ == "TegraIface", "NV=1 on Tegra must pick TegraIface"
  return d
