# The series bisect: every prefix of each series applies to the pinned base, compiles, imports and computes. Each prefix gets its own
# interpreter on a checkout of that prefix: the files its patch touches compile, tinygrad and the touched modules import, the CPU device
# adds; from the patch that adds TegraIface on, the NV device on the emulated Orin (ORIN_EMU=1) picks TegraIface and computes too. A patch
# that touches only the LLM app (tinygrad/llm/, tinygrad/apps/) leaves what computes as the prefix before had it: it compiles and imports
# only. A second check
# reads each patch after TegraIface's: none may change or remove lines an earlier patch added to TegraIface (a later behaviour adds its
# own lines), unless its message says why in a "Revises-TegraIface:" line.
import contextlib, importlib.util, os, re, shutil, subprocess, sys, threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("series", ROOT/"scripts"/"series.py")
series = importlib.util.module_from_spec(spec); spec.loader.exec_module(series)
CACHE, PY, NV = ROOT/"build"/"dl", str(ROOT/".venv"/"bin"/"python"), "tinygrad/runtime/ops_nv.py"

SMOKE = """
import importlib, os, sys
for f in sys.argv[1:]: compile(open(f).read(), f, "exec")
import tinygrad
for f in sys.argv[1:]:
  if f.startswith("tinygrad/"): importlib.import_module(f[:-3].replace("/", ".").removesuffix(".__init__"))
if os.environ.get("SMOKE_COMPUTE") == "0": sys.exit(0)
from tinygrad import Tensor, Device
assert (Tensor([1., 2., 3.], device="CPU") + 1).tolist() == [2., 3., 4.]
if os.environ.get("ORIN_EMU") == "1":
  assert type(Device["NV"].iface).__name__ == "TegraIface", Device["NV"].iface
  assert (Tensor([1., 2., 3.], device="NV") * 2 + 1).tolist() == [3., 5., 7.]
"""

def apply_all(patches:Path, names:list[str], tree:Path, base:series.Base=series.V012) -> tuple[list[str], str|None]:
  """git am each patch onto a fresh base in tree: the commits made, and the name of the first patch that does not apply (None: all did)."""
  series.materialise(tree, CACHE, base)
  commits = []
  for n in names:
    r = subprocess.run(["git", "-C", str(tree), "am", "-q", "--committer-date-is-author-date", str(patches/n)], capture_output=True, text=True,
                       env={**os.environ, **series.GIT_ENV})
    if r.returncode: return commits, n
    commits.append(series.git(tree, "rev-parse", "HEAD"))
  return commits, None

# git worktree add and remove of one repository, one at a time: removing the last worktree deletes .git/worktrees, which a concurrent add
# is creating a worktree in ("could not create directory of '.git/worktrees/prefix-NNNN'")
WORKTREES = threading.Lock()

@contextlib.contextmanager
def worktree(tree:Path, commit:str, scratch:Path):
  with WORKTREES: series.git(tree, "worktree", "add", "-q", "--detach", str(scratch), commit)
  try: yield scratch
  finally:
    with WORKTREES: series.git(tree, "worktree", "remove", "--force", str(scratch), check=False)

def check_prefix(tree:Path, commit:str, scratch:Path) -> str|None:
  """Check out the series up to commit and run the smoke check there: None when it passes, else what went wrong."""
  with worktree(tree, commit, scratch):
    touched = [f for f in series.git(tree, "diff-tree", "--no-commit-id", "--name-only", "-r", commit).split() if f.endswith(".py")]
    tegra = "class TegraIface" in (scratch/NV).read_text()
    app_only = all(f.startswith(("tinygrad/llm/", "tinygrad/apps/")) for f in series.git(tree, "diff-tree", "--no-commit-id", "--name-only", "-r", commit).split())
    env = {**os.environ, "PYTHONPATH": str(scratch), "ORIN_EMU": "1" if tegra else "0", "NV": "0", "CPU": "0", "PYTHONDONTWRITEBYTECODE": "1",
           "SMOKE_COMPUTE": "0" if app_only else "1"}
    r = subprocess.run([PY, "-c", SMOKE, *[f for f in touched if (scratch/f).exists()]], cwd=scratch, capture_output=True, text=True, env=env,
                       timeout=300)
    return None if r.returncode == 0 else (r.stdout + r.stderr)[-1500:]

