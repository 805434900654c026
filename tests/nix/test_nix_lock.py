"""flake.lock gives every flake in it the inputs its outputs take, and the stubs in tests/nix/stubs declare what the real flakes declare.
A lock without jetpack-nixos's cuda-legacy node made every evaluation fail for users ("'outputs' ... called without required argument
'cuda-legacy'") while stubs that declared no inputs let the offline checks pass."""
import pathlib
import pytest

# each input's flake.nix at the revision the lock pins: its declared inputs and the named arguments of its outputs function
# (nixpkgs c217913: `outputs = { self }:`; jetpack-nixos 381e27e; cuda-legacy 86ad7e2: `outputs = _inputs:`, stub inputs that follow nothing)
REAL = {
  "nixpkgs": ({}, {"self": False}),
  "jetpack-nixos": ({"nixpkgs": {"url": "github:nixos/nixpkgs/nixos-25.11"},
                     "cuda-legacy": {"url": "github:nixos-cuda/cuda-legacy", "inputs": {"nixpkgs": {"follows": "nixpkgs"}}}},
                    {"self": False, "nixpkgs": False, "cuda-legacy": False}),
  "cuda-legacy": ({"flake-parts": {"follows": ""}, "nixpkgs": {"follows": ""}}, {}),
}

def interface(nix, flake:pathlib.Path) -> tuple[dict, dict]:
  return tuple(nix.expr(f"let f = import {flake}; in [ (f.inputs or {{ }}) (builtins.functionArgs f.outputs) ]"))

@pytest.mark.parametrize("name", sorted(REAL))
def test_stub_declares_the_real_inputs_and_outputs_arguments(nix, tree, name):
  assert interface(nix, tree/"tests/nix/stubs"/name/"flake.nix") == REAL[name]

def call_locked(nix, tree:pathlib.Path, expr:str, sources:dict[str, pathlib.Path]|None=None) -> object:
  sources = sources or {n: tree/"tests/nix/stubs"/n for n in REAL}
  args = " ".join(f'"{n}" = {p};' for n, p in sources.items())
  return nix.expr(f"let flake = import {tree/'tests/nix/call-locked.nix'} {{ root = {tree}; sources = {{ {args} }}; }}; in {expr}")

def test_lock_gives_every_flake_its_inputs(nix, tree):
  # forces the outputs of our flake, jetpack-nixos and its cuda-legacy, each called with the inputs the lock gives it
  got = call_locked(nix, tree, "{ jetpack = flake.inputs.jetpack-nixos.nixosModules.default._file; "
                               "cuda = builtins.attrNames flake.inputs.jetpack-nixos.inputs.cuda-legacy.overlays; "
                               "same-nixpkgs = flake.inputs.jetpack-nixos.inputs.nixpkgs.outPath == flake.inputs.nixpkgs.outPath; "
                               "modules = builtins.length flake.nixosConfigurations.orin.modules; }")
  assert got == {"jetpack": "jetpack-nixos stub", "cuda": ["default"], "same-nixpkgs": True, "modules": 3}
