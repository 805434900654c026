# The patch files named in <dir>/series, in order: one file name per line, blank lines and '#' comments ignored.
# No series file means no patches; a name whose file is missing stops evaluation with that name.
dir:
let
  series = dir + "/series";
  where = "patches/${baseNameOf dir}";
  entry =
    line:
    let
      name = builtins.match "[[:space:]]*([^[:space:]#]+)[[:space:]]*(#.*)?" line;
      file = dir + "/${builtins.head name}";
    in
    if builtins.match "[[:space:]]*(#.*)?" line != null then
      [ ]
    else if name == null then
      throw "${where}/series: cannot read line '${line}' (one patch file name per line)"
    else if !builtins.pathExists file then
      throw "${where}/series lists ${builtins.head name}, but ${where}/${builtins.head name} does not exist"
    else
      [ file ];
in
if builtins.pathExists series then
  builtins.concatMap entry (builtins.filter builtins.isString (builtins.split "\n" (builtins.readFile series)))
else
  [ ]