def walk(patches:Path, tmp:Path, only:set[str]|None=None, base:series.Base=series.V012) -> dict[str, str]:
  """Each prefix of the series (those ending in a patch named in only, when given): {patch name: why it failed} for the failing ones."""
  names = series.read_series(patches)
  commits, broken = apply_all(patches, names, tree:=tmp/"tinygrad", base)
  failures = {broken: "does not apply"} if broken else {}
  todo = [(n, c) for n, c in zip(names, commits) if only is None or n in only]
  with ThreadPoolExecutor(2) as pool:
    for (n, _), err in zip(todo, pool.map(lambda nc: check_prefix(tree, nc[1], tmp/f"prefix-{nc[0][:4]}"), todo)):
      if err is not None: failures[n] = err
  return failures

def tegra_line_revisions(tree:Path, base:series.Base=series.V012) -> list[str]:
  """Patches after the one adding TegraIface that change or remove lines inside class TegraIface, without a Revises-TegraIface: line."""
  commits = series.git(tree, "rev-list", "--reverse", f"{base.tag}..HEAD").split()
  bad = []
  for c in commits:
    old = series.git(tree, "show", f"{c}^:{NV}").splitlines()
    if not (start:=next((i for i, ln in enumerate(old) if ln.startswith("class TegraIface")), None)):
      continue
    end = next((i for i in range(start+1, len(old)) if old[i] and not old[i][0].isspace()), len(old))
    hunks = re.findall(r"^@@ -(\d+)(?:,(\d+))? ", series.git(tree, "diff", "-U0", f"{c}^", c, "--", NV), re.M)
    removed = [ln for a, b in hunks for ln in range(int(a), int(a) + int(b or 1)) if b != "0"]
    if any(start < ln <= end for ln in removed) and "Revises-TegraIface:" not in series.git(tree, "log", "-1", "--format=%B", c):
      bad.append(series.git(tree, "log", "-1", "--format=%s", c))
  return bad

@pytest.mark.parametrize("base", list(series.BASES))
def test_every_prefix_builds_and_computes(tmp_path, base):
  if not Path(PY).exists(): pytest.skip("no .venv (scripts/setup makes it)")
  failures = walk((b:=series.BASES[base]).patches, tmp_path, base=b)
  assert not failures, "\n\n".join(f"{n}:\n{err}" for n, err in failures.items())

@pytest.mark.parametrize("base", list(series.BASES))
def test_no_patch_rewrites_tegraiface_lines_of_an_earlier_one(tmp_path, base):
  b = series.BASES[base]
  _, broken = apply_all(b.patches, series.read_series(b.patches), tree:=tmp_path/"tinygrad", b)
  assert broken is None and not (bad:=tegra_line_revisions(tree, b)), bad
  # the check itself: a commit that changes a line TegraIface has had since it was added is named, one that says why is not
  (f:=tree/NV).write_text(f.read_text().replace("/dev/nvgpu/igpu0/ctrl\"", "/dev/nvgpu/igpu1/ctrl\"", 1))
  series.git(tree, "commit", "-q", "-am", "nv: another node")
  series.git(tree, "commit", "-q", "--allow-empty", "-m", "nv: empty\n\nRevises-TegraIface: nothing")
  assert tegra_line_revisions(tree, b) == ["nv: another node"]

def test_a_broken_patch_in_the_middle_is_named(tmp_path):
  # the patch that makes devices refuse work after fork(): its import-time hook misspelled, so the import of hcq.py fails from there on
  shutil.copytree(series.V012.patches, p:=tmp_path/"patches")
  names = series.read_series(p)
  i, name = next((i, n) for i, n in enumerate(names) if "refuses-work-in-the-child" in n or "fork" in n)
  assert 0 < i < len(names) - 1
  text = (f:=p/name).read_text()
  f.write_text(broken:=text.replace("register_at_fork(after_in_child=_after_fork_in_child)", "register_at_fork(after_in_child=_after_fork_in_chld)"))
  assert broken != text, f"{name} no longer registers _after_fork_in_child: break another line"
  failures = walk(p, tmp_path, only={names[i-1], name})
  assert names[i-1] not in failures and "_after_fork_in_chld" in failures.get(name, ""), failures

def test_worktrees_come_and_go_on_two_threads(tmp_path):
  # as walk checks two prefixes at a time: without WORKTREES about 1 in 200 adds failed here
  series.git(tmp_path, "init", "-q"); series.git(tmp_path, "commit", "-q", "--allow-empty", "-m", "base")
  def one(i:int) -> None:
    with worktree(tmp_path, "HEAD", tmp_path/f"w{i}") as w: assert w.is_dir()
  with ThreadPoolExecutor(2) as pool: list(pool.map(one, range(1000)))
