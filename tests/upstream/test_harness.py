# The scaffolding that lets upstream test_jit / test_hcq run from the sdist tree: stand-ins import, the 0.11.0 -> 0.12.0 adaptation
# of test_hcq touches only what changed, and upstream's own files are never overwritten.
import shutil, sys, subprocess
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

ROOT = Path(__file__).resolve().parents[2]

def test_adapt_hcq_keys_var_vals_by_name_and_moves_opt():
  src = ("from tinygrad.codegen.opt.kernel import Opt, OptOps\n"
         "var_vals = {virt_signal.base_buf.va_addr: sig.base_buf.va_addr, virt_val: d.timeline_value}\n"
         "q.submit(d, {sint_global[0]: 1, virt_local[2]: z})\n"
         "x = {a: b}\n")
  assert harness.adapt_hcq(src) == ("from tinygrad.codegen.opt import Opt, OptOps\n"
    "var_vals = {virt_signal.base_buf.va_addr.expr: sig.base_buf.va_addr, virt_val.expr: d.timeline_value}\n"
    "q.submit(d, {sint_global[0].expr: 1, virt_local[2].expr: z})\n"
    "x = {a: b}\n")

def test_prepare_fills_only_what_is_missing(tmp_path):
  (tree:=tmp_path/"tree").mkdir()
  (tree/"test").mkdir(); (tree/"test"/"helpers.py").write_text("# upstream's own\n")
  written = harness.prepare(tree, ROOT/"build"/"dl")
  assert "test/helpers.py" not in written and (tree/"test"/"helpers.py").read_text() == "# upstream's own\n"
  assert {"extra/models/unet.py", "test/device/test_hcq.py"} <= set(written)
  assert "virt_val.expr" in (tree/"test"/"device"/"test_hcq.py").read_text()

def test_prepare_brings_an_older_standin_up_to_date(tmp_path):
  harness.prepare(tree:=tmp_path/"tree", ROOT/"build"/"dl")
  (helpers:=tree/"test"/"helpers.py").write_text(harness.STANDIN_HEADER + " test/helpers.py, an older one\n")
  assert "test/helpers.py" in harness.prepare(tree, ROOT/"build"/"dl") and "def get_uops" in helpers.read_text()
  assert "test/helpers.py" not in harness.prepare(tree, ROOT/"build"/"dl")

def test_standins_import_and_resblock_runs(tmp_path):
  harness.prepare(tree:=tmp_path/"tree", ROOT/"build"/"dl")
  code = ("from test.helpers import assert_jit_cache_len, not_support_multi_device, REAL_DEV, needs_second_gpu, slow, get_uops\n"
          "from extra.models.unet import ResBlock\nfrom tinygrad import Tensor\n"
          "print(ResBlock(16, 24, 16)(Tensor.ones(4, 16, 8, 8), Tensor.ones(1, 24)).shape)")
  r = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, env={"CPU": "1", "PATH": "/usr/bin:/bin"})
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "(4, 16, 8, 8)"

def test_prepare_in_a_git_tree_excludes_what_it_writes_once(tmp_path):
  # a fresh clone's build/tinygrad is a git tree with nothing written yet: every path goes to .git/info/exclude, and only once
  (tree:=tmp_path/"tree").mkdir()
  subprocess.run(["git", "init", "-q", str(tree)], check=True)
  (tree/".git"/"info"/"exclude").unlink(missing_ok=True)
  written = harness.prepare(tree, ROOT/"build"/"dl")
  excluded = (tree/".git"/"info"/"exclude").read_text().splitlines()
  assert written and sorted(excluded) == sorted(f"/{w}" for w in written)
  (tree/"test"/"helpers.py").write_text(harness.STANDIN_HEADER + " test/helpers.py, an older one\n")
  assert harness.prepare(tree, ROOT/"build"/"dl") == ["test/helpers.py"]
  assert (tree/".git"/"info"/"exclude").read_text().splitlines() == excluded
