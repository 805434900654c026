#!/usr/bin/env python3
"""A pinned tinygrad base + its patch series as a git working tree: `apply` materialises and patches it, `export` turns its branch back
into the series and one upstream-PR branch per topic. Two bases: tinygrad v0.12.0 (patches/v0.12.0/, the PyPI sdist) and upstream master
a9069c17 (patches/master/, ../shared/upstream's tarball where GitHub is out of reach). Stdlib only: it runs before the project's
virtual environment exists."""
import argparse, hashlib, os, re, shutil, subprocess, sys, tarfile, tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

@dataclass(frozen=True)
class Base:
  tag: str
  rev: str
  archive: str        # the tree as a tarball: a PyPI sdist, or a file of ../shared/upstream
  sha256: str
  patches: Path
  build: Path         # where the tree is materialised when the submodule does not hold this base
  def fetch(self, cache:Path) -> Path:
    if self.archive.endswith(".tar.gz"):
      cache.mkdir(parents=True, exist_ok=True)
      if not (f:=cache/self.archive).exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(cache),
                        self.archive.removesuffix(".tar.gz").replace("-", "==")], check=True)
    # a machine without ../shared (the GPU machine) takes a copy in the cache
    elif not (f:=ROOT.parent/"shared"/"upstream"/self.archive).exists() and not (f:=cache/self.archive).exists():
      raise SeriesError(f"{ROOT.parent/'shared'/'upstream'/self.archive} is missing, and no copy in {cache}: it holds tinygrad {self.tag}")
    if (got:=hashlib.sha256(f.read_bytes()).hexdigest()) != self.sha256:
      if f.is_relative_to(cache): f.unlink()
      raise SeriesError(f"{self.archive}: sha256 {got} does not match the pinned {self.sha256}")
    return f

BASES = {"v0.12.0": Base("v0.12.0", "6b0a9f5ee6890facbbe3674fed8002fac2fa918c", "tinygrad-0.12.0.tar.gz",
                         "299cd53d9452b8689b36c7026c866b73d1e4a862ec53a8ea5bc2a412358c1bbf", ROOT/"patches"/"v0.12.0",
                         ROOT/"build"/"tinygrad"),
         "master": Base("upstream-a9069c17", "a9069c177a9da9cca18593edf55acd2e6073cca6", "tinygrad-a9069c17.tar.xz",
                        "55a9dc6bf0037286c32641e0c3fcd80b0214970b6b86004689a9ff4995978b05", ROOT/"patches"/"master", ROOT/"build"/"master"/"tinygrad")}
V012 = BASES["v0.12.0"]
BASE_TAG = V012.tag
BRANCH, STAMP = "orin", "orin-series-stamp"
FORMAT_PATCH = ["format-patch", "-N", "--zero-commit", "--no-signature", "--full-index"]  # nothing in the output churns between runs
# fixed identity and dates make the base commit and every applied patch hash the same on every machine
GIT_ENV = {"GIT_AUTHOR_NAME": "tinygrad", "GIT_AUTHOR_EMAIL": "tinygrad@users.noreply.github.com", "GIT_AUTHOR_DATE": "2026-01-12T00:00:00Z",
           "GIT_COMMITTER_NAME": "tinygrad-orin", "GIT_COMMITTER_EMAIL": "tinygrad-orin@users.noreply.github.com",
           "GIT_COMMITTER_DATE": "2026-01-12T00:00:00Z"}

class SeriesError(Exception): pass

def git(tree:Path, *args:str, env:dict|None=None, check=True) -> str:
  r = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV, **(env or {})})
  if check and r.returncode != 0: raise SeriesError(f"git {' '.join(args)} in {tree} failed:\n{r.stderr.strip()}")
  return r.stdout.strip()

def read_series(patches:Path) -> list[str]:
  if not (series:=patches/"series").exists(): return []
  names = [l.strip() for l in series.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]
  if (missing:=[n for n in names if not (patches/n).is_file()]): raise SeriesError(f"{series} names missing files: {', '.join(missing)}")
  return names

