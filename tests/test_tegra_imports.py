# tests/tegra as a user may start it: pytest's importlib mode (no test folder on sys.path, test modules named from the rootdir), with
# the clone or the suite's own folder as rootdir. Its helpers must come from a module the suite puts on the path: `from conftest import`
# finds tests/conftest.py (on the path for orin_emu) when the clone is the rootdir.
import os, subprocess, sys
import pytest
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.parametrize("rootdir", [ROOT, ROOT/"tests"/"tegra"])
def test_tegra_suite_imports_in_importlib_mode(rootdir):
  env = {k: v for k, v in os.environ.items() if k not in ("ORIN_EMU", "NV")}   # collecting all and running the UAPI checks needs no GPU
  r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib", "--rootdir", str(rootdir),
                      "tests/tegra", "-k", "test_uapi"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert r.returncode == 0 and " passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
