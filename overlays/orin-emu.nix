# orin_emu, the emulated Orin, with the switch scripts/setup writes into .venv/: in a Python holding this package, ORIN_EMU=1 in
# the environment puts every process on the emulated Orin (the package's tests stay in the repo)
{
  lib,
  python,
  buildPythonPackage,
  numpy,
  tinygrad,
}:
let
  pth = "import os; os.environ.get('ORIN_EMU') == '1' and __import__('orin_emu.hook')";
in
buildPythonPackage {
  pname = "orin-emu";
  version = "0-unstable-2026-11-27";
  pyproject = false;
  src = ../orin_emu;
  dependencies = [
    numpy
    tinygrad
  ];
  installPhase = ''
    runHook preInstall
    site=$out/${python.sitePackages}
    mkdir -p $site/orin_emu
    cp -r . $site/orin_emu
    rm -r $site/orin_emu/tests
    echo ${lib.escapeShellArg pth} > $site/orin_emu.pth
    runHook postInstall
  '';
  # ORIN_EMU is unset in the build: the hook's import is checked, not the switch
  pythonImportsCheck = [ "orin_emu.hook" ];
  passthru = { inherit pth; };
  meta.description = "The emulated Jetson Orin: nvgpu/nvmap kernel interface, ga10b hardware and SM execution in Python";
}
