# Offline stand-in for the nixpkgs input (tests/nix pass it with --override-input).
{
  outputs = { self }: {
    lib = import ./lib.nix // {
      # a NixOS system can't be evaluated without real nixpkgs: keep the module list for the tests to read
      nixosSystem = { modules }: {
        inherit modules;
        config.system.build.toplevel = derivation {
          name = "nixos-system-stub";
          system = "aarch64-linux";
          builder = "/bin/sh";
        };
      };
    };
  };
}
