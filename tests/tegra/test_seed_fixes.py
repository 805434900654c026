# Each fix of patches/master is caught by its test: reverting it alone makes that test fail. check_seed_fixes.sh undoes each fix alone in a
# scratch clone of the patched tree and runs the test that must catch it; every one of its lines must say "failed".
import os, re, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
TREE = ROOT/"tinygrad" if (ROOT/"tinygrad"/".git").exists() else ROOT/"build"/"master"/"tinygrad"   # as scripts/series.py
SCRIPT = Path(__file__).with_name("check_seed_fixes.sh")

@pytest.mark.kernel_errors_expected  # the reverted fixes make the kernel complain, as on the seed
def test_each_seed_fix_is_caught_by_its_test():
  if not (TREE/".git").exists(): pytest.skip(f"no patched git tree at {TREE} (scripts/setup makes it)")
  out = subprocess.run(["bash", str(SCRIPT), str(TREE)], capture_output=True, text=True, timeout=1200, env=os.environ).stdout.splitlines()
  checks = len(re.findall(r"^\s*(\w+=\S+ )*(check|undo) \"", SCRIPT.read_text(), re.M))
  assert len(out) == checks and all(re.search(r": \d+ failed", ln) for ln in out), "\n".join(out)
