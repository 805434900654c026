"""nixosConfigurations.orin against the real jetpack-nixos at the locked revision, with nixpkgs' real lib standing in for the full
nixpkgs (tests/nix/eval-real.nix; docs/nix-real-evaluation.md records a run). CI has no copies of these sources, so it skips; point
TINYGRAD_ORIN_JETPACK_NIXOS and TINYGRAD_ORIN_NIXPKGS_LIB at clones (plain or bare) of github:anduril/jetpack-nixos and
github:nix-community/nixpkgs.lib, and optionally TINYGRAD_ORIN_CUDA_LEGACY at one of github:nixos-cuda/cuda-legacy (its stub stands
in otherwise). `python tests/nix/test_nix_real_sources.py` prints the evaluation as JSON."""
import json, os, pathlib, re, subprocess, sys, tempfile
import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOCK = json.loads((ROOT/"flake.lock").read_text())["nodes"]
# nixpkgs.lib as nixos-25.11 branched off (the parent of "26.05 is Yarara"): the lib of the locked nixpkgs less the branch's backports
NIXPKGS_LIB_REV = "d7885204d4be98b3718bad1a47b80c2058d696aa"
ENV = {"jetpack-nixos": "TINYGRAD_ORIN_JETPACK_NIXOS", "nixpkgs.lib": "TINYGRAD_ORIN_NIXPKGS_LIB", "cuda-legacy": "TINYGRAD_ORIN_CUDA_LEGACY"}
# what the stand-in pkgs gives itself (eval-real.nix); every other pkgs.NAME in jetpack-nixos's modules throws
STAND_IN = {"stdenv", "config", "writeTextFile", "coreutils", "python3"}

def git(repo:pathlib.Path, *args:str, **kw) -> subprocess.CompletedProcess:
  return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, **kw)

def checkout(name:str, rev:str|None, dst:pathlib.Path) -> tuple[pathlib.Path, str]|None:
  """the source named by the environment at rev (a git clone; a plain directory is taken as it is): (directory, revision used)"""
  if not (src:=os.environ.get(ENV[name])): return None
  if git(src:=pathlib.Path(src), "rev-parse", "--git-dir").returncode != 0: return src, "as given"
  used = rev if rev and git(src, "cat-file", "-e", f"{rev}^{{commit}}").returncode == 0 else git(src, "rev-parse", "HEAD", text=True).stdout.strip()
  (dst:=dst/name).mkdir()
  subprocess.run(f"git -C {src} archive {used} | tar -x -C {dst}", shell=True, check=True)
  return dst, used

def evaluate(tmp:pathlib.Path) -> dict:
  """the evaluation as JSON, with the revisions used and the stubs' interfaces next to the real flakes'"""
  got = {n: checkout(n, rev, tmp) for n, rev in (("jetpack-nixos", LOCK["jetpack-nixos"]["locked"]["rev"]), ("nixpkgs.lib", NIXPKGS_LIB_REV),
                                                 ("cuda-legacy", LOCK.get("cuda-legacy", {}).get("locked", {}).get("rev")))}
  if (missing:=[f"{ENV[n]} (github:{'anduril/jetpack-nixos' if n == 'jetpack-nixos' else 'nix-community/nixpkgs.lib'})"
                for n in ("jetpack-nixos", "nixpkgs.lib") if got[n] is None]):
    pytest.skip(f"the real sources are not here: set {' and '.join(missing)} to a clone")
  (jetpack, jetpack_rev), (lib, lib_rev) = got["jetpack-nixos"], got["nixpkgs.lib"]
  cuda, cuda_rev = got["cuda-legacy"] or (HERE/"stubs"/"cuda-legacy", "stub")
  module_text = "".join(p.read_text() for p in sorted((jetpack/"modules").glob("*.nix")))
  names = sorted({m for m in re.findall(r"pkgs\.([A-Za-z_][\w'-]*)", module_text)} - STAND_IN)
  env = {**os.environ, "NIX_CONFIG": "experimental-features = nix-command flakes\nsubstituters =\nbuild-users-group =\n", "HOME": str(tmp),
         "XDG_CACHE_HOME": str(tmp/"cache")}
  def nix(*args:str) -> object:
    r = subprocess.run(["nix-instantiate", "--store", str(tmp/"store"), "--eval", "--strict", "--json", *args], capture_output=True, text=True,
                       env=env, timeout=300)
    if r.returncode != 0: raise RuntimeError(r.stderr)
    return json.loads(r.stdout)
  interface = lambda f: nix("--expr", f"let f = import {f}; in [ (f.inputs or {{ }}) (builtins.functionArgs f.outputs) ]")
  report = nix(str(HERE/"eval-real.nix"), "--arg", "root", str(ROOT), "--arg", "jetpack", str(jetpack), "--arg", "lib", str(lib),
               "--arg", "cudaLegacy", str(cuda), "--argstr", "pkgsNames", json.dumps(names))
  report["jetpackUdevRules"] = re.findall(r"rules\.d/([\w.-]+\.rules)", (jetpack/"modules"/"default.nix").read_text())
  report["sources"] = {"jetpack-nixos": jetpack_rev, "nixpkgs.lib": lib_rev, "cuda-legacy": cuda_rev}
  report["interfaces"] = {n: {"real": interface(d/"flake.nix"), "stub": interface(HERE/"stubs"/n/"flake.nix")}
                          for n, d in (("jetpack-nixos", jetpack), ("cuda-legacy", cuda))}
  report["pkgsStandInThrows"] = names
  return report

