# The patch pipeline: each series applies to the pinned base, export reproduces patches/ byte for byte, one branch per topic,
# and a patch that no longer applies stops everything with its name.
import importlib.util, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("series", ROOT/"scripts"/"series.py")
series = importlib.util.module_from_spec(spec); spec.loader.exec_module(series)
CACHE = ROOT/"build"/"dl"

@pytest.fixture(scope="module")
def base_tree(tmp_path_factory) -> Path:
  series.materialise(tree:=tmp_path_factory.mktemp("base")/"tinygrad", CACHE)
  return tree

@pytest.fixture
def tree(base_tree, tmp_path) -> Path:
  shutil.copytree(base_tree, t:=tmp_path/"tinygrad", symlinks=True)
  return t

def commit(tree:Path, path:str, old:str, new:str, subject:str):
  (f:=tree/path).write_text(f.read_text().replace(old, new, 1))
  series.git(tree, "commit", "-q", "-am", f"{subject}\n\nWhy: a test of the patch pipeline.")

@pytest.fixture
def two_topics(base_tree, tmp_path) -> Path:
  """patches/ exported from a tree with one commit in each of two topics."""
  shutil.copytree(base_tree, tree:=tmp_path/"src", symlinks=True)
  commit(tree, "tinygrad/codegen/opt/heuristic.py", "def hand_coded_optimizations", "# pipeline test\ndef hand_coded_optimizations", "opt/heuristic: mark")
  commit(tree, "tinygrad/renderer/ptx.py", "class PTXRenderer", "# pipeline test\nclass PTXRenderer", "renderer/ptx: mark")
  series.export(tree, p:=tmp_path/"patches")
  return p

def files(d:Path) -> dict[str, bytes]: return {f.name: f.read_bytes() for f in sorted(d.iterdir())}

def test_repo_series_applies_and_exports_byte_for_byte(tree, tmp_path):
  series.apply(tree, series.V012.patches, CACHE)
  assert int(series.git(tree, "rev-list", "--count", "v0.12.0..orin")) == len(series.read_series(series.V012.patches))
  series.export(tree, out:=tmp_path/"out")
  want = {n: (series.V012.patches/n).read_bytes() for n in series.read_series(series.V012.patches)}
  assert files(out) == {**want, "series": "".join(f"{n}\n" for n in want).encode()}

def test_roundtrip_and_topic_branches(two_topics, base_tree, tmp_path):
  shutil.copytree(base_tree, t2:=tmp_path/"fresh", symlinks=True)
  assert series.apply(t2, two_topics, CACHE)
  series.export(t2, again:=tmp_path/"again")
  assert files(again) == files(two_topics)
  assert (two_topics/"series").read_text().splitlines() == ["0001-opt-heuristic-mark.patch", "0002-renderer-ptx-mark.patch"]
  for br, path in [("pr/opt-heuristic", "tinygrad/codegen/opt/heuristic.py"), ("pr/renderer-ptx", "tinygrad/renderer/ptx.py")]:
    assert series.git(t2, "rev-list", "--count", f"v0.12.0..{br}") == "1"   # each topic branch sits on the upstream base alone
    assert series.git(t2, "diff", "--name-only", f"v0.12.0..{br}") == path

def test_topic_that_needs_an_earlier_one_is_stacked(tree, tmp_path):
  commit(tree, "tinygrad/renderer/ptx.py", "class PTXRenderer", "# first\nclass PTXRenderer", "renderer/ptx: first")
  commit(tree, "tinygrad/renderer/ptx.py", "# first", "# first, then graph", "runtime/graph: on top of ptx")
  branches = series.export(tree, tmp_path/"p")
  assert branches == ["pr/renderer-ptx", "pr/runtime-graph (stacked on 'renderer/ptx: first')"]
  assert series.git(tree, "rev-list", "--count", "v0.12.0..pr/runtime-graph") == "2"

def test_apply_is_idempotent(two_topics, tree):
  assert series.apply(tree, two_topics, CACHE) is True
  head = series.git(tree, "rev-parse", "HEAD")
  assert series.apply(tree, two_topics, CACHE) is False and series.git(tree, "rev-parse", "HEAD") == head

def test_apply_after_export_is_up_to_date(two_topics, tree, tmp_path):
  series.apply(tree, two_topics, CACHE)
  commit(tree, "tinygrad/renderer/ptx.py", "# pipeline test", "# pipeline test, more", "renderer/ptx: more")
  series.export(tree, two_topics)
  assert series.apply(tree, two_topics, CACHE) is False and series.git(tree, "log", "-1", "--format=%s") == "renderer/ptx: more"

def test_apply_reproduces_commit_ids(two_topics, base_tree, tmp_path):
  heads = []
  for n in "ab":
    shutil.copytree(base_tree, t:=tmp_path/n, symlinks=True)
    series.apply(t, two_topics, CACHE)
    heads.append(series.git(t, "rev-parse", "HEAD"))
  assert heads[0] == heads[1]

def test_broken_patch_stops_setup_with_its_name(two_topics, base_tree, tmp_path):
  p = two_topics/"0002-renderer-ptx-mark.patch"
  p.write_text(p.read_text().replace("class PTXRenderer", "class NoSuchRenderer"))
  shutil.copytree(base_tree, t:=tmp_path/"t", symlinks=True)
  r = subprocess.run([sys.executable, ROOT/"scripts"/"series.py", "apply", "--base", "v0.12.0", "--tree", t, "--patches", two_topics,
                      "--cache", CACHE], capture_output=True, text=True)
  assert r.returncode == 1 and "patch 0002-renderer-ptx-mark.patch does not apply" in r.stderr
  assert series.git(t, "log", "-1", "--format=%s") == "opt/heuristic: mark"   # stopped right after the last good patch

