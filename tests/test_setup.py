# scripts/setup's choices: what it installs for running and for the suites, and the Python for .venv (upstream tinygrad needs >= 3.11,
# and python3 on a stock JetPack 6, Ubuntu 22.04, is 3.10). setup runs from a copy of itself with a PATH of stand-ins: Pythons of a given
# version (with or without venv's ensurepip) that log what they are asked to run besides setup's probe and stop setup there, apt-get that
# "installs" Pythons, id and dpkg-query. Nothing is installed and no venv is made.
import json, os, shutil, stat, subprocess, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent

PYTHON = f"""#!{sys.executable}
import json, os, sys
ver, venv = json.load(open(os.environ["FAKE_STATE"]))[os.path.basename(sys.argv[0])]
sys.version_info = (*map(int, ver.split(".")), 0, "final", 0)
if not venv: sys.modules["ensurepip"] = None
if sys.argv[1:2] == ["-c"]: exec(sys.argv[2])
else: open(os.environ["FAKE_LOG"], "a").write(" ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + "\\n"); sys.exit(3)
"""
# python3.X puts that Python on PATH, python3.X-venv gives every 3.X its ensurepip
APT_GET = f"""#!{sys.executable}
import json, os, re, shutil, sys
open(os.environ["FAKE_LOG"], "a").write(" ".join(["apt-get", *sys.argv[1:]]) + "\\n")
state = json.load(open(os.environ["FAKE_STATE"]))
for pkg in sys.argv[1:]:
  if m:=re.fullmatch(r"python(3\\.\\d+)", pkg):
    state.setdefault(pkg, [m[1], False]); shutil.copy(os.environ["FAKE_PYTHON"], os.path.join(os.path.dirname(sys.argv[0]), pkg))
  if m:=re.fullmatch(r"python(3\\.\\d+)-venv", pkg): state = {{n: [v, venv or v == m[1]] for n, (v, venv) in state.items()}}
json.dump(state, open(os.environ["FAKE_STATE"], "w"))
"""

def setup(tmp:Path, pythons:dict, *args:str, uid=1000, apt=True, venv:str|None=None, debs=True) -> tuple[subprocess.CompletedProcess, list]:
  """pythons: name -> version or (version, has ensurepip); venv: the version of an existing .venv's Python; debs: all installed or none"""
  (tmp/"scripts").mkdir(parents=True); shutil.copy(ROOT/"scripts"/"setup", tmp/"scripts"/"setup")
  for f in ("requirements.txt", "requirements-test.txt"): shutil.copy(ROOT/f, tmp/f)
  (bin_:=tmp/"bin").mkdir()
  def exe(path:Path, text:str): path.parent.mkdir(parents=True, exist_ok=True); path.write_text(text); path.chmod(path.stat().st_mode | stat.S_IXUSR)
  exe(fake:=tmp/"python", PYTHON)
  state = {n: list(v) if isinstance(v, tuple) else [v, True] for n, v in pythons.items()}
  for name in state: shutil.copy(fake, bin_/name)
  if venv:
    state["python"] = [venv, True]
    (tmp/".venv"/"bin").mkdir(parents=True); shutil.copy(fake, tmp/".venv"/"bin"/"python")
  (tmp/"state.json").write_text(json.dumps(state))
  if apt: exe(bin_/"apt-get", APT_GET)
  exe(bin_/"id", f"#!/bin/sh\necho {uid}\n")
  exe(bin_/"dpkg-query", f"#!/bin/sh\necho '{'install ok installed' if debs else 'unknown ok not-installed'}'\n")
  for tool in ("bash", "dirname", "grep", "rm", "cat", "sha256sum", "cut"): os.symlink(shutil.which(tool), bin_/tool)
  env = {"PATH": str(bin_), "FAKE_STATE": str(tmp/"state.json"), "FAKE_LOG": str(log:=tmp/"log"), "FAKE_PYTHON": str(fake)}
  r = subprocess.run([str(bin_/"bash"), str(tmp/"scripts"/"setup"), *args], env=env, capture_output=True, text=True, timeout=60)
  return r, log.read_text().splitlines() if log.exists() else []

