"""flake.nix: every output evaluates with the inputs replaced by the stubs in tests/nix/stubs (no network, no nixpkgs).
The stub nixosSystem can't type-check NixOS options; the module's own behaviour is in test_nix_module."""
import json, os, pathlib, shutil, subprocess, sys

SYSTEM = "aarch64-linux"
EMU_SYSTEM = "x86_64-linux"   # a laptop trying the emulated Orin

def show(nix, tree:pathlib.Path) -> dict: return json.loads(nix.flake(tree, "flake", "show", "--json", f"path:{tree}"))

def flake_eval(nix, tree:pathlib.Path, attr:str, apply:str) -> object:
  return json.loads(nix.flake(tree, "eval", "--json", f"path:{tree}#{attr}", "--apply", apply))

def test_flake_exposes_every_output(nix, tree):
  out = show(nix, tree)
  assert out["overlays"] == {"default": {"type": "nixpkgs-overlay"}}
  assert out["nixosModules"] == {"default": {"type": "nixos-module"}}
  assert out["nixosConfigurations"] == {"orin": {"type": "nixos-configuration"}}
  assert {n: p["name"] for n, p in out["packages"][SYSTEM].items()} == {
    "tinygrad": "python3-tinygrad-0.13.0-unstable-2026-08-22", "python": "python3-env", "llm": "tinygrad-llm", "default": "python3-env"}
  assert out["apps"][SYSTEM] == {"llm": {"type": "app"}}
  assert set(out["devShells"][SYSTEM]) == {"default"} and out["formatter"][SYSTEM]["type"] == "derivation"
  assert set(out["devShells"][EMU_SYSTEM]) == {"default"} and set(out["checks"][EMU_SYSTEM]) == {"devShell"}
  assert set(out["packages"]) == {SYSTEM}
  assert set(out["checks"][SYSTEM]) == {"tinygrad", "llm", "tests", "devShell"}

def test_flake_check_evaluates_every_output(nix, tree, tmp_path):
  # instantiates each package, shell, check and the orin toplevel; builds nothing. Debian's nix 2.8 refuses a path as a NixOS module in
  # `flake check` (its checkModule wants a function or a set; later nix only evaluates the value), so it checks a copy that imports it
  shutil.copytree(tree, copy:=tmp_path/"repo")
  flake = (copy/"flake.nix").read_text()
  assert flake.count("nixosModules.default = ./nixos;") == 1
  (copy/"flake.nix").write_text(flake.replace("nixosModules.default = ./nixos;", "nixosModules.default = import ./nixos;"))
  nix.flake(copy, "flake", "check", "--no-build", f"path:{copy}")

def test_module_output_is_a_path(nix, tree):
  # a path, not `import ./nixos`: the module system then knows the file, so option declarations and errors name nixos/default.nix
  assert flake_eval(nix, tree, "nixosModules", "m: builtins.isPath m.default") is True

def test_dev_shell_has_the_suites_tools_and_cuda_paths(nix, tree):
  shell = flake_eval(nix, tree, f"devShells.{SYSTEM}.default",
                     "d: { inherit (d) name env shellHook; packages = map (p: p.name) d.packages; "
                     "python = map (p: p.pname) (builtins.head d.packages).pythonPackages; }")
  assert shell["name"] == "nix-shell", "mkShellNoCC: mkShell exports CC=gcc, which tinygrad's CPU backend would run"
  assert shell["packages"] == ["python3-env", "clang"]
  assert shell["python"] == ["tinygrad", "numpy", "pytest", "pytest-xdist", "hypothesis", "torch", "gguf"]
  assert set(shell["env"]) == {"LIBC_PATH", "NVRTC_PATH", "NVJITLINK_PATH", "CUDA_PATH"}
  assert "12.6" in shell["env"]["NVRTC_PATH"] and shell["env"]["CUDA_PATH"].endswith("-tinygrad-orin-cuda-root")
  hook = shell["shellHook"]
  assert 'if [ -f tinygrad/tinygrad/__init__.py ]; then\n  export PYTHONPATH="$PWD/tinygrad${PYTHONPATH:+:$PYTHONPATH}"' in hook
  assert "git clone" not in hook and "python -m pytest orin_emu/tests" in hook
  # master picks devices with DEV= and asserts on NV=1 / CUDA=1
  assert all(f"DEV={d} python" in hook for d in ("NV", "NV:PTX", "CUDA")) and "NV=1" not in hook and "CUDA=1" not in hook

