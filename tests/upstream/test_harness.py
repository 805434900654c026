# The scaffolding that lets upstream's mock GPU run from the shared tarball's tree: the missing header is written once, excluded from git
# once, and upstream's own files are never overwritten.
import subprocess, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

KFD = "extra/hip_gpu_driver/kfd_ioctl.h"

def test_prepare_fills_only_what_is_missing(tmp_path):
  (tree:=tmp_path/"tree").mkdir()
  assert harness.prepare(tree) == [KFD] and "AMDKFD_IOC_GET_VERSION" in (tree/KFD).read_text()
  (tree/KFD).write_text("// upstream's own\n")
  assert harness.prepare(tree) == [] and (tree/KFD).read_text() == "// upstream's own\n"

def test_prepare_in_a_git_tree_excludes_what_it_writes_once(tmp_path):
  (tree:=tmp_path/"tree").mkdir()
  subprocess.run(["git", "init", "-q", str(tree)], check=True)
  (tree/".git"/"info"/"exclude").unlink(missing_ok=True)
  assert harness.prepare(tree) == [KFD]
  (tree/KFD).unlink()
  assert harness.prepare(tree) == [KFD]
  assert (tree/".git"/"info"/"exclude").read_text().splitlines() == [f"/{KFD}"]

def test_a_missing_source_header_is_named(tmp_path, monkeypatch):
  monkeypatch.setattr(harness, "STANDINS", {KFD: tmp_path/"nope.h"})
  try: harness.prepare(tmp_path)
  except RuntimeError as e: assert "linux-libc-dev" in str(e)
  else: raise AssertionError("no error for a missing source header")
