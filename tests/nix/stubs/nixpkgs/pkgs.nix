# A stand-in for `import nixpkgs { ... }`: overlays and pythonPackagesExtensions compose as in nixpkgs; packages we
# only reference are store-path-looking strings under /stub, packages we define are instantiable derivations.
{
  system,
  overlays ? [ ],
  config ? { },
}:
let
  lib = import ./lib.nix;
  # a dependency: only its path (and its outputs' paths) ends up in our code
  dep = name: outputs: { inherit name; outPath = "/stub/${name}"; } // lib.genAttrs outputs (o: { outPath = "/stub/${name}-${o}"; });
  # something our code builds: a derivation (so flake checks can instantiate it) carrying its arguments, all of
  # them evaluated as soon as it is looked at, so a bad reference anywhere in them fails `nix flake show`
  drv = name: args: builtins.deepSeq args (derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" "exit 1" ];
  } // args);
  callPackageWith = set: fn: args: let f = if builtins.isFunction fn then fn else import fn; in
    f (builtins.intersectAttrs (builtins.functionArgs f) set // args);
  pythonSet = pkgs: lib.fix (builtins.foldl' (prev: ext: ps: prev ps // ext ps (prev ps)) (ps: {
    callPackage = callPackageWith (pkgs // ps);
    buildPythonPackage = a: drv "python3-${a.pname}-${a.version}" (a // a.passthru or { });
    python = dep "python3" [ ] // { sitePackages = "lib/python3.13/site-packages"; };
  } // lib.genAttrs [ "setuptools" "numpy" "pytest" "pytest-xdist" "hypothesis" "torch" "gguf" "jinja2" ] (n: dep "python3-${n}" [ ] // { pname = n; }))
    pkgs.pythonPackagesExtensions);
  base = pkgs: {
    inherit lib config system;
    callPackage = callPackageWith pkgs;
    pythonPackagesExtensions = [ ];
    python3 = let set = pythonSet pkgs; in {
      pkgs = set;
      withPackages = f: drv "python3-env" { pythonPackages = f set; };
    };
    python3Packages = pkgs.python3.pkgs;
    stdenv.cc.libc = dep "glibc" [ "lib" ];
    addDriverRunpath.driverLink = "/run/opengl-driver";
    fetchFromGitHub = a: a // { outPath = "/stub/github/${a.owner}-${a.repo}-${a.rev}"; };
    cudaPackages_12_6 = {
      cuda_cudart = dep "cuda_cudart-12.6" [ "include" "lib" ];
      cuda_nvrtc = dep "cuda_nvrtc-12.6" [ "lib" ];
      libnvjitlink = dep "libnvjitlink-12.6" [ "lib" ];
    };
    clang = dep "clang" [ ] // { meta.mainProgram = "clang"; };
    coreutils = dep "coreutils" [ ];
    runCommand = name: env: script: drv name (env // { inherit script; });
    writeTextFile = args: drv args.name args;
    mkShellNoCC = args: drv "nix-shell" args;
    nixfmt-tree = drv "nixfmt-tree" { };
  };
in
lib.fix (builtins.foldl' (prev: overlay: pkgs: prev pkgs // overlay pkgs (prev pkgs)) base overlays)
