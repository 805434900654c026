# Issue #7's acceptance lines as a user types them: a fresh interpreter with DEV=NV (on the emulated Orin when ORIN_EMU=1 is set,
# as the suite runs here; on a Jetson's own GPU otherwise), nothing imported beforehand.
import os, subprocess, sys

def run(code:str) -> str:
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env={**os.environ, "DEV": "NV"})
  assert r.returncode == 0, r.stderr[-3000:]
  return r.stdout

def test_add_prints_5_7_9_on_tegraiface():
  out = run("from tinygrad import Tensor, Device; print((Tensor([1,2,3])+Tensor([4,5,6])).numpy()); print(type(Device['NV'].iface).__name__)")
  assert out.split("\n")[:2] == ["[5 7 9]", "TegraIface"], out

def test_matmul_matches_numpy():
  out = run("import numpy as np; from tinygrad import Tensor, Device; a, b = np.random.default_rng(0).standard_normal((2, 37, 53), np.float32); "
            "got = (Tensor(a) @ Tensor(b.T)).numpy(); print(Device.DEFAULT, np.abs(got - a @ b.T).max() < 1e-3)")
  assert out.split() == ["NV", "True"], out
