{
  description = "tinygrad (upstream master a9069c17) on NVIDIA Jetson Orin (nvgpu/nvmap NV backend): patched package, LLM app, dev shell, NixOS module";

  inputs = {
    nixpkgs.url = "github:nixos/nixpkgs/nixos-25.11";
    jetpack-nixos = {
      url = "github:anduril/jetpack-nixos";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      jetpack-nixos,
    }:
    let
      system = "aarch64-linux";
      pkgs = import nixpkgs {
        inherit system;
        overlays = [ self.overlays.default ];
        config = {
          allowUnfree = true; # the CUDA redistributables
          cudaCapabilities = [ "8.7" ]; # ga10b: selects NVIDIA's Jetson builds of CUDA, not the SBSA ones
        };
      };
      tinygrad = pkgs.python3Packages.tinygrad;
      llm = pkgs.tinygrad-llm;
      python = pkgs.python3.withPackages (ps: [
        ps.tinygrad
        ps.numpy
      ]);
      # everything the suites use: torch (CPU) is the reference side of test_ops
      devPython = pkgs.python3.withPackages (ps: [
        ps.tinygrad
        ps.numpy
        ps.pytest
        ps.pytest-xdist
        ps.hypothesis
        ps.torch
        ps.gguf
      ]);
      # the emulated Orin on an x86_64 machine: the same overlay, with NVRTC 12.6 for x86_64 (the CUDA renderer's compiler)
      emuSystem = "x86_64-linux";
      emuPkgs = import nixpkgs {
        system = emuSystem;
        overlays = [ self.overlays.default ];
        config.allowUnfree = true;
      };
      emuPython = emuPkgs.python3.withPackages (ps: [
        ps.tinygrad
        ps.orin-emu
        ps.numpy
        ps.gguf
        ps.jinja2
      ]);
      suites = ''
        python -m pytest orin_emu/tests                                          # the emulated Orin: no GPU needed
        DEV=NV python -m pytest tests/tegra tests/tegra_conformance tests/llm    # our suites on this Jetson's GPU
        (cd tinygrad && DEV=NV python -m pytest test/backend/test_ops.py)        # upstream test_ops on the GPU (submodule)
        (cd tinygrad && DEV=NV:PTX python -m pytest test/backend/test_ops.py)    # the same through the PTX renderer
        (cd tinygrad && DEV=CUDA python -m pytest test/backend/test_ops.py)      # the same through CUDA 12.6, side by side
      '';
    in
    {
      overlays.default = import ./overlays;

      packages.${system} = {
        inherit tinygrad python llm;
        default = python;
      };

      # nix run .#llm -- --model /path/to/model.gguf [--serve PORT [--host ADDRESS]]
      apps.${system}.llm = {
        type = "app";
        program = pkgs.lib.getExe llm;
      };

      devShells.${system}.default = pkgs.mkShellNoCC {
        # mkShell would export CC=gcc, and tinygrad's CPU backend compiles with $CC expecting clang
        packages = [
          devPython
          pkgs.clang
        ];
        env = tinygrad.runtimeEnv;
        # editable from the submodule when it is checked out, so patch work happens in place; else the package
        shellHook = ''
          if [ -f tinygrad/tinygrad/__init__.py ]; then
            export PYTHONPATH="$PWD/tinygrad''${PYTHONPATH:+:$PYTHONPATH}"
            echo "tinygrad: editable from $PWD/tinygrad, upstream master (scripts/setup applies patches/master/series there as commits)"
          else
            echo "tinygrad: patched master a9069c17 from the overlay (git submodule update --init tinygrad for an editable tree)"
          fi
          printf '%s' ${pkgs.lib.escapeShellArg suites}
        '';
      };

      # nix develop on x86_64-linux: every process on the emulated Orin, HCQ waits long enough for its interpreted kernels
      devShells.${emuSystem}.default = emuPkgs.mkShellNoCC {
        packages = [
          emuPython
          emuPkgs.clang
        ];
        env = emuPkgs.python3Packages.tinygrad.runtimeEnv // {
          ORIN_EMU = "1";
          DEV = "NV";
          HCQDEV_WAIT_TIMEOUT_MS = "240000";
        };
        shellHook = ''
          echo "tinygrad: patched master a9069c17 on the emulated Orin (ORIN_EMU=1 DEV=NV; ORIN_EMU=0 DEV=CPU for the CPU)"
          echo "python -m tinygrad.llm --model /path/to/model.gguf    # --serve 8000 for the OpenAI API"
        '';
      };

      nixosModules.default = ./nixos;

      nixosConfigurations.orin = nixpkgs.lib.nixosSystem {
        modules = [
          jetpack-nixos.nixosModules.default
          self.nixosModules.default
          ./nixos/orin.nix
        ];
      };

      checks.${system} = {
        inherit tinygrad;
        # the app starts in the package's Python: tinygrad.llm's CLI answers --help through the wrapper
        llm = pkgs.runCommand "tinygrad-llm-help" { } "${pkgs.lib.getExe llm} --help > $out";
        devShell = self.devShells.${system}.default;
        # the packaged tinygrad driving the emulated Orin (the suites needing the network or pip wheels stay outside)
        tests = pkgs.runCommand "tinygrad-orin-tests" { nativeBuildInputs = [ devPython pkgs.clang ]; } ''
          cp -r ${./orin_emu} orin_emu
          cp -r ${./tests} tests
          chmod -R u+w orin_emu tests
          HOME=$TMPDIR python -m pytest -p no:cacheprovider -q orin_emu/tests
          touch $out
        '';
      };

      # `nix flake check` on x86_64-linux builds the emulated Orin's shell: tinygrad and orin-emu with their import checks
      checks.${emuSystem}.devShell = self.devShells.${emuSystem}.default;

      formatter.${system} = pkgs.nixfmt-tree;
    };
}
