# tinygrad at upstream commit a9069c17, the master series' base, with that series, its library lookups pointed at
# store paths so that DEV=NV and DEV=CUDA work on NixOS without environment variables. CUDA is JetPack 6's 12.6,
# named explicitly: under jetpack-nixos's module pkgs.cudaPackages is 12.8+, with only its overlay 11.4.
{
  lib,
  stdenv,
  buildPythonPackage,
  fetchFromGitHub,
  setuptools,
  addDriverRunpath,
  cudaPackages_12_6,
  clang,
  runCommand,
  patches,
}:
let
  cuda = cudaPackages_12_6;
  libcuda = "${addDriverRunpath.driverLink}/lib/libcuda.so";
  # NVRTC compiles with -I$CUDA_PATH/include: cuda_fp16.h and friends come from cudart's headers
  cudaInclude = lib.getInclude cuda.cuda_cudart;
  # file -> [ [ upstream text, replacement ] ]; every <NAME>_PATH environment variable still overrides these
  substitutions = {
    "tinygrad/runtime/autogen/libc.py" = [ [ "DLL('libc', 'c'," "DLL('libc', '${lib.getLib stdenv.cc.libc}/lib/libc.so.6'," ] ];
    "tinygrad/runtime/autogen/cuda.py" = [ [ "DLL('cuda', 'nvcuda' if WIN else 'cuda')" "DLL('cuda', '${libcuda}')" ] ];
    "tinygrad/runtime/autogen/nvrtc.py" = [ [ "DLL('nvrtc', 'nvrtc'," "DLL('nvrtc', '${lib.getLib cuda.cuda_nvrtc}/lib/libnvrtc.so'," ] ];
    "tinygrad/runtime/autogen/nvjitlink.py" = [
      [ "DLL('nvjitlink', 'nvJitLink'," "DLL('nvjitlink', '${lib.getLib cuda.libnvjitlink}/lib/libnvJitLink.so'," ]
    ];
    "tinygrad/runtime/support/compiler_cuda.py" = [ [ ''getenv("CUDA_PATH", "")'' ''getenv("CUDA_PATH", "${cudaInclude}")'' ] ];
    "tinygrad/runtime/support/compiler_cpu.py" = [ [ ''getenv("CC", 'clang')'' ''getenv("CC", '${lib.getExe clang}')'' ] ];
  };
  cudaRoot = runCommand "tinygrad-orin-cuda-root" { } ''
    mkdir $out
    ln -s ${cudaInclude}/include $out/include
    ln -s ${libcuda} $out/libcuda.so
  '';
  replace = file: pairs: "substituteInPlace ${file} ${lib.concatMapStringsSep " " (p: "--replace-fail ${lib.escapeShellArgs p}") pairs}\n";
in
buildPythonPackage {
  pname = "tinygrad";
  # pyproject.toml says 0.13.0 at this commit of 2026-08-22, between the 0.13.0 and 0.14.0 releases
  version = "0.13.0-unstable-2026-08-22";
  pyproject = true;
  src = fetchFromGitHub {
    owner = "tinygrad";
    repo = "tinygrad";
    rev = "a9069c177a9da9cca18593edf55acd2e6073cca6";
    hash = "sha256-DPzJ7TwwdslMjY70RrBB1MGB/g7hERgkJPKs5fhGoS8=";
  };
  inherit patches;
  # after the series: --replace-fail stops the build if a patch moved one of these lines
  postPatch = lib.concatStrings (lib.mapAttrsToList replace substitutions);
  build-system = [ setuptools ];
  # the suites run as the flake's checks, not in every build of the package
  doCheck = false;
  pythonImportsCheck = [
    "tinygrad"
    "tinygrad.runtime.ops_nv"
    "tinygrad.runtime.ops_cuda"
    "tinygrad.llm.model"
  ];
  passthru = {
    inherit substitutions cudaRoot;
    # the same lookups as environment variables, for an editable checkout whose sources are not substituted;
    # CUDA_PATH is both NVRTC's include root and libcuda's search directory, so it gets a tree holding both
    runtimeEnv = {
      LIBC_PATH = "${lib.getLib stdenv.cc.libc}/lib/libc.so.6";
      NVRTC_PATH = "${lib.getLib cuda.cuda_nvrtc}/lib/libnvrtc.so";
      NVJITLINK_PATH = "${lib.getLib cuda.libnvjitlink}/lib/libnvJitLink.so";
      CUDA_PATH = "${cudaRoot}";
    };
  };
  meta = {
    description = "tinygrad master a9069c17 with tinygrad-orin's patch series (NV backend on Jetson Orin via nvgpu/nvmap)";
    homepage = "https://github.com/tinygrad/tinygrad";
    license = lib.licenses.mit;
  };
}
