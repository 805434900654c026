# scripts/device_bench.sh on a machine like the GPU machine: the repo's scripts and patches as gather leaves them, no ../shared beside
import io, os, pathlib, shutil, subprocess, sys, tarfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

def test_a_master_build_is_made_from_the_carried_tarball(tmp_path):
  src, names = tmp_path/"src", (ROOT/"patches"/"master"/"series").read_text().split()[:3]
  shutil.copytree(ROOT/"scripts", src/"scripts"); (src/"patches").mkdir(); (src/"whl").mkdir()
  (pm:=src/"patches-master").mkdir()
  for n in names: shutil.copy(ROOT/"patches"/"master"/n, pm/n)
  (pm/"series").write_text("".join(f"{n}\n" for n in names))
  shutil.copy(ROOT.parent/"shared"/"upstream"/"tinygrad-a9069c17.tar.xz", src)
  # an earlier run's llama-bench: nothing is built
  with tarfile.open(src/"llama-bench.tar.xz.00", "w:xz") as tf:
    (info:=tarfile.TarInfo("bin/llama-bench")).size = 0
    tf.addfile(info, io.BytesIO(b""))
  env = {**os.environ, "PREP_ONLY": "1", "PATH": f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
  # --zoo: no default GGUF is generated
  cmd = ["bash", str(src/"scripts"/"device_bench.sh"), "run", str(src), str(tmp_path/"out"), "--zoo", "--build", f"m=master@{names[2][5:20]}"]
  out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
  assert "trees and GGUF ready" in out.stdout and not (tmp_path/"devbench"/"llama-3.2-1b-q6_k.gguf").exists(), out.stdout + out.stderr
  tree = tmp_path / "devbench" / "trees" / ("master_" + "".join(c if c.isalnum() else "_" for c in names[2][5:20]))
  count = subprocess.run(["git", "-C", str(tree), "rev-list", "--count", "upstream-a9069c17..orin"], capture_output=True, text=True)
  assert count.stdout.strip() == "2"