def test_a_topic_that_comes_back_gets_a_branch_of_its_own(tree, tmp_path):
  commit(tree, "tinygrad/renderer/ptx.py", "class PTXRenderer", "# first\nclass PTXRenderer", "renderer/ptx: first")
  commit(tree, "tinygrad/renderer/ptx.py", "# first", "# first, then graph", "runtime/graph: on top of ptx")
  commit(tree, "tinygrad/renderer/ptx.py", "# first, then graph", "# first, then graph, then ptx", "renderer/ptx: on top of graph")
  assert series.export(tree, tmp_path/"p") == ["pr/renderer-ptx", "pr/runtime-graph (stacked on 'renderer/ptx: first')",
                                              "pr/renderer-ptx-2 (stacked on 'runtime/graph: on top of ptx')"]
  assert series.git(tree, "rev-list", "--count", "v0.12.0..pr/renderer-ptx-2") == "3"

def test_series_naming_a_missing_patch_is_an_error(two_topics, tree):
  (two_topics/"series").write_text("0001-opt-heuristic-mark.patch\n0003-gone.patch\n")
  with pytest.raises(series.SeriesError, match="0003-gone.patch"): series.apply(tree, two_topics, CACHE)

def test_unexported_work_is_never_thrown_away(two_topics, tree):
  series.apply(tree, two_topics, CACHE)
  commit(tree, "tinygrad/renderer/ptx.py", "# pipeline test", "# pipeline test, more", "renderer/ptx: more")
  (two_topics/"series").write_text("0001-opt-heuristic-mark.patch\n")
  with pytest.raises(series.SeriesError, match="export-patches"): series.apply(tree, two_topics, CACHE)
  assert series.git(tree, "log", "-1", "--format=%s") == "renderer/ptx: more"

def test_commit_without_topic_prefix_is_refused(tree, tmp_path):
  commit(tree, "tinygrad/renderer/ptx.py", "class PTXRenderer", "# x\nclass PTXRenderer", "fix things")
  with pytest.raises(series.SeriesError, match="topic prefix"): series.export(tree, tmp_path/"p")

def test_sdist_is_hash_checked(tmp_path):
  (cache:=tmp_path/"dl").mkdir()
  (cache/series.V012.archive).write_bytes(bytes([(data:=(CACHE/series.V012.archive).read_bytes())[0] ^ 1]) + data[1:])
  with pytest.raises(series.SeriesError, match="does not match the pinned"): series.V012.fetch(cache)
  assert not (cache/series.V012.archive).exists()

def test_master_tarball_is_hash_checked(tmp_path, monkeypatch):
  (up:=tmp_path/"shared"/"upstream").mkdir(parents=True)
  data = (ROOT.parent/"shared"/"upstream"/(name:=series.BASES["master"].archive)).read_bytes()
  (up/name).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
  monkeypatch.setattr(series, "ROOT", tmp_path/"repo")
  with pytest.raises(series.SeriesError, match="does not match the pinned"): series.BASES["master"].fetch(CACHE)
  (up/name).unlink()
  with pytest.raises(series.SeriesError, match="is missing"): series.BASES["master"].fetch(CACHE)
  assert (ROOT.parent/"shared"/"upstream"/name).read_bytes() == data   # the shared copy is never touched

def test_master_tarball_from_the_cache_where_there_is_no_shared(tmp_path, monkeypatch):
  # the GPU machine has the repo without ../shared beside it: scripts/device_bench.sh carries the tarball in its cache
  monkeypatch.setattr(series, "ROOT", tmp_path/"repo")
  (cache:=tmp_path/"src").mkdir()
  data = (ROOT.parent/"shared"/"upstream"/(name:=series.BASES["master"].archive)).read_bytes()
  (cache/name).write_bytes(data)
  assert series.BASES["master"].fetch(cache) == cache/name
  (cache/name).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
  with pytest.raises(series.SeriesError, match="does not match the pinned"): series.BASES["master"].fetch(cache)
  assert not (cache/name).exists()

def test_master_series_applies_and_exports_byte_for_byte(tmp_path):
  base = series.BASES["master"]
  series.apply(tree:=tmp_path/"tinygrad", base.patches, CACHE, base=base)
  assert series.git(tree, "log", "-1", "--format=%s", base.tag) == "tinygrad upstream-a9069c17 (tinygrad-a9069c17.tar.xz)"
  assert int(series.git(tree, "rev-list", "--count", f"{base.tag}..orin")) == len(names:=series.read_series(base.patches))
  series.export(tree, out:=tmp_path/"out", base)
  want = {n: (base.patches/n).read_bytes() for n in names}
  assert files(out) == {**want, "series": "".join(f"{n}\n" for n in want).encode()}

def test_apply_until_stops_before_the_named_patch(two_topics, tree):
  # a tree to measure a patch against: the series before it (scripts/device_bench.sh's series@TEXT builds)
  assert series.apply(tree, two_topics, CACHE, until="renderer-ptx")
  assert series.git(tree, "log", "--format=%s", "v0.12.0..orin").splitlines() == ["opt/heuristic: mark"]
  assert series.apply(tree, two_topics, CACHE) and series.git(tree, "rev-list", "--count", "v0.12.0..orin") == "2"   # then the whole series
  with pytest.raises(series.SeriesError, match="no patch in the series has 'nosuch'"): series.apply(tree, two_topics, CACHE, until="nosuch")
