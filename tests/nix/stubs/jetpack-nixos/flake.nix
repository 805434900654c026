# Offline stand-in for the jetpack-nixos input (anduril/jetpack-nixos at the locked 381e27e): the inputs and the outputs arguments of its
# flake.nix, so that a lock missing one of them fails here as it fails with the real flake, and a module that only names itself.
{
  inputs = {
    nixpkgs.url = "github:nixos/nixpkgs/nixos-25.11";
    cuda-legacy = {
      url = "github:nixos-cuda/cuda-legacy";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      cuda-legacy,
      ...
    }:
    {
      nixosModules.default = {
        _file = "jetpack-nixos stub";
      };
    };
}
