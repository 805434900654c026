# Replaces tinygrad in every Python package set with tinygrad-orin's: the pinned 0.12.0 sdist plus patches/v0.12.0/series.
final: prev: {
  pythonPackagesExtensions = prev.pythonPackagesExtensions ++ [
    (pyFinal: pyPrev: { tinygrad = pyFinal.callPackage ./tinygrad.nix { patches = import ./series.nix ../patches/v0.12.0; }; })
  ];
}
