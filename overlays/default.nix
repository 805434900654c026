# Replaces tinygrad in every Python package set with tinygrad-orin's: upstream master a9069c17 plus patches/master/series.
final: prev: {
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: { tinygrad = pyFinal.callPackage ./tinygrad.nix { patches = import ./series.nix ../patches/master; }; })
  ];
}
