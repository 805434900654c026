# scripts/ncu_step.py summary: ncu's CSV (a row a metric of a kernel launch) as time a kernel name, its launches summed, slowest first.
import json, os, subprocess, sys, pathlib, pytest
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from ncu_step import summary

HDR = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC",
       "Section Name", "Metric Name", "Metric Unit", "Metric Value"]

def rows(i:int, name:str, ns:str, grid:str) -> list[list[str]]:
  metrics = {"gpu__time_duration.sum": ns, "launch__grid_size": grid, "launch__block_size": "256", "launch__registers_per_thread": "32"}
  return [[str(i), "1", "python3", "h", name, "1", "7", "(256, 1, 1)", "(1, 1, 1)", "0", "9.0", "s", m, "", v] for m, v in metrics.items()]

def test_summary_sums_launches_of_a_name(tmp_path):
  lines = [HDR, *rows(0, "rms_norm_2048", "4,900", "1"), *rows(1, "r_4096_8(float*, half*)", "16,780", "4,096"), *rows(2, "rms_norm_2048", "5,100", "1")]
  (p := tmp_path / "step.csv").write_text("==PROF== Connected\n" + "\n".join(",".join(f'"{c}"' for c in r) for r in lines) + "\n")
  s = summary(str(p))
  assert (s["kernels"], s["us"]) == (3, 26.8)
  assert list(s["by_kernel"]) == ["r_4096_8", "rms_norm_2048"]
  assert s["by_kernel"]["rms_norm_2048"] == dict(launches=2, us=10.0, grid="1", block="256", regs="32")

@pytest.mark.parametrize("prompt", [0, 40])
def test_run_profiles_one_step_of_masters_app(tmp_path, prompt):
  # the step (or the prompt) between cuProfilerStart and Stop launches kernels: on the CPU with a stand-in libcuda, through master's model
  code = f"""
import sys, types; sys.path.insert(0, {str(pathlib.Path(__file__).resolve().parents[2] / "scripts")!r})
import ncu_step, synth_gguf
from tinygrad import GlobalCounters
seen = []
ncu_step.ctypes = types.SimpleNamespace(CDLL=lambda name: types.SimpleNamespace(cuProfilerStart=lambda: seen.append(GlobalCounters.kernel_count),
                                                                              cuProfilerStop=lambda: seen.append(GlobalCounters.kernel_count)))
ncu_step.run(str(synth_gguf.write_llama_gguf(pathlib.Path({str(tmp_path)!r}) / "t.gguf", "tiny")), dev="CPU", prompt={prompt})
assert len(seen) == 2 and seen[1] > seen[0], seen
"""
  env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2] / "build" / "master" / "tinygrad")}
  r = subprocess.run([sys.executable, "-c", "import pathlib\n" + code], check=True, timeout=600, env=env, capture_output=True, text=True)
  assert r.stderr.count(f"prompt {prompt} run") == (5 if prompt else 0), r.stderr

def test_summary_without_launch_metrics_takes_ncus_launch_columns(tmp_path):
  lines = [HDR, ["0", "1", "python3", "h", "attention_32_8_64", "1", "7", "(8, 2, 16)", "(4, 8, 1)", "0", "9.0", "s", "gpu__time_duration.sum",
                 "ns", "6,690"]]
  (p := tmp_path / "step.csv").write_text("\n".join(",".join(f'"{c}"' for c in r) for r in lines) + "\n")
  assert summary(str(p))["by_kernel"]["attention_32_8_64"] == dict(launches=1, us=6.69, grid="(4, 8, 1)", block="(8, 2, 16)", regs="-")

def test_summary_writes_its_json_when_its_reader_stops_early(tmp_path):
  # `summary ... --json F | head` on the device: the printout outgrows the pipe after head has gone, the JSON is still written
  lines = [HDR, *[r for i in range(5000) for r in rows(i, f"kernel_{i}", "1,000", "1")]]
  (p := tmp_path / "step.csv").write_text("\n".join(",".join(f'"{c}"' for c in r) for r in lines) + "\n")
  script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ncu_step.py"
  r = subprocess.run(f"{sys.executable} {script} summary {p} --json {tmp_path / 's.json'} | head -2", shell=True, timeout=120, capture_output=True, text=True)
  assert len(json.loads((tmp_path / "s.json").read_text())[0]["by_kernel"]) == 5000
  # and it ends as head's other writers do, without a traceback
  assert len(r.stdout.splitlines()) == 2 and "Traceback" not in r.stderr
