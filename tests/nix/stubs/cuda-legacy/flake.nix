# Offline stand-in for jetpack-nixos's cuda-legacy input (nixos-cuda/cuda-legacy): its inputs (stubs that follow nothing, replaced by
# the defaults its outputs fetch unless overridden; jetpack-nixos overrides nixpkgs) and its outputs argument.
{
  inputs = {
    flake-parts.follows = "";
    nixpkgs.follows = "";
  };

  outputs = _inputs: {
    overlays.default = final: prev: { };
  };
}
