# Lets listed users run tinygrad's NV backend on a Jetson Orin (AGX, NX or Nano) under jetpack-nixos (JetPack 6) and,
# optionally, runs the board flat out, puts the patched tinygrad on the system and serves an LLM with it.
{
  config,
  lib,
  pkgs,
  utils,
  ...
}:
let
  inherit (lib) mkOption mkEnableOption mkIf mkDefault types;
  cfg = config.hardware.tinygrad-orin;
  llm = config.services.tinygrad-llm;
  jetpack = config.hardware.nvidia-jetpack or { };
  # jetpack-nixos's Orin soms -> ID of the fastest profile in the L4T r36 conf nvpower.sh picks, /etc/nvpmodel/nvpmodel_<module>.conf:
  # MAXN on the AGX (p3701_0000, _0004, _0008) and NX (p3767_0000, _0001), MAXN_SUPER in the NX's _super.conf; the Nano has no
  # MAXN: 15W / 10W (p3767_0003, _0004), and MAXN_SUPER is ID 2 in its _super.conf (jetpack-nixos's super option)
  maxProfile = {
    orin-agx = 0;
    orin-agx-industrial = 0;
    orin-nx = 0;
    orin-nano = if jetpack.super or false then 2 else 0;
  };
  group = cfg.group;
  devfreqAdded = ''ACTION=="add", SUBSYSTEM=="devfreq", KERNEL=="17000000.gpu"'';
  clockLimits = "/sys%p/min_freq /sys%p/max_freq";
  rules = pkgs.writeTextFile {
    name = "tinygrad-orin-udev-rules";
    # udev reads rules files in name order across directories, the last assignment wins: this name sorts after L4T's
    # 99-tegra-devices.rules, which jetpack-nixos installs under that name (modules/default.nix, services.udev.packages)
    destination = "/etc/udev/rules.d/99-tinygrad-orin.rules";
    text =
      ''
        KERNEL=="nvmap", GROUP="${group}", MODE="0660"
        ENV{DEVNAME}=="/dev/nvgpu/igpu0/*", GROUP="${group}", MODE="0660"
      ''
      # sysfs attributes have no udev GROUP/MODE keys; kernfs accepts chgrp/chmod once the device appears
      + lib.optionalString cfg.clockControl ''
        ${devfreqAdded}, RUN+="${pkgs.coreutils}/bin/chgrp ${group} ${clockLimits}", RUN+="${pkgs.coreutils}/bin/chmod g+w ${clockLimits}"
      '';
  };
