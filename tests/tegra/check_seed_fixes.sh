#!/bin/bash
# Acceptance check: revert each fix of patches/master alone (in a scratch clone of the patched tree's orin branch) and run the test that
# must catch it, to its first failure (-x); every line must say "failed".
# Usage: tests/tegra/check_seed_fixes.sh [tree, default build/master/tinygrad] (emulated Orin).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd); tree=$(cd "${1:-$repo/build/master/tinygrad}" && pwd); py=${PYTHON:-$repo/.venv/bin/python}
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
  echo "without '$subj': $(cd "$repo" && ORIN_EMU=${ORIN_EMU-1} DEV=${DEV-NV} PYTHONPATH="$scratch/t:$repo" "$py" -m pytest -q -x -p no:cacheprovider "$@" 2>&1 | tail -1)"
}
# A fix whose lines later patches rewrote no longer reverts as a commit: undo it in today's code with the sed edits given
# (each must change tinygrad/runtime/ops_nv.py, or the file F names), then run its test the same way.
undo() {
  local subj=$1 f=${F:-tinygrad/runtime/ops_nv.py}; shift; git reset -q --hard orin
  while [ "$1" != -- ]; do sed -i "$1" $f; shift; done; shift
  git diff --quiet || { run_tests "$subj (undone in place)" "$@"; return; }; echo "CANNOT UNDO: $subj"
}
# TegraIface's own fixes are part of the patch that adds it: each is undone in place
undo "reserve the shader memory windows" '/for window in self.mem_windows:/,+2d' -- tests/tegra/test_va_windows.py
undo "an address space ending 4 GiB below 2^40" 's/va_range_end=0xff00000000/va_range_end=0xffffe00000/' -- tests/tegra/test_address_space.py
undo "tag nvmap allocations" 's/flags=(self.nvmap_tag << 16) | flags,/flags=flags,/' -- tests/tegra/test_alloc.py -k tagged
undo "name the group of the GPU nodes" 's/raise PermissionError(e.errno, f".*") from e/raise/' -- tests/tegra/test_faults.py -k permission
undo "free channel rings and USERDs after setup" '/free.callback(self._nvmap_free, bufs\[-1\]\[0\])/d' -- tests/tegra/test_teardown.py -k hold_no
undo "device_fini gives back everything" '/^  def device_fini(self):$/a\    return' -- tests/tegra/test_teardown.py -k finalize
undo "signal from the pushbuffer on Tegra" 's/^  qmd_signals = False$/  qmd_signals = True/' -- tests/tegra/test_qmd_race.py
# the buffer cache is sized by the unified_memory attribute the copies gave every interface: the attribute stays, its value goes
undo "copy through the CPU view on unified memory" 's/^  unified_memory = True # every buffer/  unified_memory = False # every buffer/' -- \
  tests/tegra/test_copies.py
check "synchronize before reallocating shader local memory" tests/tegra/test_local_memory.py
check "bound the buffer cache on unified memory" tests/tegra/test_buffer_cache.py
# later patches add to the fault report: waits stop looking at the notifiers, the report is RM's
HCQDEV_WAIT_TIMEOUT_MS=10000 undo "report GPU faults through the interface" 's/if any(n.info32 for _, n in self.channels): raise RuntimeError("Device fault detected")/pass/' \
  '/# the error notifiers say what broke, the TSG keeps/i\    return NVKIface.on_device_hang(self)' -- tests/tegra/test_faults.py -k mmu_fault
undo "an error notifier of a page on Tegra" 's/^  error_notifier_size = 0x1000 #/  error_notifier_size = 48 << 20 #/' -- tests/tegra/test_teardown.py -k notifiers
check "synchronize before the kernargs ring wraps" tests/tegra/test_kernargs.py
check "apply R_CUDA_ABS47_34 relocations" tests/tegra/test_programs.py -k relocations
# the hcq fixes that later ones build on: the line that makes each happen goes
F=tinygrad/runtime/support/hcq.py undo "a device opened before fork() refuses work" '/os.register_at_fork(after_in_child=_mark_forked)/d' -- \
  tests/tegra/test_fork.py
undo "a bring-up that fails part way gives back" 's/^      self._abandon()$/      pass/' -- tests/tegra/test_bringup_faults.py
F=tinygrad/runtime/support/hcq.py undo "say what finalize waits for" 's/except HCQTimeout: print(f"{self.device}: waiting for queued work.*/except HCQTimeout: pass/' \
  's/except KeyboardInterrupt: print(f"{self.device}: finalizing without waiting.*/except KeyboardInterrupt: raise/' -- tests/tegra/test_interrupt.py
check "a device failure is one exception" tests/tegra/test_faults.py -k "later_calls or one_exception or outlives"
check "Python threads take turns at realize" tests/tegra/test_threads.py
check "a program's finalizer does not wait for the GPU at exit" tests/tegra/test_interrupt.py -k ctrl_c
