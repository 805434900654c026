import json, pathlib, subprocess, sys
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import bench  # noqa: E402

def run_bench(tmp_path, *args) -> dict:
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path), *args], check=True, timeout=600)
  return json.loads((tmp_path / "bench.json").read_text())

def test_cpu_run_measures_and_reports_skips(tmp_path):
  report = run_bench(tmp_path, "--only", "copy,alloc,launch")
  by_dev = {r["device"]: r for r in report["results"]}
  assert set(by_dev) == {"NV", "CUDA", "CPU"}
  for dev in ("NV", "CUDA"): assert by_dev[dev]["rows"] or by_dev[dev]["skipped"]  # a device that does not open says why
  ran = [r for r in report["results"] if r["rows"]]
  assert ran, "no device ran"
  rows = ran[0]["rows"]
  assert {r["suite"] for r in rows} == {"copy", "alloc", "launch"} and all(r["value"] > 0 for r in rows)
  assert {r["name"] for r in rows} >= {"copyin 1 MiB", "copyout 1 MiB", "alloc 4096 B", "launch p50", "launch p99"}
  md = (tmp_path / "bench.md").read_text()
  assert "| launch p50 | us |" in md

def test_llm_decode_on_the_tiny_gguf(tmp_path):
  report = run_bench(tmp_path, "--devices", "CPU", "--only", "llm", "--warmup", "2", "--tokens", "4", "--max-context", "64")
  (row,) = report["results"][0]["rows"]
  assert row["unit"] == "tok/s" and row["value"] > 0 and row["kernels_per_token"] > 1 and row["tokens"] == 4

def test_llm_decode_from_a_start_position(tmp_path):
  # a long-context step without prefilling the context: the JIT decodes from --start-pos over the fresh (zero) KV cache
  report = run_bench(tmp_path, "--devices", "CPU", "--only", "llm", "--warmup", "2", "--tokens", "4", "--max-context", "64", "--start-pos", "48")
  (row,) = report["results"][0]["rows"]
  assert row["value"] > 0 and row["start_pos"] == 48 and row["prompt_len"] == 0 and row["name"].endswith(" @48")

def test_table_and_plot_cover_every_device(tmp_path):
  results = [dict(device="CUDA", rows=[dict(suite="matmul", name="matmul half 256", value=1.5, unit="GFLOPS")]),
             dict(device="NV", rows=[dict(suite="matmul", name="matmul half 256", value=2.5, unit="GFLOPS")]),
             dict(device="CPU", skipped="a GPU ran", rows=[])]
  md = bench.table(results)
  assert "| matmul half 256 | GFLOPS | 1.5 | 2.5 |" in md and "skipped CPU: a GPU ran" in md
  pytest.importorskip("matplotlib")
  assert bench.plot(results, tmp_path / "p.png") is None and (tmp_path / "p.png").stat().st_size > 1000
