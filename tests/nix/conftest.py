"""Offline Nix checks: Debian's nix-bin (2.8) evaluates our Nix code against the stub inputs in tests/nix/stubs.

Each test session gets its own chroot store and caches under a temp dir, so nothing touches /nix or ~/.cache and
no network is needed. The repo's Nix-relevant files are copied to a temp tree first (a path: flake would otherwise
copy .venv/ and build/ into the store); TINYGRAD_ORIN_NIX_TREE copies from another checkout instead, e.g. to try
a branch's Nix code against main's patches/.
"""
import importlib.util, json, os, pathlib, shutil, subprocess
import pytest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("TINYGRAD_ORIN_NIX_TREE", HERE.parents[1]))
# what the flake reads from the repo (orin_emu/ and tests/ for the checks' src)
FLAKE_PARTS = ("flake.nix", "flake.lock", "overlays", "nixos", "patches", "orin_emu", "tests")
NIX_CONFIG = "experimental-features = nix-command flakes\nsubstituters =\nbuild-users-group =\n"

def copy_tree(src:pathlib.Path, dst:pathlib.Path) -> pathlib.Path:
  dst.mkdir(parents=True)
  for part in FLAKE_PARTS:
    if (src/part).is_dir(): shutil.copytree(src/part, dst/part, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis"))
    elif (src/part).is_file(): shutil.copy(src/part, dst/part)
  return dst

class Nix:
  def __init__(self, tmp:pathlib.Path):
    if shutil.which("nix-instantiate") is None: raise RuntimeError("nix-instantiate not found: apt-get install --no-install-recommends nix-bin")
    (tmp/"conf").mkdir(exist_ok=True)
    self.store = str(tmp/"store")
    self.env = {**os.environ, "NIX_CONFIG": NIX_CONFIG, "NIX_CONF_DIR": str(tmp/"conf"), "XDG_CACHE_HOME": str(tmp/"cache"),
                "HOME": str(tmp)}

  def run(self, *args:str) -> str:
    r = subprocess.run([args[0], "--store", self.store, *args[1:]], capture_output=True, text=True, env=self.env, timeout=120)
    if r.returncode != 0: raise RuntimeError(f"{' '.join(args)}\n{r.stderr}")
    return r.stdout

  def eval(self, file:pathlib.Path, **args) -> object:
    """nix-instantiate --eval --strict --json FILE, paths passed as Nix paths and everything else as JSON strings"""
    flags = [f for k,v in args.items() for f in (("--arg", k, str(v)) if isinstance(v, pathlib.Path) else ("--argstr", k, json.dumps(v)))]
    return json.loads(self.run("nix-instantiate", "--eval", "--strict", "--json", str(file), *flags))

  def expr(self, expr:str) -> object: return json.loads(self.run("nix-instantiate", "--eval", "--strict", "--json", "--expr", expr))

  def flake(self, tree:pathlib.Path, *args:str) -> str:
    """nix flake/eval on the tree with every input replaced by the stubs (jetpack-nixos's own cuda-legacy too)"""
    stubs = tree/"tests"/"nix"/"stubs"
    overrides = {"nixpkgs": "nixpkgs", "jetpack-nixos": "jetpack-nixos", "jetpack-nixos/cuda-legacy": "cuda-legacy"}
    return self.run("nix", *args, "--no-write-lock-file", *(a for i, s in overrides.items() for a in ("--override-input", i, f"path:{stubs/s}")))

@pytest.fixture(scope="session")
def nix(tmp_path_factory) -> Nix: return Nix(tmp_path_factory.mktemp("nix"))

@pytest.fixture(scope="session")
def source() -> pathlib.Path: return SOURCE

@pytest.fixture(scope="session")
def series():
  """scripts/series.py of the checkout: the pinned bases"""
  spec = importlib.util.spec_from_file_location("series", SOURCE/"scripts"/"series.py")
  spec.loader.exec_module(mod:=importlib.util.module_from_spec(spec))
  return mod

@pytest.fixture(scope="session")
def upstream(series) -> pathlib.Path:
  """the master series' base as ../shared/upstream's tarball, sha256-checked: the commit's tree less docs/ and examples/"""
  try: return series.BASES["master"].fetch(SOURCE/"build"/"dl")
  except series.SeriesError as e: pytest.skip(str(e))

@pytest.fixture(scope="session")
def upstream_git(series) -> pathlib.Path:
  """a tinygrad git repository holding the master series' base commit: the submodule when initialised, else $TINYGRAD_GIT"""
  for repo in (SOURCE/"tinygrad", os.environ.get("TINYGRAD_GIT")):
    if repo and subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{series.BASES['master'].rev}^{{commit}}"],
                               capture_output=True).returncode == 0: return pathlib.Path(repo)
  pytest.skip("no git repository with upstream's commit (git submodule update --init tinygrad, or TINYGRAD_GIT=<a tinygrad clone>)")

@pytest.fixture(scope="session")
def tree(tmp_path_factory) -> pathlib.Path:
  """a copy of the checkout's Nix-relevant files; tests that mutate take their own copy with fresh_tree"""
  return copy_tree(SOURCE, tmp_path_factory.mktemp("tree")/"repo")

@pytest.fixture
def fresh_tree(tmp_path) -> pathlib.Path: return copy_tree(SOURCE, tmp_path/"repo")
