# scripts/ncu_step.py summary: ncu's CSV (a row a metric of a kernel launch) as time a kernel name, its launches summed, slowest first.
import sys, pathlib
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
