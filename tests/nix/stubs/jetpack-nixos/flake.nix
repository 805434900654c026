# Offline stand-in for the jetpack-nixos input: a module that only names itself.
{
  outputs = _: {
    nixosModules.default = { _file = "jetpack-nixos stub"; };
  };
}
