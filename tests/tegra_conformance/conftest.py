# Raw nvgpu/nvmap conformance tests: they speak ioctls through tinygrad's FileIOInterface, so on a Jetson they test the real driver
# and everywhere else the emulated Orin (activated here when there is no /dev/nvgpu, or with ORIN_EMU=1).
import os, sys, pathlib, pytest
# the clone (orin_emu) and tests/ (this suite's raw helper as tegra_conformance.tegra, shared with orin_emu/tests) are import roots,
# whatever the rootdir and import mode: a bare `tegra` would find the folder tests/tegra where this one is not on the path
sys.path[:0] = [str(pathlib.Path(__file__).resolve().parents[1]), str(pathlib.Path(__file__).resolve().parents[2])]
if os.environ.get("ORIN_EMU") == "1" or not os.path.exists("/dev/nvgpu/igpu0/ctrl"): import orin_emu.hook  # noqa: F401
from tegra_conformance.tegra import Orin  # noqa: E402

@pytest.fixture
def orin():
  o = Orin()
  yield o
  o.close()