PIP = "python -m pip install -qq --disable-pip-version-check -r"

def test_running_gets_requirements_txt_and_clang(tmp_path):
  assert setup(tmp_path, {}, venv="3.11")[1] == [f"{PIP} requirements.txt"]
  r, _ = setup(tmp_path/"no-debs", {}, venv="3.11", debs=False)
  assert r.stderr == "error: missing Debian packages: clang (run: sudo apt-get install clang)\n"

def test_the_suites_get_requirements_test_txt_and_their_debs(tmp_path):
  assert setup(tmp_path, {}, "--test", venv="3.11")[1] == [f"{PIP} requirements-test.txt"]
  r, _ = setup(tmp_path/"no-debs", {}, "--test", venv="3.11", debs=False)
  assert r.stderr == "error: missing Debian packages: clang nix-bin linux-libc-dev chromium (run: sudo apt-get install clang nix-bin linux-libc-dev chromium)\n"

WHY = "upstream tinygrad needs Python >= 3.11 and python3 is Python 3.10"
APT = "apt-get install -y -qq --no-install-recommends"

def test_newer_python_beside_an_old_python3(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.10", "python3.12": "3.12", "python3.11": "3.11"})
  assert r.stdout == f"setup: creating .venv with python3.12 (Python 3.12): {WHY}\n" and ran == ["python3.12 -m venv .venv"], r.stderr

def test_python3_when_new_enough(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.11", "python3.13": "3.13"})
  assert r.stdout == "setup: creating .venv with python3 (Python 3.11): upstream tinygrad needs Python >= 3.11 and python3 is Python 3.11\n"
  assert ran == ["python3 -m venv .venv"]

def test_stock_jetpack6_as_root_installs_python311(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.10"}, uid=0)
  assert r.stdout == (f"setup: installing python3.11 python3.11-venv: {WHY}\n"
                      f"setup: creating .venv with python3.11 (Python 3.11): {WHY}\n"), r.stderr
  assert ran == ["apt-get update -qq", f"{APT} python3.11 python3.11-venv", "python3.11 -m venv .venv"]

def test_stock_jetpack6_as_a_user_says_the_apt_command(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.10"})
  assert r.returncode == 1 and r.stderr == f"error: {WHY} (run: sudo apt-get install python3.11 python3.11-venv)\n" and ran == []

def test_no_python_at_all(tmp_path):
  r, ran = setup(tmp_path, {})
  assert r.returncode == 1 and ran == []
  assert r.stderr == "error: upstream tinygrad needs Python >= 3.11 and python3 is missing (run: sudo apt-get install python3.11 python3.11-venv)\n"

def test_without_apt_says_what_to_install(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.10"}, uid=0, apt=False)
  assert r.returncode == 1 and r.stderr == f"error: {WHY}: install Python 3.11 or newer as python3.11, python3.12 or python3.13\n" and ran == []

def test_python_without_venv_module_gets_it(tmp_path):
  r, ran = setup(tmp_path, {"python3": ("3.11", False)}, uid=0)
  assert r.stdout.splitlines()[0] == "setup: installing python3.11-venv: python3 (Python 3.11) has no venv module", r.stderr
  assert ran == ["apt-get update -qq", f"{APT} python3.11-venv", "python3 -m venv .venv"]

def test_venv_of_an_old_python_is_made_anew(tmp_path):
  r, ran = setup(tmp_path, {"python3": "3.10", "python3.12": "3.12"}, venv="3.10")
  assert r.stdout.splitlines() == ["setup: .venv has Python 3.10: creating it anew", f"setup: creating .venv with python3.12 (Python 3.12): {WHY}"]
  assert ran == ["python3.12 -m venv .venv"] and not (tmp_path/".venv").exists()
