# Replaces tinygrad in every Python package set with tinygrad-orin's: upstream master a9069c17 plus patches/master/series,
# and adds tinygrad-llm, its LLM app.
final: prev: {
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: { tinygrad = pyFinal.callPackage ./tinygrad.nix { patches = import ./series.nix ../patches/master; }; })
  ];
  tinygrad-llm = final.callPackage ./tinygrad-llm.nix { };
}