def default_tree(base:Base=V012) -> Path:
  # the submodule, pinned to master's commit, is the upstream git history itself where it is initialised; otherwise the archive stands in
  return ROOT/"tinygrad" if base is not V012 and (ROOT/"tinygrad"/".git").exists() else base.build

def materialise(tree:Path, cache:Path, base:Base=V012) -> None:
  """Create tree as a git repo whose tag base.tag is the pristine base."""
  if (tree/".git").exists():
    if git(tree, "tag", "-l", base.tag) != base.tag:
      if tree == ROOT/"tinygrad": git(tree, "tag", base.tag, base.rev)  # a shallow submodule checkout may lack the tag
      else: raise SeriesError(f"{tree} is a git tree without tag {base.tag}: remove it and run again")
    return
  tree.parent.mkdir(parents=True, exist_ok=True)
  with tempfile.TemporaryDirectory(dir=tree.parent) as tmp:
    with tarfile.open(base.fetch(cache)) as tf: tf.extractall(tmp, filter="data")
    src = Path(tmp)/re.sub(r"\.tar\.(gz|xz)$", "", base.archive)
    git(src, "init", "-q", "-b", BRANCH)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", f"tinygrad {base.tag} ({base.archive})")
    git(src, "tag", base.tag)
    shutil.move(str(src), str(tree))

def series_stamp(tree:Path, patches:Path, names:list[str], base:Base=V012) -> str:
  h = hashlib.sha256(git(tree, "rev-parse", f"{base.tag}^{{commit}}").encode())
  for n in names: h.update(n.encode() + b"\0" + (patches/n).read_bytes())
  return h.hexdigest()

def series_until(names:list[str], until:str|None) -> list[str]:
  """the series before the first patch whose name holds until (all of it when until is None): a tree to measure a patch against"""
  if until is None: return names
  if (i:=next((i for i,n in enumerate(names) if until in n), None)) is None: raise SeriesError(f"no patch in the series has '{until}' in its name")
  return names[:i]

def apply(tree:Path, patches:Path, cache:Path, until:str|None=None, base:Base=V012) -> bool:
  """Bring tree's branch `orin` to base + series (up to until). Returns False when it already was (nothing touched)."""
  names = series_until(read_series(patches), until)
  materialise(tree, cache, base)
  stamp_file, want = Path(git(tree, "rev-parse", "--absolute-git-dir"))/STAMP, series_stamp(tree, patches, names, base)
  head = git(tree, "rev-parse", "-q", "--verify", f"refs/heads/{BRANCH}", check=False)
  recorded = stamp_file.read_text().split() if stamp_file.exists() else []
  if recorded == [want, head] and git(tree, "symbolic-ref", "-q", "HEAD", check=False) == f"refs/heads/{BRANCH}": return False
  # never throw away patch work: the branch must be exactly what a previous apply produced (or the bare base)
  if head and head not in (recorded[1:] or [git(tree, "rev-parse", f"{base.tag}^{{commit}}")]):
    raise SeriesError(f"{tree}: branch {BRANCH} has commits that are not in patches/ — run scripts/export-patches first")
  if git(tree, "status", "--porcelain", "--untracked-files=no"): raise SeriesError(f"{tree} has uncommitted changes: commit or discard them first")
  stamp_file.unlink(missing_ok=True)
  git(tree, "checkout", "-q", "-B", BRANCH, base.tag)
  for n in names:
    r = subprocess.run(["git", "-C", str(tree), "am", "-q", "--committer-date-is-author-date", str(patches/n)], capture_output=True, text=True,
                       env={**os.environ, **GIT_ENV})
    if r.returncode != 0:
      git(tree, "am", "--abort", check=False)
      raise SeriesError(f"patch {n} does not apply to tinygrad {base.tag}:\n{(r.stdout + r.stderr).strip()}")
  stamp_file.write_text(f"{want} {git(tree, 'rev-parse', 'HEAD')}\n")
  return True

def topic(subject:str) -> str:
  if not (m:=re.match(r"([a-z0-9_.-]+(?:/[a-z0-9_.-]+)*): ", subject)): raise SeriesError(f"commit '{subject}' has no topic prefix such as 'opt/heuristic: '")
  return m.group(1).replace("/", "-")