in
{
  options.hardware.tinygrad-orin = {
    enable = mkEnableOption "tinygrad's NV backend on the Orin's integrated GPU (nvgpu/nvmap device nodes)";
    users = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [ "alice" ];
      description = "Users added to the group that may open /dev/nvmap and /dev/nvgpu/igpu0/* (DEV=NV needs both).";
    };
    group = mkOption {
      type = types.str;
      default = "video";
      description = ''
        Group given /dev/nvmap and every /dev/nvgpu/igpu0/* node (mode 0660). L4T already gives video the nodes
        CUDA uses; the rule extends it to the profiler and debugger nodes, whose L4T group `debug` does not exist
        on NixOS. Another group takes the nodes away from video (and from CUDA users relying on it).
      '';
    };
    clockControl = mkOption {
      type = types.bool;
      default = false;
      description = ''
        Let the group write the GPU's clock limits, min_freq and max_freq in /sys/class/devfreq/17000000.gpu
        (root only by default), e.g. to pin clocks for benchmarks.
      '';
    };
    maxPerformance = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Run the board in its module's fastest nvpmodel profile (MAXN; on the Orin Nano 15W or 10W, MAXN_SUPER with
        jetpack-nixos's super mode) with jetson_clocks at boot, through jetpack-nixos's services.nvpmodel.profileNumber and
        hardware.nvidia-jetpack.maxClock.
      '';
    };
    python = {
      enable = mkEnableOption "a Python with the patched tinygrad and numpy on the system PATH";
      package = mkOption {
        type = types.package;
        default = pkgs.python3.withPackages (ps: [
          ps.tinygrad
          ps.numpy
        ]);
        defaultText = lib.literalExpression "pkgs.python3.withPackages (ps: [ ps.tinygrad ps.numpy ])";
        description = "The Python environment installed by python.enable; ps.tinygrad is the patched one (this module adds the overlay).";
      };
    };
  };

  options.services.tinygrad-llm = {
    enable = mkEnableOption "tinygrad's LLM app serving a GGUF model on the Orin's GPU (DEV=NV) through its OpenAI-compatible API";
    package = mkOption {
      type = types.package;
      default = pkgs.tinygrad-llm;
      defaultText = lib.literalExpression "pkgs.tinygrad-llm";
      description = "The tinygrad-llm program (this flake's overlay: tinygrad.llm's CLI, DEV=NV unless set) the service runs.";
    };
    model = mkOption {
      type = types.path;
      example = "/var/lib/models/Llama-3.2-1B-Instruct-Q6_K.gguf";
      description = "The GGUF file served, an absolute path the service's user can read.";
    };
    port = mkOption {
      type = types.port;
      default = 8000;
      description = "TCP port of the API (/v1/models, /v1/chat/completions) and of the chat page at /.";
    };
    listenAddress = mkOption {
      type = types.str;
      default = "127.0.0.1";
      example = "0.0.0.0";
      description = ''
        Address the server binds: 127.0.0.1 serves this machine only, 0.0.0.0 every IPv4 interface and :: every IPv6
        one (open the port in the firewall yourself).
      '';
    };
    extraArgs = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [
        "--max_context"
        "8192"
      ];
      description = "More arguments for tinygrad.llm's CLI.";
    };
    user = mkOption {
      type = types.str;
      default = "tinygrad-llm";
      description = ''
        User the server runs as. The default is created as a system user; the service adds hardware.tinygrad-orin.group,
        which may open /dev/nvmap and /dev/nvgpu/igpu0/*, to its groups either way.
      '';
    };
    group = mkOption {
      type = types.str;
      default = "tinygrad-llm";
      description = "Primary group of the server's user, created when it is the default.";
    };
  };

  config = lib.mkMerge [
    (mkIf cfg.enable {
      assertions = [
        {
          assertion = jetpack.enable or false;
          message = "hardware.tinygrad-orin needs jetpack-nixos: import its NixOS module and set hardware.nvidia-jetpack.enable = true.";
        }
        {
          assertion = builtins.elem (jetpack.som or null) (builtins.attrNames maxProfile);
          message = "hardware.tinygrad-orin targets the Jetson Orin's ga10b GPU: set hardware.nvidia-jetpack.som to one of ${
            lib.concatMapStringsSep ", " builtins.toJSON (builtins.attrNames maxProfile)}.";
        }
        {
          assertion = jetpack.majorVersion or null == "6";
          message = ''hardware.tinygrad-orin needs JetPack 6 (L4T r36, nvgpu/nvmap, CUDA 12.6): set hardware.nvidia-jetpack.majorVersion = "6".'';
        }
      ];
      nixpkgs.overlays = [ (import ../overlays) ];
      users.groups.${group} = { };
      users.users = lib.genAttrs cfg.users (_: {
        extraGroups = [ group ];
      });
      services.udev.packages = [ rules ];
      # DEV=CUDA loads libcuda from /run/opengl-driver, which jetpack-nixos fills when graphics are enabled
      hardware.graphics.enable = mkDefault true;
      services.nvpmodel = mkIf cfg.maxPerformance {
        enable = true;
        profileNumber = maxProfile.${jetpack.som or ""} or null;
      };
      hardware.nvidia-jetpack.maxClock = mkIf cfg.maxPerformance true;
      environment.systemPackages = mkIf cfg.python.enable [ cfg.python.package ];
    })
    (mkIf llm.enable {
      assertions = [
        {
          assertion = cfg.enable;
          message = "services.tinygrad-llm needs hardware.tinygrad-orin.enable = true (the overlay, and the udev rule giving the GPU's nodes to its group).";
        }
      ];
      users.users = mkIf (llm.user == "tinygrad-llm") {
        tinygrad-llm = {
          isSystemUser = true;
          group = llm.group;
          extraGroups = [ group ];
        };
      };
      users.groups = mkIf (llm.group == "tinygrad-llm") { tinygrad-llm = { }; };
      systemd.services.tinygrad-llm = {
        description = "tinygrad LLM server";
        wantedBy = [ "multi-user.target" ];
        after = [ "network.target" ];
        # the cache directory keeps tinygrad's compiled kernels across restarts
        environment = {
          DEV = "NV";
          XDG_CACHE_HOME = "/var/cache/tinygrad-llm";
        };
        serviceConfig = {
          ExecStart = utils.escapeSystemdExecArgs (
            [
              (lib.getExe llm.package)
              "--model"
              llm.model
              "--serve"
              llm.port
              "--host"
              llm.listenAddress
            ]
            ++ llm.extraArgs
          );
          User = llm.user;
          Group = llm.group;
          SupplementaryGroups = [ group ]; # for a user of your own too
          Restart = "on-failure";
          CacheDirectory = "tinygrad-llm";
          # no PrivateDevices, DeviceAllow or ProtectClock (it implies DeviceAllow=char-rtc): each closes /dev/nvmap and
          # /dev/nvgpu; no PrivateUsers (the GPU group would not map); no ProtectKernelLogs: TegraIface reads /dev/kmsg to name
          # a GPU fault's address; no MemoryDenyWriteExecute: tinygrad's CPU device runs the code it compiles
          CapabilityBoundingSet = "";
          NoNewPrivileges = true;
          ProtectSystem = "strict";
          ProtectHome = "read-only";
          PrivateTmp = true;
          ProtectKernelTunables = true;
          ProtectKernelModules = true;
          ProtectControlGroups = true;
          ProtectHostname = true;
          RestrictAddressFamilies = [
            "AF_INET"
            "AF_INET6"
            "AF_UNIX"
          ];
          RestrictNamespaces = true;
          RestrictRealtime = true;
          RestrictSUIDSGID = true;
          LockPersonality = true;
          SystemCallArchitectures = "native";
          UMask = "0077";
        };
      };
    })
  ];
}
