# Every program tinygrad builds for NV loads and runs, whichever renderer. ptxas puts the integer division/modulo of 8-, 16- and
# 64-bit types and float64 division/sqrt in helper functions (__cuda_sm20_div_s16, ...) that the kernel calls through relocations;
# DEV=NV:PTX selects the renderer that leaves these to ptxas. Results compared against the CPU device.
import numpy as np, pytest
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tegra_kernel import nv_kernel

INTS = [dtypes.int8, dtypes.int16, dtypes.int64, dtypes.uint16, dtypes.uint64]
def int_args(dt):
  a, b = [7, -9, 100, -128, 127, 33, -1, 5], [3, 2, -7, 5, 10, -4, 3, -5]
  return ([abs(x) for x in a], [abs(x) for x in b]) if dtypes.is_unsigned(dt) else (a, b)

def both(fn, *args, dtype) -> tuple[np.ndarray, np.ndarray]:
  with Context(DEV="NV:PTX"): nv = fn(*[Tensor(a, dtype=dtype, device="NV") for a in args]).numpy()
  return nv, fn(*[Tensor(a, dtype=dtype, device="CPU") for a in args]).numpy()

@pytest.mark.parametrize("dt", INTS, ids=str)
@pytest.mark.parametrize("op", ["idiv", "mod"])
def test_ptx_integer_division(dev, dt, op):
  nv, cpu = both((lambda a, b: a // b) if op == "idiv" else (lambda a, b: a % b), *int_args(dt), dtype=dt)
  np.testing.assert_equal(nv, cpu)

F64 = {"div": lambda a, b: a / b, "sqrt": lambda a, b: a.sqrt(), "log": lambda a, b: a.log(), "sin": lambda a, b: a.sin()}
@pytest.mark.parametrize("op", sorted(F64))
def test_ptx_float64(dev, op):
  nv, cpu = both(F64[op], [0.5, 2.0, 3.0, 1e-3, 7.25, 1e6, 42.0, 0.1], [3.0, -0.5, 7.0, 2.0, 1e-3, 9.0, 0.25, -3.0], dtype=dtypes.float64)
  np.testing.assert_allclose(nv, cpu, rtol=1e-12)

def test_ptx_call_relocations(dev):
  # the kernel calls ptxas' helper with CALL.ABS.NOINC (R_CUDA_ABS47_34: bits 34..80 hold the target in 4-byte units) and hands it the
  # return address in two MOVs (R_CUDA_ABS32_LO_32/HI_32 with an addend: the instruction after the call, not the kernel's start)
  a, b = Tensor([7, -9], dtype=dtypes.int16, device="NV").realize(), Tensor([3, 2], dtype=dtypes.int16, device="NV").realize()
  with Context(DEV="NV:PTX"): prg = nv_kernel(a % b)[0]
  from tinygrad.runtime.support.elf import elf_loader
  _, sections, relocs = elf_loader(prg.lib, force_section_align=128)
  dev.allocator._copyout(image:=memoryview(bytearray(prg.lib_gpu.size)), prg.lib_gpu)   # the image as the GPU sees it
  base, calls = prg.lib_gpu.va_addr, [(o, s + a) for o, s, t, a in relocs if t == 58]
  helper = next(sh.header.sh_addr for sh in sections if sh.name.startswith(".text.__cuda_sm20_"))
  assert calls and all(s == helper for _, s in calls)
  for o, _ in calls: assert (int.from_bytes(image[o:o+16], "little") >> 34 & ((1 << 47) - 1)) << 2 == base + helper
  lo = {o: s + a for o, s, t, a in relocs if t == 0x38}
  hi = {o: s + a for o, s, t, a in relocs if t == 0x39}
  assert set(lo.values()) == set(hi.values()) == {o + 16 for o, _ in calls}   # each return address is the instruction after a call
  for o, target in [*lo.items(), *hi.items()]:
    half = int.from_bytes(image[o+4:o+8], "little")
    assert half == ((base + target) & 0xffffffff if o in lo else (base + target) >> 32)

@pytest.mark.parametrize("dt", [dtypes.bfloat16, dtypes.fp8e4m3, dtypes.fp8e5m2], ids=str)
def test_ptx_emulates_bfloat16_fp8(dev, dt):
  # PTXRenderer.supported_dtypes leaves these out, so they are computed in float32 and stored as dt
  nv, cpu = both(lambda a: (a.cast(dt) + 1).cast(dtypes.float32), [1.0, 2.0, 3.5, -0.75], dtype=dtypes.float32)
  np.testing.assert_equal(nv, cpu)

def test_beam_candidates_compiled_in_workers_run(dev):
  # BEAM compiles its candidates in worker processes and times them here: programs this process never compiled load and run
  from tegra_kernel import run_child
  r = run_child("""
    import numpy as np
    from tinygrad import Tensor
    a, b = np.arange(48, dtype=np.float32).reshape(6, 8), np.arange(40, dtype=np.float32).reshape(8, 5)
    print("OK" if np.allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b) else "WRONG")
  """, BEAM="2", PARALLEL="1", IGNORE_BEAM_CACHE="1")
  assert r.returncode == 0 and r.stdout.strip() == "OK", r.stdout + r.stderr[-3000:]