def export(tree:Path, patches:Path, base:Base=V012) -> list[str]:
  """Write patches from tree's branch `orin` and point pr/<topic> at base + that topic's commits. Returns the branch names."""
  commits = git(tree, "rev-list", "--reverse", f"{base.tag}..{BRANCH}").split()
  with tempfile.TemporaryDirectory() as tmp:
    git(tree, *FORMAT_PATCH, "-o", tmp, f"{base.tag}..{BRANCH}")
    new = sorted(os.listdir(tmp))
    patches.mkdir(exist_ok=True)
    for old in patches.glob("*.patch"):
      if old.name not in new: old.unlink()
    for n in new:
      data = (Path(tmp)/n).read_bytes()
      if not (patches/n).exists() or (patches/n).read_bytes() != data: (patches/n).write_bytes(data)
  (patches/"series").write_text("".join(f"{n}\n" for n in new))
  # the branch now is what patches/ describes: a later apply must see it as up to date, not as unexported work
  (Path(git(tree, "rev-parse", "--absolute-git-dir"))/STAMP).write_text(f"{series_stamp(tree, patches, new, base)} {git(tree, 'rev-parse', BRANCH)}\n")
  # one branch a run of consecutive commits of a topic: a topic that comes back later builds on what came between (pr/<topic>-2, ...)
  by_topic: dict[str, list[str]] = {}
  last = None
  for c in commits:
    if (t:=topic(git(tree, "log", "-1", "--format=%s", c))) != last:
      name = t if t not in by_topic else f"{t}-{sum(k == t or k.startswith(f'{t}-') for k in by_topic) + 1}"
    by_topic.setdefault(name, []).append(c)
    last = t
  branches = []
  with tempfile.TemporaryDirectory() as wt:
    git(tree, "worktree", "add", "-q", "--detach", wt, base.tag)
    try:
      for t, cs in by_topic.items():
        # a topic that needs earlier ones is a stacked PR: it sits on the series up to its first commit
        for on in dict.fromkeys([base.tag, f"{cs[0]}^"]):
          git(Path(wt), "checkout", "-q", "--detach", on)
          if subprocess.run(["git", "-C", wt, "cherry-pick", *cs], capture_output=True, env={**os.environ, **GIT_ENV}).returncode == 0: break
          git(Path(wt), "cherry-pick", "--abort", check=False)
        else: raise SeriesError(f"topic {t} does not apply on the series before it")
        git(tree, "branch", "-f", f"pr/{t}", git(Path(wt), "rev-parse", "HEAD"))
        branches.append(f"pr/{t}" + ("" if on == base.tag else f" (stacked on {git(tree, 'log', '-1', '--format=%s', on)!r})"))
    finally: git(tree, "worktree", "remove", "--force", wt, check=False)
  return branches

def main() -> int:
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("cmd", choices=["apply", "export"])
  p.add_argument("--base", choices=list(BASES), default="master", help="the pinned tinygrad the series applies to")
  p.add_argument("--tree", type=Path, default=None, help="the tinygrad git working tree (default: the base's, see default_tree)")
  p.add_argument("--patches", type=Path, default=None, help="the series (default: the base's)")
  p.add_argument("--cache", type=Path, default=ROOT/"build"/"dl", help="where the pinned sdist is downloaded to")
  p.add_argument("--until", help="apply: only the patches before the first whose name holds this text")
  a = p.parse_args()
  base = BASES[a.base]
  tree, patches = (a.tree or default_tree(base)).resolve(), a.patches or base.patches
  try:
    if a.cmd == "apply":
      n = len(series_until(read_series(patches), a.until))
      print(f"{tree}: {'applied' if apply(tree, patches, a.cache, a.until, base) else 'up to date with'} {n} patches")
    else:
      branches = export(tree, patches, base)
      print(f"{patches}: {len(read_series(patches))} patches; branches: {', '.join(branches) or '(none)'}")
  except SeriesError as e:
    print(f"error: {e}", file=sys.stderr)
    return 1
  return 0

if __name__ == "__main__": sys.exit(main())
