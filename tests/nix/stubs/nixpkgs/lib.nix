# The few nixpkgs lib functions tinygrad-orin's Nix code uses, with nixpkgs' semantics but none of its checking:
# option declarations and mkIf/mkDefault/mkMerge stay plain data, so tests can read what a module declares and sets.
let
  fix = f: let x = f x; in x;
  type = name: check: { inherit name check; };
in
rec {
  inherit fix;
  mkOption = decl: decl // { _type = "option"; };
  mkEnableOption = what: mkOption {
    type = types.bool;
    default = false;
    description = "Whether to enable ${what}.";
  };
  mkIf = condition: content: { _type = "if"; inherit condition content; };
  mkDefault = content: { _type = "override"; priority = 1000; inherit content; };
  mkMerge = contents: { _type = "merge"; inherit contents; };
  types = {
    bool = type "bool" builtins.isBool;
    str = type "str" builtins.isString;
    package = type "package" (v: builtins.isAttrs v && v ? outPath);
    path = type "path" (v: builtins.isPath v || builtins.isString v && builtins.substring 0 1 v == "/");
    port = type "unsignedInt16" (v: builtins.isInt v && v >= 0 && v < 65536);
    listOf = elem: type "listOf ${elem.name}" (v: builtins.isList v && builtins.all elem.check v);
  };
  literalExpression = text: { _type = "literalExpression"; inherit text; };
  licenses.mit = { spdxId = "MIT"; };

  optionalString = cond: s: if cond then s else "";
  concatStrings = builtins.concatStringsSep "";
  concatMapStringsSep = sep: f: xs: builtins.concatStringsSep sep (map f xs);
  mapAttrsToList = f: attrs: map (n: f n attrs.${n}) (builtins.attrNames attrs);
  genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
  escapeShellArg = s: "'${builtins.replaceStrings [ "'" ] [ "'\\''" ] s}'";
  escapeShellArgs = args: builtins.concatStringsSep " " (map escapeShellArg args);

  getLib = p: p.lib or p;
  getInclude = p: p.include or p.dev or p;
  getExe = p: "${p}/bin/${p.meta.mainProgram}";
}