def test_x86_64_dev_shell_is_the_emulated_orin(nix, tree):
  shell = flake_eval(nix, tree, f"devShells.{EMU_SYSTEM}.default",
                     "d: { inherit (d) name system env shellHook; packages = map (p: p.name) d.packages; "
                     "python = map (p: p.pname) (builtins.head d.packages).pythonPackages; }")
  assert shell["name"] == "nix-shell" and shell["system"] == EMU_SYSTEM and shell["packages"] == ["python3-env", "clang"]
  # the LLM app's needs (gguf, jinja2) beside the patched tinygrad and the emulated Orin; no torch
  assert shell["python"] == ["tinygrad", "orin-emu", "numpy", "gguf", "jinja2"]
  env = shell["env"]
  assert env["ORIN_EMU"] == "1" and env["DEV"] == "NV" and int(env["HCQDEV_WAIT_TIMEOUT_MS"]) >= 240000
  assert "12.6" in env["NVRTC_PATH"], "DEV=NV compiles with NVRTC on the emulated Orin too"
  assert "python -m tinygrad.llm --model" in shell["shellHook"]

def test_orin_emu_package_switches_on_with_orin_emu_1(nix, tree, tmp_path):
  # the package's installPhase run on the sources, then its site-packages read as Python's site module reads an env's
  emu = flake_eval(nix, tree, f"devShells.{EMU_SYSTEM}.default",
                   'd: let p = builtins.head (builtins.filter (p: p.pname == "orin-emu") (builtins.head d.packages).pythonPackages); '
                   "in { inherit (p) installPhase pythonImportsCheck; }")
  assert emu["pythonImportsCheck"] == ["orin_emu.hook"]
  shutil.copytree(tree/"orin_emu", src:=tmp_path/"src")
  subprocess.run(["bash", "-euc", "runHook() { :; }\n" + emu["installPhase"]], cwd=src, env={**os.environ, "out": str(tmp_path/"out")},
                 check=True)
  site = next((tmp_path/"out").glob("lib/python3*/site-packages"))
  assert (site/"orin_emu/hook.py").is_file() and not (site/"orin_emu/tests").exists()
  probe = f"import site, sys; site.addsitedir({str(site)!r}); print(getattr(sys.modules.get('orin_emu.hook'), '__file__', None))"
  for flag, hook in (("1", str(site/"orin_emu/hook.py")), ("0", "None")):
    r = subprocess.run([sys.executable, "-I", "-S", "-c", probe], env={**os.environ, "ORIN_EMU": flag}, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == hook, r.stderr

def test_checks_run_our_suites_on_the_package(nix, tree):
  checks = flake_eval(nix, tree, f"checks.{SYSTEM}", "c: { tinygrad = c.tinygrad.name; tests = c.tests.script; "
                      "inputs = map (p: p.name) c.tests.nativeBuildInputs; }")
  assert checks["tinygrad"] == "python3-tinygrad-0.13.0-unstable-2026-08-22" and checks["inputs"] == ["python3-env", "clang"]
  assert "python -m pytest -p no:cacheprovider -q orin_emu/tests" in checks["tests"]
  llm = flake_eval(nix, tree, f"checks.{SYSTEM}.llm", "c: c.script")
  assert llm.startswith("/nix/store/") and llm.endswith("-tinygrad-llm/bin/tinygrad-llm --help > $out")

def test_orin_configuration_uses_jetpack_our_module_and_satisfies_it(nix, tree):
  modules = flake_eval(nix, tree, "nixosConfigurations.orin.modules",
                       'map (m: if builtins.isPath m then baseNameOf m else if builtins.isFunction m then "function" else m._file)')
  assert modules == ["jetpack-nixos stub", "nixos", "orin.nix"]
  host = nix.expr(f"(import {tree/'nixos/orin.nix'} {{}}).hardware")
  assert nix.expr(f"(import {tree/'nixos/orin.nix'} {{}}).nixpkgs.config") == {"allowUnfree": True}, "CUDA redistributables are unfree"
  assert host["nvidia-jetpack"] == {"enable": True, "som": "orin-agx", "carrierBoard": "devkit", "majorVersion": "6"}
  config = nix.eval(tree/"tests/nix/eval-module.nix", root=tree, settings=host["tinygrad-orin"], jetpack=host["nvidia-jetpack"])["config"]
  assert [a["message"] for a in config["assertions"] if not a["assertion"]] == []
  assert config["users"]["users"] == {"jetson": {"extraGroups": ["video"]}}
