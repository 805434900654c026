# requirements.txt is what running needs and nothing more: the packages the main job, the LLM app and the emulated Orin import, the
# libraries tinygrad loads through ctypes, what scripts/setup builds with, and what those pull in. The suites' packages (torch, pytest,
# ...) are in requirements-test.txt, which includes it.
import json, os, re, subprocess, sys
from importlib.metadata import requires
from pathlib import Path
from packaging.requirements import Requirement
ROOT = Path(__file__).resolve().parent.parent
MASTER = ROOT/"tinygrad" if (ROOT/"tinygrad"/".git").exists() else ROOT/"build"/"master"/"tinygrad"   # as scripts/suites.py MASTER
# NVRTC and nvJitLink are loaded by path (scripts/setup's .pth), the CUDA runtime wheel gives NVRTC its headers, setuptools builds the
# editable v0.12.0 tree
UNIMPORTED = {"nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12", "nvidia-nvjitlink-cu12", "setuptools"}
# the distributions behind the third-party modules scripts/demo.py (the main job), tinygrad.llm and the emulated Orin import
IMPORTED = f"""
import importlib.util, json, sys
from importlib.metadata import packages_distributions
spec = importlib.util.spec_from_file_location("demo", {str(ROOT/"scripts"/"demo.py")!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
import jinja2, tinygrad.llm.cli, tinygrad.runtime.ops_nv, tinygrad.runtime.support.compiler_cuda
import orin_emu.hook, orin_emu.kernel, orin_emu.gpu, orin_emu.ptx
dists = packages_distributions()
print(json.dumps(sorted({{d for m in list(sys.modules) if "." not in m and m not in sys.stdlib_module_names for d in dists.get(m, [])}})))
"""

def norm(name:str) -> str: return re.sub(r"[-_.]+", "-", name).lower()
def pinned(path:Path) -> set[str]:
  return {norm(l.split("==")[0]) for l in path.read_text().splitlines() if l.strip() and not l.startswith(("#", "-r"))}

def closure(names:set[str]) -> set[str]:
  seen, todo = set(), list(names)
  while todo:
    if (n:=norm(todo.pop())) in seen: continue
    seen.add(n)
    todo += [r.name for r in map(Requirement, requires(n) or []) if r.marker is None or r.marker.evaluate({"extra": ""})]
  return seen

def test_requirements_txt_is_what_running_imports_and_loads():
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(MASTER), str(ROOT)])}
  env.pop("ORIN_EMU", None)
  r = subprocess.run([sys.executable, "-c", IMPORTED], capture_output=True, text=True, env=env, timeout=120)
  assert r.returncode == 0, r.stderr[-3000:]
  imported = {norm(d) for d in json.loads(r.stdout)} - {"tinygrad"}   # tinygrad itself comes from the series' tree
  assert pinned(ROOT/"requirements.txt") == closure(imported | UNIMPORTED)

def test_requirements_test_txt_adds_to_it():
  text = (ROOT/"requirements-test.txt").read_text()
  assert "-r requirements.txt" in text.splitlines() and not pinned(ROOT/"requirements.txt") & pinned(ROOT/"requirements-test.txt")
  assert {"torch", "pytest", "hypothesis"} <= pinned(ROOT/"requirements-test.txt")
