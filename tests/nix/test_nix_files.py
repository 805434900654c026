"""Every .nix file parses, and flake.lock pins exactly the revisions nix-pins.md names, jetpack-nixos's own cuda-legacy input included."""
import json, pathlib

# shared/reference/nix-pins.md: the nixpkgs and jetpack-nixos revisions known to work together on an Orin AGX
PINS = {
  "nixpkgs": {"owner": "nixos", "repo": "nixpkgs", "ref": "nixos-25.11", "rev": "c217913993d6c6f6805c3b1a3bda5e639adfde6d",
              "lastModified": 1771574726, "narHash": "sha256-D1PA3xQv/s4W3lnR9yJFSld8UOLr0a/cBWMQMXS+1Qg="},
  "jetpack-nixos": {"owner": "anduril", "repo": "jetpack-nixos", "rev": "381e27e068b67fee68bc7d061a5a373f0de60423",
                    "lastModified": 1771645577, "narHash": "sha256-mILBqTI/zc5Os5HltjhpqsBHLHs1uFPoNQWpxuotBHQ="},
  # as jetpack-nixos 381e27e's own flake.lock pins it
  "cuda-legacy": {"owner": "nixos-cuda", "repo": "cuda-legacy", "rev": "86ad7e2c2e314f0234539cbbc66b5cd7746bcd32",
                  "lastModified": 1768505959, "narHash": "sha256-oFCx/ApQ+S1/apUKWsvT9vq+Eo1m2vINWEDkW7/nckA="},
}
# each node's inputs: jetpack-nixos follows our nixpkgs, cuda-legacy follows jetpack-nixos's nixpkgs and (flake-parts.follows = "") itself
INPUTS = {"jetpack-nixos": {"cuda-legacy": "cuda-legacy", "nixpkgs": ["nixpkgs"]},
          "cuda-legacy": {"flake-parts": ["jetpack-nixos", "cuda-legacy"], "nixpkgs": ["jetpack-nixos", "nixpkgs"]}}

def nix_files(root:pathlib.Path) -> list[pathlib.Path]:
  return [root/"flake.nix"] + sorted(p for d in ("overlays", "nixos", "tests/nix") for p in (root/d).rglob("*.nix"))

def test_every_nix_file_parses(nix, tree):
  files = nix_files(tree)
  assert len(files) >= 12, files
  for f in files: nix.run("nix-instantiate", "--parse", str(f))

def test_flake_lock_holds_exactly_the_pinned_nodes(source):
  lock = json.loads((source/"flake.lock").read_text())
  assert lock["version"] == 7 and lock["root"] == "root"
  assert lock["nodes"]["root"] == {"inputs": {"nixpkgs": "nixpkgs", "jetpack-nixos": "jetpack-nixos"}}
  assert set(lock["nodes"]) == {"root", *PINS}
  for name, pin in PINS.items():
    node = lock["nodes"][name]
    assert node["locked"] == {"type": "github", **{k: v for k, v in pin.items() if k != "ref"}}, name
    assert node["original"] == {"type": "github", **{k: pin[k] for k in ("owner", "repo", "ref") if k in pin}}, name
    assert node.get("inputs") == INPUTS.get(name), name

def test_flake_inputs_are_what_the_lock_recorded(nix, tree):
  # a mismatch here makes nix on the Jetson re-lock (and fetch other revisions) instead of using the pins
  inputs = nix.expr(f"(import {tree/'flake.nix'}).inputs")
  assert inputs == {"nixpkgs": {"url": "github:nixos/nixpkgs/nixos-25.11"},
                    "jetpack-nixos": {"url": "github:anduril/jetpack-nixos", "inputs": {"nixpkgs": {"follows": "nixpkgs"}}}}

def test_nix_takes_the_lock_as_is(nix, tree):
  # nix only re-resolves (fetches) inputs whose lock entry no longer matches flake.nix; offline that is an error
  meta = json.loads(nix.run("nix", "flake", "metadata", "--json", "--offline", "--no-update-lock-file", f"path:{tree}"))
  assert meta["locks"] == json.loads((tree/"flake.lock").read_text())
