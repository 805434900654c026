import ./pkgs.nix
