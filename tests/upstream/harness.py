"""Make the materialised tinygrad tree able to run upstream's test_jit and test_hcq when it came from the PyPI sdist.

The sdist lacks test/helpers.py, extra/models/unet.py and test/device/test_hcq.py; an initialised submodule has the real ones and
is left alone. test_hcq comes from the 0.11.0 sdist (the only PyPI release that ships it), adapted mechanically to the 0.12.0 API;
the adaptation is printed as a diff so the log shows exactly what changed."""
import difflib, hashlib, re, subprocess, sys, tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HCQ_SDIST, HCQ_SHA256 = "tinygrad-0.11.0.tar.gz", "d9d468a55906cc49a1b4df5b69be78a58ab4d15714b7f238f2b0876d2bc09bc1"
STANDIN_HEADER = "# Stand-in for upstream's"   # how each stand-in file begins
STANDINS = {"test/__init__.py": None, "test/helpers.py": "helpers.py", "extra/__init__.py": None, "extra/models/__init__.py": None,
            "extra/models/unet.py": "unet.py"}

def adapt_hcq(src:str) -> str:
  """0.11.0's test_hcq -> 0.12.0: var_vals are keyed by variable name (Variable.expr), Opt/OptOps moved to tinygrad.codegen.opt."""
  src = src.replace("from tinygrad.codegen.opt.kernel import Opt, OptOps", "from tinygrad.codegen.opt import Opt, OptOps")
  key = re.compile(r"([{,] *)([A-Za-z_][\w.]*(?:\[\d+\])?): ")
  return "".join(key.sub(r"\1\2.expr: ", l) if "var_vals = {" in l or ".submit(" in l else l for l in src.splitlines(keepends=True))

def fetch_hcq_sdist(cache:Path) -> Path:
  if not (f:=cache/HCQ_SDIST).exists():
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(cache), "tinygrad==0.11.0"], check=True)
  if (got:=hashlib.sha256(f.read_bytes()).hexdigest()) != HCQ_SHA256:
    f.unlink()
    raise RuntimeError(f"{HCQ_SDIST}: sha256 {got} does not match the pinned {HCQ_SHA256}")
  return f

def prepare(tree:Path, cache:Path) -> list[str]:
  """Write what the sdist tree lacks (never over upstream's own files; a stand-in written earlier is brought up to date); returns the
  paths written, for the log."""
  written = []
  for rel, standin in STANDINS.items():
    text = (HERE/"standins"/standin).read_text() if standin else ""
    if not (dst:=tree/rel).exists() or (standin and dst.read_text().startswith(STANDIN_HEADER) and dst.read_text() != text):
      dst.parent.mkdir(parents=True, exist_ok=True)
      dst.write_text(text)
      written.append(rel)
  if not (hcq:=tree/"test"/"device"/"test_hcq.py").exists():
    with tarfile.open(fetch_hcq_sdist(cache)) as tf: orig = tf.extractfile("tinygrad-0.11.0/test/test_hcq.py").read().decode()
    hcq.parent.mkdir(parents=True, exist_ok=True)
    hcq.write_text(new:=adapt_hcq(orig))
    print("".join(difflib.unified_diff(orig.splitlines(True), new.splitlines(True), "0.11.0/test/test_hcq.py", "test/device/test_hcq.py")))
    written.append("test/device/test_hcq.py")
  if written and (tree/".git").is_dir():   # keep `git status` of the patch tree clean: these are test scaffolding, not patch work
    ex = tree/".git"/"info"/"exclude"
    excluded = ex.read_text().splitlines() if ex.exists() else []
    with open(ex, "a") as f: f.writelines(f"/{w}\n" for w in written if f"/{w}" not in excluded)
  return written