@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
  if subprocess.run(["which", "nix-instantiate"], capture_output=True).returncode != 0: pytest.skip("nix-instantiate not found (nix-bin)")
  return evaluate(tmp_path_factory.mktemp("real"))

def test_lock_calls_the_real_flakes(report):
  assert report["sources"]["jetpack-nixos"] == LOCK["jetpack-nixos"]["locked"]["rev"]
  assert report["jetpackModule"] is True   # jetpack-nixos's outputs ran with the inputs our lock gives them
  for name, i in report["interfaces"].items():
    if report["sources"]["cuda-legacy"] != "stub" or name != "cuda-legacy": assert i["stub"] == i["real"], name

def test_options_take_the_intended_values(report):
  assert report["tinygrad-orin"] == {"enable": True, "users": ["jetson"], "group": "video", "clockControl": True, "maxPerformance": True,
                                     "python": True}
  assert report["nvidia-jetpack"] == {"enable": True, "som": "orin-agx", "carrierBoard": "devkit", "majorVersion": "6", "maxClock": True,
                                      "configureCuda": True, "super": False}
  assert report["nvpmodel"] == {"enable": True, "profileNumber": 0} and report["graphics"] is True
  assert report["nixpkgsConfig"] == {"allowUnfree": True, "cudaSupport": True, "cudaCapabilities": ["8.7"]}
  assert report["groups"] == ["video"] and sorted(report["jetsonGroups"]) == ["video", "wheel"]
  # declared in a file the module system can name, because nixosModules.default is the path
  assert report["declaredIn"] == ["nixos"]

def test_udev_rule_and_its_order(report):
  [rules] = report["udev"]
  assert rules["destination"] == "/etc/udev/rules.d/99-tinygrad-orin.rules" and 'KERNEL=="nvmap", GROUP="video", MODE="0660"' in rules["text"]
  assert "17000000.gpu" in rules["text"]   # clockControl
  assert report["jetpackUdevRules"] and all(r < "99-tinygrad-orin.rules" for r in report["jetpackUdevRules"])

def test_every_evaluable_assertion_holds(report):
  evaluated = [a for a in report["assertions"] if isinstance(a["holds"], bool)]
  assert [a for a in evaluated if not a["holds"]] == [] and sum(a["file"] == "nixos" for a in evaluated) == 3
  # only the CUDA version checks of jetpack-nixos's cuda.nix need pkgs.cudaPackages, which needs the full nixpkgs
  assert {a["file"] for a in report["assertions"] if not isinstance(a["holds"], bool)} == {"modules/cuda.nix"}

def test_service_on_an_orin_nano_in_super_mode(report):
  # our module alone by the real lib.evalModules: its option types, mkMerge/mkIf, users merged, the unit as NixOS would get it
  llm = report["llm"]
  assert llm["failed"] == [] and llm["profileNumber"] == 2   # MAXN_SUPER in nvpmodel_p3767_0003_super.conf
  assert (llm["port"], llm["listenAddress"], llm["user"], llm["group"]) == (8000, "127.0.0.1", "tinygrad-llm", "tinygrad-llm")
  assert llm["systemUser"] == {"isSystemUser": True, "group": "tinygrad-llm", "extraGroups": ["video"]}
  sc = llm["unit"]["serviceConfig"]
  assert sc["ExecStart"] == ('"/nix/store/00000000000000000000000000000000-tinygrad-llm/bin/tinygrad-llm" "--model" "/var/lib/models/m.gguf" '
                             '"--serve" "8000" "--host" "127.0.0.1"')
  assert llm["unit"]["environment"]["DEV"] == "NV" and sc["SupplementaryGroups"] == ["video"] and sc["Restart"] == "on-failure"

if __name__ == "__main__":
  with tempfile.TemporaryDirectory() as tmp: print(json.dumps(evaluate(pathlib.Path(tmp)), indent=1))
