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
  run_tests "$subj" "$@"
}
run_tests() {
  local subj=$1; shift
  echo "without '$subj': $(cd "$repo" && ORIN_EMU=${ORIN_EMU-1} NV=1 PYTHONPATH="$scratch/t:$repo/tests" "$py" -m pytest -q -p no:cacheprovider "$@" 2>&1 | tail -1)"
}
# A fix whose lines later patches rewrote no longer reverts as a commit: undo it in today's code with the sed edits given
# (each must change tinygrad/runtime/ops_nv.py), then run its test the same way.
undo() {
  local subj=$1 f=tinygrad/runtime/ops_nv.py; shift; git reset -q --hard orin
  while [ "$1" != -- ]; do sed -i "$1" $f; shift; done; shift
  git diff --quiet || { run_tests "$subj (undone in place)" "$@"; return; }; echo "CANNOT UNDO: $subj"
}
check "reserve the shader memory windows" tests/tegra/test_va_windows.py
# 0006 itself cannot go: its address-space end goes back to the seed's, whose kernel range crosses 2^40
undo "an address space ending 4 GiB below 2^40" 's/va_range_end=0xff00000000/va_range_end=0xffffe00000/' -- tests/tegra/test_address_space.py
check "release signals from the pushbuffer" tests/tegra/test_qmd_race.py
# a later patch sizes the buffer cache by the unified_memory attribute 0009 gave TegraIface: the attribute stays, its value goes
undo "copy host data directly" 's/^  unified_memory = True # every buffer/  unified_memory = False # every buffer/' -- tests/tegra/test_copies.py
check "synchronize before reallocating shader" tests/tegra/test_local_memory.py
check "align Tegra allocations" tests/tegra/test_alloc.py -k aligned
check "tag nvmap allocations" tests/tegra/test_alloc.py -k tagged
# 0023/0024 rewrote the notifier lines 0013 added: on_device_hang goes back to upstream's RM report, _open to a bare error
undo "report Tegra GPU faults" "/if hasattr(self.iface, 'fault_report'):/,+1d" 's/raise PermissionError(e.errno, f".*") from e/raise/' -- \
  tests/tegra/test_faults.py -k "mmu_fault or permission"
check "reserve the PCI VA range" tests/tegra/test_iface.py -k probing
check "wait for queued kernels before the kernargs" tests/tegra/test_kernargs.py
check "keep CPU copies out of HCQ graphs" tests/tegra/test_jit_cpu_copy.py
check "no RM error notifiers on Tegra" tests/tegra/test_teardown.py -k notifiers
# a later patch makes TegraIface.device_fini give back everything it holds: device_fini goes (returns at once)
undo "free Tegra channel rings" '/^  def device_fini(self):$/a\    return' -- tests/tegra/test_teardown.py -k "hold_no or finalize"
