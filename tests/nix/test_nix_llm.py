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
  """the script with tinygrad.llm's main replaced by one that opens the server as main does, on a free port"""
  seen = {}
  def main():
    server = cli.LLMServer(("", 0), None, "model", None, None)
    seen.update(argv=sys.argv[1:], DEV=os.environ["DEV"], address=server.server_address[0])
    server.server_close()
  monkeypatch.setattr(cli, "main", main)
  monkeypatch.setattr(sys, "argv", ["tinygrad-llm", *argv])
  upstream = cli.LLMServer
  try: runpy.run_path(str(SCRIPT), run_name="__main__")
  finally: cli.LLMServer = upstream   # the script replaces it
  return seen

def test_host_binds_the_server_and_the_rest_goes_to_upstreams_cli(monkeypatch, cli):
  seen = run_script(monkeypatch, cli, "--model", "/m.gguf", "--serve", "8000", "--host", "127.0.0.1", "--max_context", "512")
  assert seen == {"argv": ["--model", "/m.gguf", "--serve", "8000", "--max_context", "512"], "DEV": "NV", "address": "127.0.0.1"}
  assert run_script(monkeypatch, cli, "--host=::1", "--serve")["address"] == "::1"
  assert run_script(monkeypatch, cli, "--serve")["address"] == "0.0.0.0", "without --host, every interface as upstream"

def test_dev_is_nv_unless_set(monkeypatch, cli):
  assert run_script(monkeypatch, cli, "--serve")["DEV"] == "NV"
  os.environ["DEV"] = "CPU"
  assert run_script(monkeypatch, cli, "--serve")["DEV"] == "CPU"

def test_upstreams_main_opens_the_server_through_the_name_the_script_replaces(cli):
  assert "LLMServer" in cli.main.__code__.co_names
