# Interpreter speed on real tinygrad kernels: python -m orin_emu.ptx.bench (from the clone). Prints instructions/s per workload.
import numpy as np
from tinygrad import Tensor, dtypes
from orin_emu.ptx.testing import Runner
from orin_emu.ptx import sm

WORKLOADS = {
  "matmul 128x128x128 f32": (lambda a, b: a @ b, [(128, 128), (128, 128)], dtypes.float32),
  "matmul 64^3 f16 tensor cores": (lambda a, b: a @ b, [(64, 64), (64, 64)], dtypes.float16),
  "softmax 64x512": (lambda x: x.softmax(), [(64, 512)], dtypes.float32),
  "conv2d 4x16x32x32 3x3": (lambda x, w: x.conv2d(w, padding=1), [(4, 16, 32, 32), (16, 16, 3, 3)], dtypes.float32),
  "sin 65536 (NVRTC Payne-Hanek)": (lambda x: (x * 100).sin(), [(65536,)], dtypes.float32),
  "elementwise 1M": (lambda x: (x * 2 + 1).relu(), [(1 << 20,)], dtypes.float32),
}

def bench(kind:str):
  for name, (fn, shapes, dt) in WORKLOADS.items():
    ts = [Tensor.empty(*s, dtype=dt, device="NULL") for s in shapes]
    vals = [np.random.default_rng(0).standard_normal(s).astype(dt.fmt) for s in shapes]
    r = Runner(kind)
    r.realize(fn(*ts), dict(zip(ts, vals)))   # compile + warm the decode cache
    ts = [Tensor.empty(*s, dtype=dt, device="NULL") for s in shapes]
    i0, t0_ = sm.STATS['instructions'], sm.STATS['thread_instructions']
    r = Runner(kind)
    r.realize(fn(*ts), dict(zip(ts, vals)))
    dt_s = r.exec_s
    di, dti = sm.STATS['instructions'] - i0, sm.STATS['thread_instructions'] - t0_
    print(f"{kind:3s} {name:32s} {dt_s*1e3:8.1f} ms  {di/dt_s/1e3:8.1f} k instr/s  {dti/dt_s/1e6:8.2f} M thread-instr/s  ({r.launches} launches)")

if __name__ == "__main__":
  for kind in ("nv", "ptx"): bench(kind)
