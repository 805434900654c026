# scripts/setup's choices: what it installs for running and for the suites. setup runs from a copy of itself with a PATH of stand-ins:
# Pythons of a given version (with or without venv's ensurepip) that log what they are asked to run besides -c and stop setup there, id
# and dpkg-query. Nothing is installed and no venv is made.
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

def setup(tmp:Path, pythons:dict, *args:str, uid=1000, venv:str|None=None, debs=True) -> tuple[subprocess.CompletedProcess, list]:
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
  exe(bin_/"id", f"#!/bin/sh\necho {uid}\n")
  exe(bin_/"dpkg-query", f"#!/bin/sh\necho '{'install ok installed' if debs else 'unknown ok not-installed'}'\n")
  for tool in ("bash", "dirname", "grep", "rm", "cat", "sha256sum", "cut"): os.symlink(shutil.which(tool), bin_/tool)
  env = {"PATH": str(bin_), "FAKE_STATE": str(tmp/"state.json"), "FAKE_LOG": str(log:=tmp/"log")}
  r = subprocess.run([str(bin_/"bash"), str(tmp/"scripts"/"setup"), *args], env=env, capture_output=True, text=True, timeout=60)
  return r, log.read_text().splitlines() if log.exists() else []

PIP = "python -m pip install -q --disable-pip-version-check -r"

def test_running_gets_requirements_txt_and_clang(tmp_path):
  assert setup(tmp_path, {}, venv="3.11")[1] == [f"{PIP} requirements.txt"]
  r, _ = setup(tmp_path/"no-debs", {}, venv="3.11", debs=False)
  assert r.stderr == "error: missing Debian packages: clang (run: sudo apt-get install clang)\n"

def test_the_suites_get_requirements_test_txt_and_their_debs(tmp_path):
  assert setup(tmp_path, {}, "--test", venv="3.11")[1] == [f"{PIP} requirements-test.txt"]
  r, _ = setup(tmp_path/"no-debs", {}, "--test", venv="3.11", debs=False)
  assert r.stderr == "error: missing Debian packages: clang nix-bin linux-libc-dev (run: sudo apt-get install clang nix-bin linux-libc-dev)\n"
