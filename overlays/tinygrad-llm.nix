# tinygrad-llm: the patched tinygrad's LLM app (overlays/tinygrad-llm.py runs tinygrad.llm's CLI) in a Python with tinygrad
# and jinja2, which renders the model's own chat template (tool calls need it); no numpy or torch
{ python3, writeTextFile }:
let
  python = python3.withPackages (ps: [
    ps.tinygrad
    ps.jinja2
  ]);
in
writeTextFile {
  name = "tinygrad-llm";
  destination = "/bin/tinygrad-llm";
  executable = true;
  text = "#!${python}/bin/python3\n" + builtins.readFile ./tinygrad-llm.py;
  meta.mainProgram = "tinygrad-llm";
}
// {
  inherit python;
}
