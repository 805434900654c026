#!/usr/bin/env python3
"""Run every test suite the way CI does and print one total. Each suite is a pytest run with its own environment; upstream suites
run from the materialised tinygrad tree, minus the tests listed in tests/upstream/known_failures.txt (printed with their reasons).
Two bases: the suites marked master run on upstream master + patches/master (build/master/tinygrad, first on PYTHONPATH), the
others on tinygrad v0.12.0 + patches/v0.12.0/series, the tree installed in .venv."""
import os, subprocess, sys, time, xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MASTER = ROOT/"tinygrad" if (ROOT/"tinygrad"/".git").exists() else ROOT/"build"/"master"/"tinygrad"   # as scripts/series.py default_tree
PY = str(ROOT/".venv"/"bin"/"python")
WORKERS = str(min(os.cpu_count() or 1, 4))
# Kernels run in a PTX interpreter, orders of magnitude slower than an SM: a loop-heavy one (upstream test_simple_cummax) outlasts HCQ's
# 30 s signal wait, so the suites on the emulated Orin ask for 240 s (below pytest's 300 s per-test timeout: a real hang still ends as an
# error). Each suite's header line shows it.
SLOW_WAITS = {"HCQDEV_WAIT_TIMEOUT_MS": "240000"}
ON_MASTER = {"PYTHONPATH": str(MASTER)}
EMU_MASTER = {"ORIN_EMU": "1", "DEV": "NV", **SLOW_WAITS, **ON_MASTER}   # master picks devices with DEV=
HANG = ["-p", "orin_emu.hang_report"]   # a test whose HCQ wait times out also shows where the emulated GPU was

@dataclass
class Suite:
  name: str
  args: list[str]
  cwd: Path = ROOT
  env: dict[str, str] = field(default_factory=dict)
  upstream: bool = False   # a suite from the pinned base, filtered by known_failures.txt
  ci: bool = True          # False: run only when named (scripts/test NAME); see the comment at the suite
  pytest: bool = True      # False: args is a whole command, counted as one test that passes when it exits 0

# upstream's tests beyond test_ops on the emulated Orin (most in test/backend/ on master): programs of every kind (custom kernels, uops, dtypes, transcendentals), memory
# (setitem, assign, subbuffers, gc), JIT and graphs, randomness, nn layers. RUN_SLOW=1: test_nn's one class is marked slow upstream; its
# tests the interpreter takes too long for are in known_failures.txt. ~5 min each run on 2 workers here.
MASTER_MORE = ["test/test_tiny.py", "test/unit/test_assign.py", "test/null/test_gc.py",
               *(f"test/backend/test_{n}.py" for n in ("custom_kernel", "arange", "randomness", "setitem", "symbolic_jit", "subbuffer", "graph",
                                                       "dtype_alu", "transcendental", "uops", "nn"))]

# upstream's tests of tinygrad.llm (GGUF, model blocks, tokenizer, server), on the CPU as upstream's CI runs test/unit
UPSTREAM_LLM = [*(f"test/unit/test_{n}.py" for n in ("gguf", "attention", "llm_mla", "llm_moe", "llm_server")),
                *(f"test/null/test_{n}.py" for n in ("attention", "llm_server", "llm_tokenizer"))]

# our tests by base: the decode work and what serves it (benchmarks, GGUF, its codegen patches) still runs on v0.12.0's apps/llm;
# the runtime, TegraIface, the toolchain, the LLM app with the main job, and the Nix package on master
OURS_V012 = ["tests/bench", "tests/decode", "tests/gguf", "tests/test_readme.py", "tests/test_series.py", "tests/test_series_bisect.py",
             "tests/test_setup.py", "tests/test_suite_imports.py", "tests/test_suites.py",
             *(f"tests/codegen/test_{n}.py" for n in ("byte_permute", "custom_kernel_reads", "custom_kernel_vars"))]
