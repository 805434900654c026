# runtime/autogen/nvgpu.py is exactly what autogen's nvgpu case writes from the pinned L4T r36.4 sources: regenerate it into a scratch root and
# compare byte for byte. Sources: git mirrors of OE4T/linux-nvgpu and OE4T/linux-nv-oot in L4T_MIRRORS or a .mirror folder above this file
# (<dir>/OE4T+linux-nvgpu/repo, ...), packed into a scratch fetch cache as the pinned tarballs; else the tarballs from GitHub, as CI fetches them.
import hashlib, os, pathlib, subprocess, urllib.request, pytest
import tinygrad.helpers as helpers, tinygrad.runtime.autogen as autogen

# what the nvgpu case reads from each tree
PATHS = {"linux-nvgpu": ["include/uapi/linux"], "linux-nv-oot": ["include/uapi/linux/nvmap.h", "include/linux/nvmap.h"]}
URLS = {r: f"https://github.com/OE4T/{r}/archive/{sha}.tar.gz" for r, sha in autogen.l4t_src.items()}

def seed_cache(cache:pathlib.Path) -> bool:
  for d in [os.environ.get("L4T_MIRRORS", "")] + [str(p / ".mirror") for p in pathlib.Path(__file__).resolve().parents]:
    if not d or not all((pathlib.Path(d) / f"OE4T+{r}" / "repo").is_dir() for r in URLS): continue
    (dl:=cache / "downloads").mkdir(parents=True)
    for r, sha in autogen.l4t_src.items():
      # fetch keeps a .gz url gunzipped, named by the md5 of the url; GitHub's archive roots the tree at <repo>-<sha>/
      out = dl / f"{hashlib.md5(URLS[r].encode()).hexdigest()}.gunzip"
      subprocess.run(["git", "-C", f"{d}/OE4T+{r}/repo", "archive", "--format=tar", f"--prefix={r}-{sha}/", "-o", out, sha, *PATHS[r]], check=True)
    return True
  return False

def test_regenerating_reproduces_the_committed_file(tmp_path, monkeypatch):
  from tinygrad.runtime.autogen import libclang
  try: libclang.dll.clang_getClangVersion
  except AttributeError as e: pytest.skip(f"no libclang to generate with (set LIBCLANG_PATH): {e}")
  if seed_cache(tmp_path / "cache"): monkeypatch.setattr(helpers, "cache_dir", str(tmp_path / "cache"))
  else:
    try:
      for url in URLS.values(): urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5)
    except OSError as e: pytest.skip(f"no L4T r36.4 sources: set L4T_MIRRORS to OE4T git mirrors or reach github ({e})")
  (out:=tmp_path / "root" / "tinygrad" / "runtime" / "autogen").mkdir(parents=True)
  monkeypatch.setattr(autogen, "root", tmp_path / "root")
  # load() writes nvgpu.py under the scratch root, where it does not exist yet, then imports the committed one
  committed = autogen.__getattr__("nvgpu")
  assert (out / "nvgpu.py").read_bytes() == pathlib.Path(committed.__file__).read_bytes()
