# scripts/matmul_tiles.py: a tile's line as run prints it, and table's markdown from such lines (the Opt reprs of earlier logs too)
import os, pathlib, subprocess, sys
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from matmul_tiles import LINE, table

def test_run_prints_a_line_a_shape_with_the_opts_asked(tmp_path):
  env = {**os.environ, "DEV": "NULL:CUDA:sm_90", "NULL_ALLOW_COPYOUT": "1", "PYTHONPATH": str(ROOT / "build" / "master" / "tinygrad")}
  opts = "TC:0:(-1,0,1) UPCAST:0:4 UPCAST:1:8 LOCAL:1:2"
  out = subprocess.run([sys.executable, str(ROOT / "scripts" / "matmul_tiles.py"), "run", "128x64x256", "128x64x512", "--opts", opts],
                       env=env, capture_output=True, text=True, check=True).stdout
  lines = [LINE.search(l) for l in out.splitlines()]
  assert [(m[1], m[2], m[6]) for m in lines if m] == [("all", s, opts) for s in ("128x64x256", "128x64x512")]

def test_table_puts_a_tile_in_a_column_and_each_run_in_its_cell(tmp_path):
  (log:=tmp_path / "a.log").write_text(
    "sms=8 MM 512x2048x2048 BEAM=0   1004.6 us    4.3 TFLOPS err 0.00793 opts [Opt(op=OptOps.TC, axis=0, arg=(-1, 0, 1)), "
    "Opt(op=OptOps.UPCAST, axis=0, arg=4), Opt(op=OptOps.UPCAST, axis=1, arg=4), Opt(op=OptOps.LOCAL, axis=1, arg=4)]\n"
    "sms=8 MM 512x2048x2048 BEAM=0    603.9 us    7.1 TFLOPS err 0.008 opts TC:0:(-1,0,1) UPCAST:0:4 UPCAST:1:8 LOCAL:1:4\n"
    "sms=all BEAM_SEARCH: final tm=11.10us\nsms=all MM 512x2048x512 BEAM=2    267.3 us    4.0 TFLOPS err 0.0 opts ?\n"
    "sms=8 MM 512x2048x2048 BEAM=0    989.0 us    4.4 TFLOPS err 0.008 opts TC:0:(-1,0,1) UPCAST:0:4 UPCAST:1:4 LOCAL:1:4\n")
  assert table([str(log)]).splitlines() == [
    "| SMs | T x K x N | `UPCAST:0:4 UPCAST:1:4 LOCAL:1:4` | `UPCAST:0:4 UPCAST:1:8 LOCAL:1:4` |", "| --- | --- | ---: | ---: |",
    "| 8 | 512x2048x2048 | 4.3 / 4.4 | 7.1 |"]
