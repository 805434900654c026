"""overlays/: the tinygrad Nix builds is upstream's commit a9069c17 plus patches/master/series in order, with its library
lookups substituted by CUDA 12.6 / driver / libc paths."""
import pathlib, shutil, subprocess, tarfile, tomllib
import pytest

# the NAR hash of `git archive a9069c17`, what fetchFromGitHub unpacks (test_src_hash_is_the_commits_tree recomputes it)
SRC_HASH = "sha256-DPzJ7TwwdslMjY70RrBB1MGB/g7hERgkJPKs5fhGoS8="
SERIES = "patches/master"   # the series the overlay applies

def overlay(nix, tree:pathlib.Path) -> dict: return nix.eval(tree/"tests/nix/eval-overlay.nix", root=tree)

def series_names(series:pathlib.Path) -> list[str]:
  """a series file by the project's convention (one name a line, '#' comments, blank lines), independent of series.nix"""
  return [n for n in (line.split("#", 1)[0].strip() for line in series.read_text().splitlines()) if n]

def write_patches(tree:pathlib.Path, series:str, files:list[str]):
  shutil.rmtree(tree/SERIES, ignore_errors=True)
  (tree/SERIES).mkdir(parents=True)
  (tree/SERIES/"series").write_text(series)
  for f in files: (tree/SERIES/f).write_text(f"From: fixture\nSubject: [PATCH] {f}\n\n---\n")

def test_src_is_the_master_series_base(nix, tree, series):
  o = overlay(nix, tree)
  assert o["src"] == {"owner": "tinygrad", "repo": "tinygrad", "rev": series.BASES["master"].rev, "hash": SRC_HASH}
  assert o["version"] == "0.13.0-unstable-2026-08-22"

def test_src_hash_is_the_commits_tree(nix, series, upstream_git, tmp_path):
  git = subprocess.run(["git", "-C", str(upstream_git), "archive", series.BASES["master"].rev], capture_output=True, check=True)
  (src:=tmp_path/"src").mkdir()
  subprocess.run(["tar", "x", "-C", str(src)], input=git.stdout, check=True)
  assert nix.run("nix", "hash", "path", str(src)).strip() == SRC_HASH

def test_patch_list_equals_patches_series(nix, tree):
  applied = overlay(nix, tree)["patches"]
  series = tree/SERIES/"series"
  # no series on this branch means nothing to apply; with one, Nix applies exactly it, in its order
  assert applied == (series_names(series) if series.exists() else [])

def test_series_comments_blank_lines_and_order(nix, fresh_tree):
  write_patches(fresh_tree, "# codegen\n0002-b.patch\n\n  0001-a.patch   # applied second\n#0003-c.patch\n0010-d.patch\n",
                ["0001-a.patch", "0002-b.patch", "0003-c.patch", "0010-d.patch"])
  assert overlay(nix, fresh_tree)["patches"] == ["0002-b.patch", "0001-a.patch", "0010-d.patch"]
  assert series_names(fresh_tree/SERIES/"series") == ["0002-b.patch", "0001-a.patch", "0010-d.patch"]

def test_series_naming_a_missing_patch_stops_evaluation(nix, fresh_tree):
  write_patches(fresh_tree, "0001-a.patch\n0002-gone.patch\n", ["0001-a.patch"])
  with pytest.raises(RuntimeError, match=f"{SERIES}/series lists 0002-gone.patch"): overlay(nix, fresh_tree)

