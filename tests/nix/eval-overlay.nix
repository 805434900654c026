# What overlays/default.nix makes of tinygrad, read off the stub package set as plain data.
{ root }:
let
  pkgs = import ./stubs/nixpkgs/pkgs.nix {
    system = "aarch64-linux";
    overlays = [ (import (root + "/overlays")) ];
  };
  t = pkgs.python3Packages.tinygrad;
in
{
  inherit (t) pname version postPatch substitutions pythonImportsCheck doCheck runtimeEnv;
  src = { inherit (t.src) owner repo rev hash; };
  patches = map (p: baseNameOf (toString p)) t.patches;
  cudaRoot = t.cudaRoot.script;
}
