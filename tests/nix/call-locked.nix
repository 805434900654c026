# Calls a flake's outputs through its flake.lock the way Nix does: each locked node's outputs function gets exactly the inputs its lock
# node lists (`follows` paths resolved from the root node) plus `self`, and a missing one fails with Nix's own "called without required
# argument" error. Only the sources differ: each node's comes from `sources` (a directory per node name: the stubs, or real checkouts)
# instead of being fetched, or from `standIns` (a set with the outputs function) for an input that cannot be had whole.
{
  root,
  sources,
  standIns ? { },
}:
let
  lock = builtins.fromJSON (builtins.readFile (root + "/flake.lock"));
  # an input is a node name, or a path of input names from the root node (a `follows`)
  resolve = ref: if builtins.isList ref then follow lock.root ref else ref;
  follow =
    node: path:
    if path == [ ] then node else follow (resolve lock.nodes.${node}.inputs.${builtins.head path}) (builtins.tail path);
  call =
    name:
    let
      node = lock.nodes.${name};
      src = if name == lock.root then root else sources.${name} or "/${name}-stand-in";
      inputs = builtins.mapAttrs (_: ref: call (resolve ref)) (node.inputs or { });
      flake = standIns.${name} or (import (src + "/flake.nix"));
      outputs = flake.outputs (inputs // { inherit self; });
      sourceInfo = (node.locked or { }) // {
        outPath = src;
      };
      self = outputs // sourceInfo // {
        inherit inputs outputs sourceInfo;
        _type = "flake";
      };
    in
    self;
in
call lock.root
