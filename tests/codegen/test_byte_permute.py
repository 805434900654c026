# A byte of a uint32 set under constant upper bytes, (x >> 8e) & 0xFF | c, is one byte permute on NVIDIA GPUs (CUDA __byte_perm, PTX prmt)
# instead of a shift, an and and an or: how the quantized matvecs make floats of their weights' bytes. Run on the emulated SM (which follows
# the PTX ISA's prmt) from kernels rendered by NVRenderer (NVRTC) and PTXRenderer (nvJitLink) for sm_87: no GPU needed.
import re, numpy as np, pytest
from tinygrad import Tensor, dtypes
from tinygrad.codegen import get_program
from tinygrad.uop.ops import Ops
from orin_emu.ptx.testing import Runner

X = np.random.default_rng(0).integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
C = 0x4B000000  # 2**23 as a float: byte e of x in its mantissa

def bytes_under(t:Tensor, c:int, to:int=0) -> Tensor:
  def byte(e:int) -> Tensor: return (t.rshift(8 * e) if e else t).bitwise_and(0xFF) if e < 3 else t.rshift(24)
  return Tensor.stack(*[(byte(e).lshift(to) if to else byte(e)).bitwise_or(c) for e in range(4)], dim=-1)
def want(c:int, to:int=0) -> np.ndarray:
  return np.stack([((X >> np.uint32(8 * e)) & np.uint32(0xFF)) << np.uint32(to) | np.uint32(c) for e in range(4)], axis=-1)

@pytest.mark.parametrize("kind", ["nv", "ptx"])
def test_bytes_under_a_constant_are_byte_permutes(kind):
  t = Tensor.empty(len(X), dtype=dtypes.uint32, device="NULL")
  r = Runner(kind)
  np.testing.assert_array_equal(r.realize(bytes_under(t, C), {t: X}), want(C))
  src = get_program([si for si in bytes_under(t, C).schedule() if si.ast.op is Ops.SINK][-1].ast, r.renderer).src
  assert src.count("__byte_perm" if kind == "nv" else "prmt.b32") == 4 and ">>" not in src and "shr." not in src
  # and as floats: 2**23 + byte, exactly
  f = bytes_under(t, C).bitcast(dtypes.float32) - 2**23
  np.testing.assert_array_equal(Runner(kind).realize(f, {t: X}), want(0).astype(np.float32))

@pytest.mark.parametrize("kind", ["nv", "ptx"])
def test_a_constant_with_a_low_byte_keeps_the_or(kind):
  # c's low byte would be or'd into x's byte: no permute
  t = Tensor.empty(len(X), dtype=dtypes.uint32, device="NULL")
  r = Runner(kind)
  np.testing.assert_array_equal(r.realize(bytes_under(t, C | 0x81), {t: X}), want(C | 0x81))
  src = get_program([si for si in bytes_under(t, C | 0x81).schedule() if si.ast.op is Ops.SINK][-1].ast, r.renderer).src
  assert "__byte_perm" not in src and "prmt" not in src

@pytest.mark.parametrize("kind", ["nv", "ptx"])
@pytest.mark.parametrize("to", [8, 16])
def test_a_byte_between_constant_bytes_is_a_byte_permute(kind, to):
  # ((x >> 8e) & 0xFF) << to | c, c's byte to/8 clear: byte e moved into it (the quantized weights' 0.5 + q/256 with to 16, 0x3F000000)
  c = 0x3F000000 if to == 16 else 0x4B000000
  t = Tensor.empty(len(X), dtype=dtypes.uint32, device="NULL")
  r = Runner(kind)
  np.testing.assert_array_equal(r.realize(bytes_under(t, c, to), {t: X}), want(c, to))
  src = get_program([si for si in bytes_under(t, c, to).schedule() if si.ast.op is Ops.SINK][-1].ast, r.renderer).src
  assert src.count("__byte_perm" if kind == "nv" else "prmt.b32") == 4 and ">>" not in src and "shr." not in src
  assert f"<<{to}u" not in src and not re.search(rf"shl\.b32 [^;]*, {to};", src)

@pytest.mark.parametrize("kind", ["nv", "ptx"])
def test_a_constant_with_the_target_byte_keeps_the_or(kind):
  t = Tensor.empty(len(X), dtype=dtypes.uint32, device="NULL")
  def moved(): return t.bitwise_and(0xFF).lshift(16).bitwise_or(0x3F800000)   # 0x80 in byte 2 would be or'd into the byte: no permute
  np.testing.assert_array_equal(Runner(kind).realize(moved(), {t: X}), (X & np.uint32(0xFF)) << np.uint32(16) | np.uint32(0x3F800000))
  src = get_program([si for si in moved().schedule() if si.ast.op is Ops.SINK][-1].ast, Runner(kind).renderer).src
  assert "__byte_perm" not in src and "prmt" not in src
