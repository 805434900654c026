# runtime/autogen/nvgpu.py is exactly what autogen's nvgpu case generates from the pinned L4T r36.4 sources (patch 0015): regenerate it
# into a scratch root and compare byte for byte. Sources, first found: NVGPU_SRC and NVIDIA_OOT_SRC (trees); git mirrors of OE4T/linux-nvgpu
# and OE4T/linux-nv-oot in L4T_MIRRORS or a .mirror folder above the clone (<dir>/OE4T+linux-nvgpu/repo, ...); the pinned tarballs from GitHub.
import glob, os, pathlib, subprocess, sys, urllib.request, pytest
from tinygrad.runtime.autogen import l4t_src

SRCS = {"NVGPU_SRC": ("OE4T+linux-nvgpu", "e2d19ad097705759f616989606ca97b8480aff8e", ["include/uapi/linux"]),
        "NVIDIA_OOT_SRC": ("OE4T+linux-nv-oot", "ff0c2e64e93aec256aba6325e6c6de4e12cae278", ["include/uapi/linux/nvmap.h", "include/linux/nvmap.h"])}

def sources(tmp:pathlib.Path) -> dict[str, str]:
  if all(os.environ.get(k) for k in SRCS): return {k: os.environ[k] for k in SRCS}
  for d in [os.environ.get("L4T_MIRRORS", "")] + [str(p / ".mirror") for p in pathlib.Path(__file__).resolve().parents[1:]]:
    if d and all((pathlib.Path(d) / repo / "repo").is_dir() for repo, _, _ in SRCS.values()):
      for k, (repo, commit, paths) in SRCS.items():
        (tmp / k).mkdir()
        tar = subprocess.run(["git", "-C", f"{d}/{repo}/repo", "archive", commit, *paths], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp / k], input=tar, check=True)
      return {k: str(tmp / k) for k in SRCS}
  try:
    for url in l4t_src.values(): urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5)
  except OSError as e: pytest.skip(f"no L4T r36.4 sources: set NVGPU_SRC and NVIDIA_OOT_SRC or L4T_MIRRORS, or allow access to github.com ({e})")
  return {}  # the generator fetches the pinned tarballs

def libclang() -> dict[str, str]:
  if os.environ.get("LIBCLANG_PATH"): return {}
  # Debian names it libclang-<version>.so.1, which tinygrad's DLL lookup for 'clang' does not match
  if not (found:=sorted(glob.glob("/usr/lib/llvm-*/lib/libclang.so.1") + glob.glob("/usr/lib/*/libclang-*.so.1"))):
    pytest.skip("no libclang to generate with (Debian: apt-get install libclang1-14)")
  return {"LIBCLANG_PATH": found[-1]}

def test_regenerating_reproduces_the_committed_file(tmp_path):
  env = {**os.environ, **sources(tmp_path), **libclang()}
  (out:=tmp_path / "root" / "tinygrad" / "runtime" / "autogen").mkdir(parents=True)
  # libclang's own bindings load from the real root first; then load() writes nvgpu.py under the scratch root, where it does not exist yet
  code = "import sys, pathlib, tinygrad.runtime.support.autogen, tinygrad.runtime.autogen as a; a.root = pathlib.Path(sys.argv[1]); a.nvgpu"
  r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "root")], env=env, capture_output=True, text=True)
  assert r.returncode == 0, r.stderr[-3000:]
  from tinygrad.runtime.autogen import nvgpu
  assert (out / "nvgpu.py").read_bytes() == pathlib.Path(nvgpu.__file__).read_bytes()
