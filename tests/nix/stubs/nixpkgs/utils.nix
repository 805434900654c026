# NixOS's utils (nixos/lib/utils.nix), the function the module uses: every argument a JSON string, % and $ doubled, so
# systemd's ExecStart parsing gives it back unchanged.
lib: {
  escapeSystemdExecArgs = lib.concatMapStringsSep " " (a: builtins.replaceStrings [ "%" "$" ] [ "%%" "$$" ] (builtins.toJSON (toString a)));
}
