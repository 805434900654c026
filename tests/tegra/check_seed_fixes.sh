#!/bin/bash
# Acceptance check: revert each seed fix alone (in a scratch clone of the patched tree's orin branch) and run the test that must
# catch it; every line must say "failed". Usage: tests/tegra/check_seed_fixes.sh [tree, default build/tinygrad] (on the emulated Orin).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd); tree=$(cd "${1:-$repo/build/tinygrad}" && pwd); py=${PYTHON:-$repo/.venv/bin/python}
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
git clone -q "$tree" "$scratch/t" && cd "$scratch/t" && git checkout -q orin
check() {
  local subj=$1; shift
  c=$(git log --format=%h --grep="$subj" -1); git reset -q --hard orin
  git revert --no-commit "$c" >/dev/null 2>&1 || { git revert --abort 2>/dev/null; git reset -q --hard orin
    git show "$c" | patch -s -R -p1 --fuzz=3 >/dev/null || { echo "CANNOT REVERT: $subj"; return; }; }
  echo "without '$subj': $(cd "$repo" && ORIN_EMU=${ORIN_EMU-1} NV=1 PYTHONPATH="$scratch/t:$repo/tests" "$py" -m pytest -q -p no:cacheprovider "$@" 2>&1 | tail -1)"
}
check "reserve the shader memory windows" tests/tegra/test_va_windows.py
check "release signals from the pushbuffer" tests/tegra/test_qmd_race.py
check "copy host data directly" tests/tegra/test_copies.py
check "synchronize before reallocating shader" tests/tegra/test_local_memory.py
check "align Tegra allocations" tests/tegra/test_alloc.py -k aligned
check "tag nvmap allocations" tests/tegra/test_alloc.py -k tagged
check "report Tegra GPU faults" tests/tegra/test_faults.py -k "mmu_fault or permission"
check "reserve the PCI VA range" tests/tegra/test_iface.py -k probing
check "wait for queued kernels before the kernargs" tests/tegra/test_kernargs.py
check "map CPU buffers for the GPU" tests/tegra/test_map.py tests/tegra/test_jit_cpu_copy.py
check "no RM error notifiers on Tegra" tests/tegra/test_teardown.py -k notifiers
check "free Tegra channel rings" tests/tegra/test_teardown.py -k "hold_no or finalize"