OURS_MASTER = ["tests/llm", "tests/nix", "tests/test_autogen_nvgpu.py", "tests/test_requirements.py", "tests/upstream",
               *(f"tests/codegen/test_{n}.py" for n in ("beam_pool", "cuda_graph_dims", "cuda_include_path", "estimates_depth",
                                                        "function_implicit_inputs", "function_invalid_outputs", "function_one_rewrite",
                                                        "kernel_key", "lower_shared_bodies", "matvec_heuristic", "precompiled_output",
                                                        "program_disk_cache", "ptx_float64", "ptx_narrow_floats", "ptx_unordered",
                                                        "schedule_disk_cache", "schedule_kernel_walks", "toolchain_from_the_environment"))]

SUITES = [
  # upstream's lint with its own configuration (the tree's pyproject.toml) and pin (requirements.txt) on the patched tree
  Suite("ruff check tinygrad (master)", [PY, "-m", "ruff", "check", "--no-cache", "tinygrad"], cwd=MASTER, pytest=False),
  # suites that put the process on the emulated Orin run apart: an Orin that appears mid-process becomes tinygrad's default
  # device for every later test there (and DEV=NV is exported to children)
  Suite("ours (v0.12.0)", [*OURS_V012, "--ignore", "tests/decode/test_smollm2.py", "-n", WORKERS]),
  # not in CI (45 minutes on the 2-core machine): SmolLM2 through the v0.12.0 app, which changes no more (its bisect and Tegra smoke
  # run in CI), ~3 minutes
  Suite("ours (v0.12.0): SmolLM2", ["tests/decode/test_smollm2.py", "-n", WORKERS], ci=False),
  # loadgroup: a module that marks its tests xdist_group (tests/llm/test_serve.py: one server) runs them on one worker
  Suite("ours (master)", [*OURS_MASTER, "-n", WORKERS, "--dist", "loadgroup"], env=ON_MASTER),
  Suite("upstream llm (DEV=CPU)", [*UPSTREAM_LLM, "-n", WORKERS], cwd=MASTER, env={"DEV": "CPU", **ON_MASTER}, upstream=True),
  # the runtime fixes for every HCQ backend, on upstream's mock NV GPU (test/mockgpu) as upstream's CI runs test_hcq
  Suite("runtime (DEV=MOCK+NV:PTX)", ["tests/runtime", "-n", WORKERS], env={"DEV": "MOCK+NV:PTX", **ON_MASTER}),
  Suite("emulated Orin rooms", ["orin_emu/tests", "-n", WORKERS], env={**SLOW_WAITS, **ON_MASTER}),
  # the Tegra suites run unchanged on a Jetson; here with the switch on from interpreter start, as a user would run them
  Suite("tegra conformance (emulated Orin)", ["tests/tegra_conformance", "-n", WORKERS], env={"ORIN_EMU": "1", **SLOW_WAITS, **ON_MASTER}),
  Suite("tegra (DEV=NV, emulated Orin)", ["tests/tegra", "--ignore", "tests/tegra/test_seed_fixes.py", "-n", WORKERS, *HANG], env=EMU_MASTER),
  # not in CI (45 minutes on the 2-core machine): each runtime fix of patches/master reverted alone makes its test fail, ~4 minutes; run
  # it when a runtime patch or its test changes
  Suite("tegra seed fixes (emulated Orin)", ["tests/tegra/test_seed_fixes.py", *HANG], env=EMU_MASTER, ci=False),
  Suite("upstream test_ops (DEV=NV, emulated Orin)", ["test/backend/test_ops.py", "-n", WORKERS, *HANG], cwd=MASTER, env=EMU_MASTER,
        upstream=True),
  # the PTX renderer through the same TegraIface
  Suite("upstream test_ops (DEV=NV:PTX, emulated Orin)", ["test/backend/test_ops.py", "-n", WORKERS, *HANG], cwd=MASTER,
        env={**EMU_MASTER, "DEV": "NV:PTX"}, upstream=True),
  # whole, in one process: the seed's kernargs exhaustion only showed after ~27 tests in one process (~20 s)
  Suite("upstream test_jit (DEV=NV, emulated Orin)", ["test/backend/test_jit.py", "test/unit/test_jit.py", "-p", "no:xdist", *HANG], cwd=MASTER,
        env=EMU_MASTER, upstream=True),
  Suite("upstream tests (DEV=NV, emulated Orin)", [*MASTER_MORE, "-n", WORKERS, *HANG], cwd=MASTER, env={**EMU_MASTER, "RUN_SLOW": "1"},
        upstream=True),
  # CI=1 is upstream's own switch for test_hcq: it skips the 4-6 GiB copies, minutes of work for the emulated copy engine (~15 s)
  Suite("upstream test_hcq (DEV=NV, emulated Orin)", ["test/device/test_hcq.py", *HANG], cwd=MASTER, env={**EMU_MASTER, "CI": "1"},
        upstream=True),
]

