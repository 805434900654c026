# Real tinygrad kernels, rendered for sm_87 by both renderers, compiled by NVRTC / nvJitLink, executed on the SM room and
# compared with the same computation on tinygrad's CPU device (and numpy where it is plain).
import numpy as np, pytest
from tinygrad import Tensor, Device, dtypes
from orin_emu.ptx.testing import Runner

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # edge-value inputs (inf, NaN) are cast on purpose

rng = np.random.default_rng(0)
def normal(*s): return rng.standard_normal(s).astype(np.float32)
def positive(*s): return (np.abs(rng.standard_normal(s)) * 3 + 0.1).astype(np.float32)
def ints(lo, hi, dt): return lambda *s: rng.integers(lo, hi, s).astype(dt)

F32, F16, F64, BF16 = dtypes.float32, dtypes.float16, dtypes.float64, dtypes.bfloat16
# name: (input shapes, input dtype, input generator, function, tolerance, renderers); NUMPY overrides the CPU-device reference
# where tinygrad's CPU path is the less accurate one (its software sin for huge f64 arguments) or cannot build (bf16 on clang)
CASES = {
  **{f"{op}_{dt.name}": ([(37,)], dt, positive if op in ("log", "sqrt", "log2", "reciprocal") else normal, (lambda op: lambda x: getattr(x, op)())(op),
                         {F32: 2e-6, F16: 2e-3, F64: 1e-12}[dt], ("nv", "ptx"))
     for op in ("sin", "cos", "exp", "log", "sqrt", "reciprocal", "exp2", "log2", "tanh", "sigmoid", "relu", "neg") for dt in (F32, F16, F64)},
  "sin_large": ([(64,)], F32, normal, lambda x: (x * 3000).sin(), 2e-6, ("nv", "ptx")),
  "sin_large_f64": ([(64,)], F64, normal, lambda x: (x * 1e7).sin(), 1e-12, ("nv",)),  # PTX: tinygrad's software sin, 7e-3 off
  "matmul": ([(32, 48), (48, 40)], F32, normal, lambda a, b: a @ b, 1e-5, ("nv", "ptx")),
  "matmul_half_tc": ([(64, 64), (64, 64)], F16, normal, lambda a, b: a @ b, 2e-3, ("nv", "ptx")),
  "matmul_bf16_tc": ([(64, 64), (64, 64)], BF16, normal, lambda a, b: (a @ b).cast(F32), 1e-2, ("nv", "ptx")),
  "sum": ([(4096,)], F32, normal, lambda x: x.sum(), 1e-5, ("nv", "ptx")),
  "max_axis": ([(33, 65)], F32, normal, lambda x: x.max(axis=1), 0, ("nv", "ptx")),
  "softmax": ([(16, 100)], F32, normal, lambda x: x.softmax(), 1e-6, ("nv", "ptx")),
  "argmax": ([(16, 100)], F32, normal, lambda x: x.argmax(axis=1), 0, ("nv", "ptx")),
  "idiv_mod": ([(64,), (64,)], dtypes.int32, ints(-100, 100, np.int32), lambda a, b: (a // (b | 1)) * 1000 + a % (b | 1), 0, ("nv", "ptx")),
  "int64_mul": ([(64,), (64,)], dtypes.int64, ints(-2**40, 2**40, np.int64), lambda a, b: (a * b) ^ (a + 7), 0, ("nv", "ptx")),
  "int64_div": ([(64,), (64,)], dtypes.int64, ints(-2**40, 2**40, np.int64), lambda a, b: a // (b | 1), 0, ("nv", "ptx")),
  "uint_bits": ([(64,)], dtypes.uint32, ints(0, 2**32, np.uint32), lambda x: ((x << 3) ^ (x >> 5)) & (x | 7), 0, ("nv", "ptx")),
  "conv2d": ([(2, 3, 9, 9), (4, 3, 3, 3)], F32, normal, lambda x, w: x.conv2d(w, padding=1), 1e-5, ("nv", "ptx")),
  "conv2d_half": ([(1, 4, 8, 8), (8, 4, 3, 3)], F16, normal, lambda x, w: x.conv2d(w), 3e-3, ("nv", "ptx")),
  "maxpool": ([(1, 2, 8, 8)], F32, normal, lambda x: x.max_pool2d(), 0, ("nv", "ptx")),
  "cumsum": ([(50,)], F32, normal, lambda x: x.cumsum(), 1e-5, ("nv", "ptx")),
  "where_cmp": ([(64,), (64,)], F32, normal, lambda a, b: (a < b).where(a, b * 2) + (a != a).float() + (a >= 0).float(), 0, ("nv", "ptx")),
  "half_sum_f32acc": ([(1024,)], F16, normal, lambda x: x.float().sum(), 1e-5, ("nv", "ptx")),
  "gelu_half": ([(256,)], F16, normal, lambda x: x.gelu(), 3e-3, ("nv", "ptx")),
  "layernorm": ([(8, 64)], F32, normal, lambda x: x.layernorm(), 1e-5, ("nv", "ptx")),
  "pow_abs": ([(64,), (64,)], F32, positive, lambda a, b: a.pow(b) + (a - b).abs(), 1e-5, ("nv", "ptx")),
  "rand": ([], F32, normal, lambda: Tensor.rand(1000) + Tensor.randn(8, 8).sum(), 1e-6, ("nv", "ptx")),
}
def _bf16(v): return (v.astype(np.uint32) << 16).view(np.float32)
NUMPY = {"sin_large_f64": lambda x: np.sin(x * 1e7), "matmul_bf16_tc": lambda a, b: _bf16(a).astype(np.float64) @ _bf16(b)}
CASTS = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64,
         dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]

def _inputs(shapes, dt, gen):
  vals = [gen(*s) for s in shapes]
  if dt == BF16: return [(v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) for v in vals]
  return [v.astype(dt.fmt) for v in vals]

def _cpu(fn, dt, vals):
  ts = [Tensor(v, device="CPU").bitcast(BF16) if dt == BF16 else Tensor(v, device="CPU") for v in vals]
  return fn(*ts)

def _run(name, kind, shapes, dt, gen, fn):
  vals = _inputs(shapes, dt, gen)
  Tensor.manual_seed(1234)
  ref = NUMPY[name](*vals) if name in NUMPY else _cpu(fn, dt, vals).numpy()
  Tensor.manual_seed(1234)
  ts = [Tensor.empty(*s, dtype=dt, device="NULL") for s in shapes]
  out = fn(*ts)
  return Runner(kind).realize(out, dict(zip(ts, vals))), ref

@pytest.mark.parametrize("kind", ["nv", "ptx"])
@pytest.mark.parametrize("name", list(CASES))
def test_kernel_matches_cpu(name, kind):
  shapes, dt, gen, fn, tol, kinds = CASES[name]
  if kind not in kinds: pytest.skip("tinygrad's software float64 sin is off past 1e6 (NUMPY reference)")
  out, ref = _run(name, kind, shapes, dt, gen, fn)
  assert out.shape == ref.shape
  o, r = out.astype(np.float64), ref.astype(np.float64)
  np.testing.assert_allclose(o, r, rtol=tol, atol=tol * max(1.0, np.abs(r).max(initial=0)))

@pytest.mark.parametrize("kind", ["nv", "ptx"])
@pytest.mark.parametrize("src", CASTS, ids=lambda d: d.name)
def test_casts_match_cpu(src, kind):
  """All 13x13 dtype casts of edge values in one kernel per source dtype."""
  edge = np.array([0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 127, 128, -129, 255.7, 65504, -65536.5, 3e9, -3e9, 1e20, np.nan, np.inf, -np.inf,
                   1e-30, -0.0, 7.25, 33000.0], np.float64)
  if dtypes.is_int(src) or src == dtypes.bool:
    info = np.iinfo(src.fmt) if src != dtypes.bool else None
    v = np.array([0, 1, 2, 127, 255, 3, 1000, 65535, 2**31 - 1, 2**32 - 1, 2**40 + 3, 2**63 - 1] * 2, np.uint64)
    vals = v.astype(src.fmt) if src != dtypes.bool else (v % 2).astype(np.bool_)
    if info is not None and info.min < 0: vals[::2] = -vals[::2] - 1
  elif src == BF16: vals = (edge.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
  else: vals = edge.astype(src.fmt)
  targets = [d for d in CASTS if d != src]
  for d in targets:
    src_f = vals.astype(np.float64) if src != BF16 else (vals.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    keep = np.ones(len(vals), np.bool_)
    if dtypes.is_float(src) and not dtypes.is_float(d):   # float -> int of NaN/inf/out-of-range values is UB in C; skip those
      lim = np.iinfo(d.fmt) if d != dtypes.bool else None
      keep = np.isfinite(src_f) & (((src_f > lim.min - 1) & (src_f < lim.max + 1)) if lim is not None else True)
      # PTXRenderer casts float -> bool with setp.ne.b32 on the bits, so -0.0 is True there (as on the hardware)
      if d == dtypes.bool and kind == "ptx": keep &= ~((src_f == 0) & np.signbit(src_f))
    ref_vals = np.where(keep, vals, vals.dtype.type(0))
    if BF16 in (src, d):   # clang cannot build bf16 kernels; tinygrad's PYTHON device can (half exactly via float32)
      ref_in = Tensor(ref_vals.astype(np.float32) if src == F16 else ref_vals, device="PYTHON")
      if src == BF16: ref_in = ref_in.bitcast(BF16)
    else: ref_in = Tensor(ref_vals, device="CPU")
    if src == BF16 and d == F16: ref = Tensor(ref_in.cast(F32).numpy(), device="CPU").cast(F16).numpy()   # bf16 -> f32 is exact
    else: ref = (ref_in.cast(d).bitcast(dtypes.uint16) if d == BF16 else ref_in.cast(d)).numpy()
    t = Tensor.empty(len(vals), dtype=src, device="NULL")
    out = Runner(kind).realize(t.cast(d), {t: vals})
    np.testing.assert_array_equal(out[keep], ref[keep], err_msg=f"{src.name} -> {d.name}")

def test_emu_device_runs_tinygrad_end_to_end():
  """The EMU device (for running upstream tests on the SM room) allocates, copies, compiles and launches like NV."""
  import orin_emu.ptx.device  # noqa: F401  registers tinygrad.runtime.ops_emu
  x = np.arange(48, dtype=np.float32).reshape(6, 8)
  t = Tensor(x, device="EMU")
  np.testing.assert_allclose((t.exp2() @ t.T).numpy(), np.exp2(x) @ x.T, rtol=1e-6)
  np.testing.assert_array_equal(t[2:4].contiguous().numpy(), x[2:4])

def test_emu_device_runs_kernels_compiled_in_workers(tmp_path):
  """tinygrad compiles a realize's kernels in a spawned worker pool: the workers register their PTX for the SM room too."""
  import os, subprocess, sys, pathlib
  code = ("import orin_emu.ptx.device, numpy as np; from tinygrad import Tensor; t = Tensor(np.arange(8, dtype=np.float32), device='EMU'); "
          "a, b = (t.exp2() + 3).contiguous(), (t * t).sum(); Tensor.realize(a, b); print(a.numpy().sum() + b.item())")
  path = os.pathsep.join([str(pathlib.Path(__file__).parents[2]), *filter(None, [os.environ.get("PYTHONPATH")])])
  # a store and a disk cache of its own: PTX another process registered, or programs it lowered, would hide a worker that did not
  env = {**os.environ, "PYTHONPATH": path, "PARALLEL": "2", "ORIN_EMU_PTX_DIR": str(tmp_path), "CACHEDB": str(tmp_path / "cache.db"), "DEV": "EMU"}
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
  assert r.returncode == 0, r.stderr[-2000:]
  assert float(r.stdout.split()[-1]) == float((np.exp2(np.arange(8)) + 3).sum() + (np.arange(8) ** 2).sum())

def _tiny_llm_tokens(device:str) -> list[int]:
  from tinygrad import nn
  from tinygrad.llm.model import Transformer, TransformerConfig
  m = Transformer(TransformerConfig(num_blocks=1, dim=64, hidden_dim=128, n_heads=4, n_kv_heads=2, norm_eps=1e-5, vocab_size=96, head_dim=16,
                                    rope_theta=10000.0, rope_dim=16, v_head_dim=16, max_context=10))
  rng = np.random.default_rng(0)
  for v in nn.state.get_state_dict(m).values(): v.replace(Tensor((rng.standard_normal(v.shape) * 0.2).astype(np.float16), device=device))
  gen = m.generate([1, 5, 9])
  return [next(gen) for _ in range(5)]

def test_fp16_llm_block_with_kv_cache_and_jit():
  """llm.model Transformer in fp16: prefill, then JIT decode with a symbolic start_pos over the memory planner's sub-buffers."""
  import os, subprocess, sys, pathlib
  here = pathlib.Path(__file__).parent
  code = "import sys, orin_emu.ptx.device; from test_ptx_kernels import _tiny_llm_tokens; print(_tiny_llm_tokens(sys.argv[1]))"
  # one process per device: llm.model caches its rope table on the device of first use
  def tokens(dev):
    path = os.pathsep.join([str(here.parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])
    r = subprocess.run([sys.executable, "-c", code, dev], capture_output=True, text=True, cwd=here, env={**os.environ, "DEV": dev, "PYTHONPATH": path})
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]
  emu = tokens("EMU")
  assert emu == tokens("CPU") and len(eval(emu)) == 5
