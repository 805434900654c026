"""The LLM app the flake exports (packages.llm, apps.llm): overlays/tinygrad-llm.py in a Python with the patched tinygrad,
evaluated against the stubs, and the script itself run on the master tree with the model and server left out."""
import json, os, pathlib, runpy, sys
import pytest

SYSTEM = "aarch64-linux"
SCRIPT = pathlib.Path(__file__).resolve().parents[2]/"overlays"/"tinygrad-llm.py"

def flake_eval(nix, tree:pathlib.Path, attr:str, apply:str) -> object:
  return json.loads(nix.flake(tree, "eval", "--json", f"path:{tree}#{attr}", "--apply", apply))

def test_package_is_the_script_in_a_python_with_tinygrad_and_no_torch(nix, tree):
  llm = flake_eval(nix, tree, f"packages.{SYSTEM}.llm", "p: { inherit (p) name text destination executable; main = p.meta.mainProgram; }")
  assert (llm["name"], llm["destination"], llm["executable"], llm["main"]) == ("tinygrad-llm", "/bin/tinygrad-llm", True, "tinygrad-llm")
  shebang, text = llm["text"].split("\n", 1)
  assert text == (tree/"overlays/tinygrad-llm.py").read_text()
  python = flake_eval(nix, tree, f"packages.{SYSTEM}.llm", "p: { path = p.python.outPath; packages = map (q: q.pname) p.python.pythonPackages; }")
  assert shebang == f"#!{python['path']}/bin/python3" and python["packages"] == ["tinygrad", "jinja2"]

def test_app_runs_the_package(nix, tree):
  app = flake_eval(nix, tree, f"apps.{SYSTEM}.llm", "a: a")
  out = flake_eval(nix, tree, f"packages.{SYSTEM}.llm", "p: p.outPath")
  assert app == {"type": "app", "program": f"{out}/bin/tinygrad-llm"}

@pytest.fixture
def cli(monkeypatch):
  cli = pytest.importorskip("tinygrad.llm.cli", reason="needs the master tree on PYTHONPATH")
  monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != "DEV"})
  return cli

def run_script(monkeypatch, cli, *argv:str) -> dict:
  """the script with tinygrad.llm's main replaced by one that reports what it was given"""
  seen = {}
  monkeypatch.setattr(cli, "main", lambda: seen.update(argv=sys.argv[1:], DEV=os.environ["DEV"]))
  monkeypatch.setattr(sys, "argv", ["tinygrad-llm", *argv])
  runpy.run_path(str(SCRIPT), run_name="__main__")
  return seen

def test_arguments_go_to_upstreams_cli(monkeypatch, cli):
  argv = ["--model", "/m.gguf", "--serve", "8000", "--host", "0.0.0.0", "--max_context", "512"]
  assert run_script(monkeypatch, cli, *argv) == {"argv": argv, "DEV": "NV"}

def test_dev_is_nv_unless_set(monkeypatch, cli):
  assert run_script(monkeypatch, cli, "--serve")["DEV"] == "NV"
  os.environ["DEV"] = "CPU"
  assert run_script(monkeypatch, cli, "--serve")["DEV"] == "CPU"
