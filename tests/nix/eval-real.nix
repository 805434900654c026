# nixosConfigurations.orin evaluated against the real jetpack-nixos flake and nixpkgs' real lib (tests/nix/test_nix_real_sources.py):
# our flake.lock calls the flakes (call-locked.nix), jetpack-nixos's own NixOS modules declare hardware.nvidia-jetpack and
# services.nvpmodel, and lib.evalModules merges, type-checks and resolves everything. Full nixpkgs (its nixos/modules and its packages)
# is not there: `nixpkgs` is a flake of the real lib whose nixosSystem adds a stand-in for the few NixOS options the modules set,
# declared with NixOS's types, and leaves out every other definition; `pkgs` has the host platform (lib.systems), the nixpkgs
# config the modules set, and our module's three builders, and throws for every other name jetpack-nixos's modules use.
{
  root,
  jetpack,
  lib,
  cudaLegacy,
  pkgsNames,
}:
let
  realLib = import (lib + "/lib");
  standInPkgs =
    config:
    let
      drv = name: attrs: attrs // {
        type = "derivation";
        inherit name;
        outPath = "/nix/store/00000000000000000000000000000000-${name}";
      };
      missing = builtins.listToAttrs (map (n: {
        name = n;
        value = throw "pkgs.${n} needs the full nixpkgs";
      }) (builtins.fromJSON pkgsNames));
    in
    missing // {
      stdenv.hostPlatform = realLib.systems.elaborate config.nixpkgs.hostPlatform;
      config = config.nixpkgs.config;
      writeTextFile = args: drv args.name { inherit (args) text destination; };
      coreutils = drv "coreutils" { };
      python3.withPackages = f: drv "python3-env" { pythonPackages = f { tinygrad = drv "tinygrad" { }; numpy = drv "numpy" { }; }; };
      tinygrad-llm = drv "tinygrad-llm" { meta.mainProgram = "tinygrad-llm"; };
    };
  inherit (realLib) mkOption types;
  opt = type: default: mkOption { inherit type default; };
  # NixOS's declarations (nixos/modules: misc/assertions.nix, misc/nixpkgs.nix, config/users-groups.nix, services/hardware/udev.nix,
  # hardware/graphics.nix, config/system-path.nix, config/console.nix, misc/version.nix) of the options these modules set or read,
  # and the utils module argument NixOS gives (nixos/lib/utils.nix; its stub)
  nixosStandIn =
    { config, ... }:
    {
      _file = "NixOS stand-in (tests/nix/eval-real.nix)";
      options = {
        assertions = opt (types.listOf types.unspecified) [ ];
        warnings = opt (types.listOf types.str) [ ];
        nixpkgs = {
          overlays = opt (types.listOf types.anything) [ ];
          config = opt (types.attrsOf types.anything) { };
          pkgs = mkOption { type = types.pkgs; };
          hostPlatform = mkOption { type = types.either types.str types.attrs; };
        };
        users.users = opt (types.attrsOf (types.submodule {
          freeformType = types.lazyAttrsOf types.anything;
          options.isNormalUser = opt types.bool false;
          options.extraGroups = opt (types.listOf types.str) [ ];
        })) { };
        users.groups = opt (types.attrsOf (types.submodule { freeformType = types.lazyAttrsOf types.anything; })) { };
        services.udev.packages = opt (types.listOf types.path) [ ];
        hardware.graphics.enable = opt types.bool false;
        environment.systemPackages = opt (types.listOf types.package) [ ];
        console.enable = opt types.bool true;
        system.stateVersion = mkOption { type = types.str; };
      };
      # definitions of the NixOS options not declared here (boot.*, systemd.*, ...) are left out, unchecked
      config._module.check = false;
      config._module.args.utils = import ./stubs/nixpkgs/utils.nix realLib;
      config._module.args.pkgs = standInPkgs config;
    };
  nixpkgs = {
    outputs =
      { self }:
      {
        lib = realLib.extend (final: prev: {
          nixosSystem = { modules, ... }: realLib.evalModules { modules = modules ++ [ nixosStandIn ]; class = "nixos"; };
        });
      };
  };
  flake = import ./call-locked.nix {
    inherit root;
    sources = {
      jetpack-nixos = jetpack;
      cuda-legacy = cudaLegacy;
    };
    standIns.nixpkgs = nixpkgs;
  };
  sys = flake.nixosConfigurations.orin;
  cfg = sys.config;
  # our module alone serving a model on an Orin Nano in super mode; jetpack-nixos's options and systemd's units as plain values
  # (declaring systemd.services beside jetpack-nixos's modules would evaluate their units, which need NixOS's own modules)
  served =
    (realLib.evalModules {
      class = "nixos";
      modules = [
        ours
        nixosStandIn
        {
          options.hardware.nvidia-jetpack = opt (types.lazyAttrsOf types.anything) { };
          options.services.nvpmodel = opt (types.lazyAttrsOf types.anything) { };
          options.systemd.services = opt (types.attrsOf (types.submodule { freeformType = types.lazyAttrsOf types.anything; })) { };
          config = {
            hardware.nvidia-jetpack = { enable = true; som = "orin-nano"; super = true; majorVersion = "6"; };
            hardware.tinygrad-orin.enable = true;
            services.tinygrad-llm = { enable = true; model = "/var/lib/models/m.gguf"; };
          };
        }
      ];
    }).config;
  ours = root + "/nixos";   # the module's file as the module system knows it: the path the flake gives
  # the value, or the error's absence of one: tryEval catches the throws of the stand-in pkgs
  try = v: let r = builtins.tryEval (builtins.deepSeq v v); in if r.success then r.value else "<not evaluated: needs the full nixpkgs>";
  fromOurs = defs: builtins.concatMap (d: if d.file == toString ours then realLib.toList d.value else [ ]) defs;
in
{
  jetpackModule = builtins.isFunction (import (jetpack + "/modules/default.nix"));
  declaredIn = map (d: realLib.removePrefix (toString root + "/") (toString d)) sys.options.hardware.tinygrad-orin.enable.declarations;
  tinygrad-orin = { inherit (cfg.hardware.tinygrad-orin) enable users group clockControl maxPerformance; python = cfg.hardware.tinygrad-orin.python.enable; };
  nvidia-jetpack = { inherit (cfg.hardware.nvidia-jetpack) enable som carrierBoard majorVersion maxClock configureCuda super; };
  nvpmodel = { inherit (cfg.services.nvpmodel) enable profileNumber; };
  graphics = cfg.hardware.graphics.enable;
  nixpkgsConfig = cfg.nixpkgs.config;
  groups = builtins.attrNames cfg.users.groups;
  jetsonGroups = cfg.users.users.jetson.extraGroups;
  udev = map (p: { inherit (p) name destination text; }) (fromOurs sys.options.services.udev.packages.definitionsWithLocations);
  overlays = builtins.length cfg.nixpkgs.overlays;
  llm = {
    inherit (served.services.tinygrad-llm) port listenAddress user group;
    unit = { inherit (served.systemd.services.tinygrad-llm) environment wantedBy serviceConfig; };
    systemUser = { inherit (served.users.users.tinygrad-llm) isSystemUser group extraGroups; };
    inherit (served.services.nvpmodel) profileNumber;
    failed = map (a: a.message) (builtins.filter (a: !a.assertion) served.assertions);
  };
  assertions = builtins.concatMap (d: map (a: {
    file = realLib.removePrefix (toString jetpack + "/") (realLib.removePrefix (toString root + "/") d.file);
    holds = try a.assertion;
    message = try a.message;
  }) (realLib.toList d.value)) sys.options.assertions.definitionsWithLocations;
}