def test_library_lookups_point_at_cuda_12_6_driver_and_libc(nix, tree):
  o = overlay(nix, tree)
  subs = {f: dict(pairs) for f, pairs in o["substitutions"].items()}
  assert subs["tinygrad/runtime/autogen/cuda.py"]["DLL('cuda', 'nvcuda' if WIN else 'cuda')"] == "DLL('cuda', '/run/opengl-driver/lib/libcuda.so')"
  assert "/stub/cuda_nvrtc-12.6-lib/lib/libnvrtc.so" in subs["tinygrad/runtime/autogen/nvrtc.py"]["DLL('nvrtc', 'nvrtc',"]
  assert "/stub/libnvjitlink-12.6-lib/lib/libnvJitLink.so" in subs["tinygrad/runtime/autogen/nvjitlink.py"]["DLL('nvjitlink', 'nvJitLink',"]
  assert "/stub/glibc-lib/lib/libc.so.6" in subs["tinygrad/runtime/autogen/libc.py"]["DLL('libc', 'c',"]
  assert subs["tinygrad/runtime/support/compiler_cuda.py"]['getenv("CUDA_PATH", "")'] == 'getenv("CUDA_PATH", "/stub/cuda_cudart-12.6-include")'
  assert subs["tinygrad/runtime/support/compiler_cpu.py"]["getenv(\"CC\", 'clang')"] == "getenv(\"CC\", '/stub/clang/bin/clang')"
  assert o["pythonImportsCheck"] == ["tinygrad", "tinygrad.runtime.ops_nv", "tinygrad.runtime.ops_cuda", "tinygrad.llm.model"]
  assert o["doCheck"] is False, "the suites run as flake checks, not inside the package build"

def test_runtime_env_for_editable_trees(nix, tree):
  o = overlay(nix, tree)
  env = o["runtimeEnv"]
  assert env["NVRTC_PATH"] == "/stub/cuda_nvrtc-12.6-lib/lib/libnvrtc.so" and env["LIBC_PATH"] == "/stub/glibc-lib/lib/libc.so.6"
  assert env["NVJITLINK_PATH"] == "/stub/libnvjitlink-12.6-lib/lib/libnvJitLink.so"
  # CUDA_PATH: -I$CUDA_PATH/include for NVRTC and the directory tinygrad searches for libcuda.so
  assert env["CUDA_PATH"].startswith("/nix/store/") and env["CUDA_PATH"].endswith("-tinygrad-orin-cuda-root")
  assert "ln -s /stub/cuda_cudart-12.6-include/include $out/include" in o["cudaRoot"]
  assert "ln -s /run/opengl-driver/lib/libcuda.so $out/libcuda.so" in o["cudaRoot"]

def patch_source(nix, tree:pathlib.Path, upstream:pathlib.Path, tmp_path:pathlib.Path) -> pathlib.Path:
  """Nix's patchPhase (GNU patch -p1, series order) on upstream's tree"""
  with tarfile.open(upstream) as tf: tf.extractall(tmp_path, filter="data")
  work = tmp_path/"tinygrad-a9069c17"
  for name in overlay(nix, tree)["patches"]:
    r = subprocess.run(["patch", "-p1", "--batch", "-i", str(tree/SERIES/name)], cwd=work, capture_output=True, text=True)
    assert r.returncode == 0, f"{name} does not apply with GNU patch:\n{r.stdout}{r.stderr}"
  return work

def test_series_and_post_patch_apply_to_the_source_as_in_nix_build(nix, tree, upstream, tmp_path):
  """the series, then postPatch with a strict substituteInPlace"""
  work = patch_source(nix, tree, upstream, tmp_path)
  strict = ('substituteInPlace() { f=$1; shift; while [ $# -gt 0 ]; do [ "$1" = --replace-fail ] || return 2; python3 -c '
            '"import sys; p,a,b=sys.argv[1:]; s=open(p).read(); assert a in s, (p, a); open(p, \'w\').write(s.replace(a, b))" "$f" "$2" "$3"'
            ' || return 1; shift 3; done; }\n')
  o = overlay(nix, tree)
  r = subprocess.run(["bash", "-euc", strict + o["postPatch"]], cwd=work, capture_output=True, text=True)
  assert r.returncode == 0, f"postPatch fails after the series:\n{r.stderr}"
  for f, pairs in o["substitutions"].items():
    text = (work/f).read_text()
    assert all(new in text for _, new in pairs), f

def test_the_wheel_holds_every_package_of_the_patched_tree(nix, tree, upstream, tmp_path):
  # setuptools packs only the packages pyproject.toml lists: one left out is missing from the package Nix builds (and its import check fails)
  work = patch_source(nix, tree, upstream, tmp_path)
  listed = set(tomllib.loads((work/"pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
  found = {str(p.parent.relative_to(work)).replace("/", ".") for p in (work/"tinygrad").rglob("*.py")}
  assert found - listed == set()
