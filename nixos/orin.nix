# nixosConfigurations.orin: a Jetson AGX Orin 64GB devkit (JetPack 6) set up for tinygrad's NV backend.
# Replace the file systems, boot loader and user with your machine's.
{ ... }:
{
  hardware.nvidia-jetpack = {
    enable = true;
    som = "orin-agx";
    carrierBoard = "devkit";
    majorVersion = "6";
  };
  hardware.tinygrad-orin = {
    enable = true;
    users = [ "jetson" ];
    clockControl = true;
    python.enable = true;
  };
  # L4T and the CUDA redistributables tinygrad loads (NVRTC, nvJitLink, cudart headers) are unfree
  nixpkgs.config.allowUnfree = true;
  users.users.jetson = {
    isNormalUser = true;
    extraGroups = [ "wheel" ];
  };
  boot.loader.systemd-boot.enable = true;
  boot.loader.efi.canTouchEfiVariables = true;
  fileSystems."/" = {
    device = "/dev/disk/by-label/nixos";
    fsType = "ext4";
  };
  fileSystems."/boot" = {
    device = "/dev/disk/by-label/ESP";
    fsType = "vfat";
  };
  networking.hostName = "orin";
  system.stateVersion = "25.11";
}