def known_failures(suite:str) -> list[tuple[str, str]]:
  """Lines of 'suite name | test id | reason': tests that fail on the unpatched base on this kind of machine too."""
  out = []
  for line in (ROOT/"tests"/"upstream"/"known_failures.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#") and (parts:=[p.strip() for p in line.split("|")])[0] == suite: out.append((parts[1], parts[2]))
  return out

def run(s:Suite, xml:Path) -> tuple[int, int, int, int]:
  deselect = [a for tid, _ in (known_failures(s.name) if s.upstream else []) for a in ("--deselect", tid)]
  cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *s.args, *deselect] if s.pytest else s.args
  print(f"\n=== {s.name}: {' '.join(f'{k}={v}' for k,v in s.env.items())} {' '.join(cmd[1:])}  (in {s.cwd})", flush=True)
  st = time.monotonic()
  rc = subprocess.run(cmd, cwd=s.cwd, env={**os.environ, **s.env}).returncode
  if not s.pytest: tests, failed, skipped = 1, int(rc != 0), 0
  elif not xml.exists(): return 0, 1, 0, rc   # pytest died before writing a report: count the suite as one failure
  else:
    root = ET.parse(xml).getroot()
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    tests, failed, skipped = (sum(int(t.get(k, 0)) for t in suites) for k in ("tests", "failures", "skipped"))
    failed += sum(int(t.get("errors", 0)) for t in suites)
  print(f"=== {s.name}: {tests-failed-skipped} passed, {failed} failed, {skipped} skipped in {time.monotonic()-st:.0f}s", flush=True)
  return tests-failed-skipped, failed, skipped, (0 if rc == 5 else rc)  # rc 5: a suite without tests is not a failure by itself

def main() -> int:
  sys.path.insert(0, str(ROOT/"tests"/"upstream"))
  import harness
  if written:=harness.prepare(MASTER): print(f"upstream test scaffolding written into {MASTER}: {', '.join(written)}")
  totals, bad = [0, 0, 0], []
  run_suites = [s for s in SUITES if any(a in s.name for a in sys.argv[1:])] if sys.argv[1:] else [s for s in SUITES if s.ci]
  xml_dir = ROOT/"build"/"test-reports"
  xml_dir.mkdir(parents=True, exist_ok=True)
  for i, s in enumerate(run_suites):
    (xml:=xml_dir/f"{i}.xml").unlink(missing_ok=True)
    p, f, sk, rc = run(s, xml)
    totals = [totals[0]+p, totals[1]+f, totals[2]+sk]
    if rc or f: bad.append(s.name)
  listed = [(s.name, tid, why) for s in run_suites if s.upstream for tid, why in known_failures(s.name)]
  if listed:
    print("\nNot run, each with its reason (tests/upstream/known_failures.txt):")
    for name, tid, why in listed: print(f"  [{name}] {tid}: {why}")
  if bad: print(f"\nFailing suites: {', '.join(bad)}")
  print(f"\n{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
  return 1 if bad else 0

if __name__ == "__main__": sys.exit(main())
