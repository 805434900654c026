# The suites as a user may start them: pytest's importlib mode (no test folder on sys.path, test modules named from the rootdir), with
# the clone or the suite's own folder as rootdir. A suite's helpers must come from a module its conftest puts on the path (or from
# tests/, the import root): `from conftest import` finds tests/conftest.py when the clone is the rootdir, a helper beside the tests
# is not on the path at all, and a bare `tegra` finds the folder tests/tegra.
import os, subprocess, sys
import pytest
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent

def run_in_importlib_mode(rootdir:Path, *args:str, master:bool=False) -> subprocess.CompletedProcess:
  env = {k: v for k, v in os.environ.items() if k not in ("ORIN_EMU", "NV", "DEV")}   # collecting and the checks run here need no GPU
  # the suites on the master series take its tree first on the path, as scripts/suites.py runs them
  if master: env["PYTHONPATH"] = os.pathsep.join([str(ROOT/"build"/"master"/"tinygrad"), *filter(None, [env.get("PYTHONPATH")])])
  return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib", "--rootdir", str(rootdir),
                         *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

# a suite and a few of its tests that use its helpers at run time (conftest fixtures import some lazily)
RUNS = {"tests/tegra": "test_uapi or test_explicit_iface_choice",
        "tests/tegra_conformance": "test_characteristics_are_ga10b or test_ctrl_dispatcher", "tests/decode": "test_gguf_load_keeps_raw_blocks",
        "orin_emu/tests": "test_faults_from_the_environment", "tests/llm": "test_tokenizer_presets"}
ON_MASTER = {"tests/tegra", "tests/tegra_conformance", "orin_emu/tests", "tests/llm"}

@pytest.mark.parametrize("suite", sorted(RUNS))
@pytest.mark.parametrize("where", ["clone", "suite"])
def test_suite_imports_in_importlib_mode(suite, where):
  r = run_in_importlib_mode(ROOT if where == "clone" else ROOT/suite, suite, "-k", RUNS[suite], master=suite in ON_MASTER)
  assert r.returncode == 0 and " passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
