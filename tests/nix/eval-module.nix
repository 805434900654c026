# Evaluates nixos/default.nix for one machine the way the module system would, against the stub lib and pkgs:
# option values are the declared defaults overlaid with `settings` (hardware.tinygrad-orin) and `service`
# (services.tinygrad-llm), JSON, each checked against its option's type (a setting without an option is an error),
# mkIf/mkDefault/mkMerge are resolved, and the result is plain data.
{
  root,
  settings ? "{}",
  service ? "{}",
  jetpack ? ''{"enable": true, "som": "orin-agx", "majorVersion": "6"}'',
}:
let
  lib = import ./stubs/nixpkgs/lib.nix;
  pkgs = import ./stubs/nixpkgs/pkgs.nix {
    system = "aarch64-linux";
    overlays = [ (import (root + "/overlays")) ];
  };
  call = hardware: llm: import (root + "/nixos") {
    inherit lib pkgs;
    utils = import ./stubs/nixpkgs/utils.nix lib;
    config.hardware = {
      tinygrad-orin = hardware;
      nvidia-jetpack = builtins.fromJSON jetpack;
    };
    config.services.tinygrad-llm = llm;
  };
  declared = (call (throw "option declarations must not depend on config") (throw "nor on the service's")).options;
  isOption = v: builtins.isAttrs v && v._type or null == "option";

  values = path: opts: set:
    let
      unknown = builtins.filter (n: !(opts ? ${n})) (builtins.attrNames set);
      value = n: o:
        let
          p = "${path}.${n}";
          v = set.${n} or (o.default or (throw "${p}: no default and not set"));
        in
        if !isOption o then values p o (set.${n} or { })
        else if o.type.check v then v
        else throw "${p}: value is not a ${o.type.name}";
    in
    if unknown != [ ] then throw "${path}.${builtins.head unknown}: no such option" else builtins.mapAttrs value opts;

  summary = prefix: opts: builtins.concatLists (map (n:
    let o = opts.${n}; in
    if isOption o then [ { name = prefix + n; type = o.type.name; description = o.description or null; hasDefault = o ? default; } ]
    else summary "${prefix}${n}." o) (builtins.attrNames opts));

  absent = { _absent = true; };
  isAbsent = v: builtins.isAttrs v && v ? _absent;
  # one option defined in several places, merged as the module system merges lists and attribute sets
  merge = a: b:
    if isAbsent a then b
    else if isAbsent b then a
    else if builtins.isList a && builtins.isList b then a ++ b
    else if builtins.isAttrs a && builtins.isAttrs b then a // builtins.mapAttrs (n: v: if a ? ${n} then merge a.${n} v else v) b
    else if a == b then a
    else throw "conflicting definitions: ${builtins.toJSON a} and ${builtins.toJSON b}";
  # a package is reported by the arguments the tests look at
  package = d: { inherit (d) name; } // builtins.intersectAttrs { text = 0; destination = 0; } d
    // (if d ? pythonPackages then { pythonPackages = map (p: p.pname) d.pythonPackages; } else { });
  resolve = v:
    if builtins.isAttrs v && v._type or null == "if" then (if v.condition then resolve v.content else absent)
    else if builtins.isAttrs v && v._type or null == "override" then resolve v.content
    else if builtins.isAttrs v && v._type or null == "merge" then builtins.foldl' merge absent (map resolve v.contents)
    else if builtins.isAttrs v && v ? outPath then package v
    else if builtins.isAttrs v then
      let
        r = builtins.mapAttrs (_: resolve) v;
        kept = builtins.removeAttrs r (builtins.filter (n: isAbsent r.${n}) (builtins.attrNames r));
      in
      # like the module system: a set whose every definition is switched off defines nothing
      if kept == { } && v != { } then absent else kept
    else if builtins.isList v then map resolve v
    else if builtins.isFunction v then "<function>"
    else v;
  config = resolve (call (values "hardware.tinygrad-orin" declared.hardware.tinygrad-orin (builtins.fromJSON settings))
    (values "services.tinygrad-llm" declared.services.tinygrad-llm (builtins.fromJSON service))).config;
in
{
  options = summary "" declared.hardware.tinygrad-orin;
  serviceOptions = summary "" declared.services.tinygrad-llm;
  config = if isAbsent config then { } else config;
}
