import os, pathlib, sys, pytest
ROOT = pathlib.Path(__file__).resolve().parents[2]
# the clone (orin_emu) and tests/ (the conformance suite's raw helper, tegra_conformance.tegra, is shared) are import roots, whatever the
# rootdir and import mode
sys.path[:0] = [str(ROOT), str(ROOT/"tests")]
from orin_emu.kernel import reset  # noqa: E402

# The emulator's own tests route FileIOInterface to the emulated Orin for the whole process. On a Jetson that would put the
# conformance suite (tests/tegra_conformance) on the emulator too, so there they are left out unless ORIN_EMU=1 asks for it.
if os.path.exists("/dev/nvgpu/igpu0/ctrl") and os.environ.get("ORIN_EMU") != "1": collect_ignore_glob = ["test_kernel_*.py"]
else: import orin_emu.hook  # noqa: F401

@pytest.fixture
def k():
  """A freshly booted emulated Orin for one test; afterwards another, so no test's settings leak into the next."""
  yield reset()
  reset()

@pytest.fixture
def orin(k):
  from tegra_conformance.tegra import Orin
  o = Orin()
  yield o
  o.close()

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  # a GPU fault without an SM error names its cause (an unknown program, an emulator error) only in the kernel log, which goes with the
  # process: a failing test's report keeps its end
  rep = (yield).get_result()
  if rep.failed and (p:=os.environ.get("ORIN_EMU_KMSG")) and os.path.exists(p):
    with open(p) as f: rep.sections.append(("emulated kernel log (last 30 records)", "".join(f.readlines()[-30:])))
