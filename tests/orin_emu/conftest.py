import pathlib, sys, pytest
import orin_emu.hook  # noqa: F401  # the seam, so the raw bring-up helper below talks to the emulated Orin
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]/"tegra_conformance"))
from orin_emu.kernel import reset

@pytest.fixture
def k():
  """A freshly booted emulated Orin for one test; afterwards another, so no test's settings leak into the next."""
  yield reset()
  reset()

@pytest.fixture
def orin(k):
  from tegra import Orin
  o = Orin()
  yield o
  o.close()
