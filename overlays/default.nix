# Replaces tinygrad in every Python package set with tinygrad-orin's: upstream master a9069c17 plus patches/master/series,
# adds orin-emu, the emulated Orin, to them, and tinygrad-llm, its LLM app.
final: prev: {
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: {
      tinygrad = pyFinal.callPackage ./tinygrad.nix { patches = import ./series.nix ../patches/master; };
      orin-emu = pyFinal.callPackage ./orin-emu.nix { };
    })
  ];
  tinygrad-llm = final.callPackage ./tinygrad-llm.nix { };
}
