# Per-family PTX semantics against numpy / Python references at edge values (NaN, inf, denormals, -0.0, INT_MIN/-1, ties).
import math, struct, numpy as np, pytest
from fractions import Fraction
from orin_emu.ptx import execute
from orin_emu.ptx.lower import Unsupported
from orin_emu.ptx.testing import DictMemory

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # the numpy references overflow on purpose

REG = {'f32': 'f32', 'f64': 'f64', 'f16': 'b16', 'bf16': 'b16', 'pred': 'pred'}
NPT = {'f32': np.float32, 'f64': np.float64, 'f16': np.float16, 'bf16': np.uint16, 'u8': np.uint8, 's8': np.int8, 'u16': np.uint16,
       's16': np.int16, 'b16': np.uint16, 'u32': np.uint32, 's32': np.int32, 'b32': np.uint32, 'u64': np.uint64, 's64': np.int64, 'b64': np.uint64}
def rclass(t): return REG.get(t, ('b' if t[0] in 'ub' else 's') + t[1:] if t[1:] in ('16', '32', '64') else 'b16')

def run_op(line:str, in_types:list[str], out_type:str, *inputs, extra_regs:str=""):
  """Run `line` (reading %a, %b, %c, writing %d) for every element of the inputs, one thread each."""
  n = len(inputs[0])
  mem = DictMemory()
  vas = []
  for t, v in zip(in_types, inputs):
    va, buf = mem.map(n * 8); buf[:n*np.dtype(NPT[t]).itemsize] = np.ascontiguousarray(v, NPT[t]).view(np.uint8); vas.append(va)
  ova, obuf = mem.map(n * 8)
  ld = "\n".join(f"mul.wide.u32 %o{i}, %t, {np.dtype(NPT[t]).itemsize}; add.u64 %o{i}, %o{i}, %p{i}; ld.global.{t if t != 'bf16' else 'b16'} %{'abc'[i]}, [%o{i}];"
                 for i, t in enumerate(in_types))
  osz = np.dtype(NPT[out_type]).itemsize if out_type != 'pred' else 1
  st = f"selp.u16 %q, 1, 0, %d; st.global.u8 [%oo], %q;" if out_type == 'pred' else f"st.global.{out_type if out_type != 'bf16' else 'b16'} [%oo], %d;"
  regs = "\n".join(f".reg .{rclass(t)} %{'abc'[i]};" for i, t in enumerate(in_types))
  src = f"""
.version 8.5
.target sm_87
.address_size 64
.visible .entry k(.param .u64 out, {", ".join(f".param .u64 in{i}" for i in range(len(in_types)))})
{{
  .reg .u32 %t; .reg .u64 %oo, %po, %o<4>, %p<4>; .reg .b16 %q; .reg .{rclass(out_type)} %d;
  {regs}
  {extra_regs}
  mov.u32 %t, %tid.x;
  ld.param.u64 %po, [out];
  {" ".join(f"ld.param.u64 %p{i}, [in{i}];" for i in range(len(in_types)))}
  {ld}
  {line}
  mul.wide.u32 %oo, %t, {osz}; add.u64 %oo, %oo, %po;
  {st}
  ret;
}}"""
  cbuf = bytes(0x160) + struct.pack(f"<{1+len(vas)}Q", ova, *vas)
  execute(src, "k", grid=(1, 1, 1), block=(n, 1, 1), cbuf0=cbuf, param_base=0x160, mem=mem)
  out = obuf[:n*osz].view(NPT[out_type] if out_type != 'pred' else np.uint8).copy()
  return out.astype(bool) if out_type == 'pred' else out

I32 = np.array([0, 1, -1, 7, -7, 2**31 - 1, -2**31, 12345678, -2**31, 100], np.int64)
I32B = np.array([3, -1, 0, 2, -2, -1, -1, 0, 1, 7], np.int64)

def test_int_add_sub_mul_wrap():
  a, b = I32.astype(np.int32), I32B.astype(np.int32)
  assert (run_op("add.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b) == ((I32 + I32B + 2**31) % 2**32 - 2**31)).all()
  assert (run_op("sub.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b) == ((I32 - I32B + 2**31) % 2**32 - 2**31)).all()
  assert (run_op("mul.lo.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b) == ((I32 * I32B + 2**31) % 2**32 - 2**31)).all()
  assert (run_op("mul.hi.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b) == (I32 * I32B) >> 32).all()
  assert (run_op("mul.wide.s32 %d, %a, %b;", ['s32', 's32'], 's64', a, b) == I32 * I32B).all()
  ua, ub = a.view(np.uint32), b.view(np.uint32)
  assert (run_op("mul.wide.u32 %d, %a, %b;", ['u32', 'u32'], 'u64', ua, ub) == ua.astype(np.uint64) * ub.astype(np.uint64)).all()

def test_mul_hi_64():
  vals = [0, 1, 2**64 - 1, 2**63, 2**63 - 1, 0xDEADBEEFCAFEBABE, 3, 2**32 + 5]
  a, b = np.array(vals, np.uint64), np.array(vals[::-1], np.uint64)
  assert [int(x) for x in run_op("mul.hi.u64 %d, %a, %b;", ['u64', 'u64'], 'u64', a, b)] == [(x * y) >> 64 for x, y in zip(vals, vals[::-1])]
  sa, sb = a.view(np.int64), b.view(np.int64)
  ref = [(int(x) * int(y)) >> 64 for x, y in zip(sa, sb)]
  assert [int(x) for x in run_op("mul.hi.s64 %d, %a, %b;", ['s64', 's64'], 's64', sa, sb)] == ref

def test_int_div_rem_edges():
  a, b = np.array([7, -7, 7, -7, -2**31, 5, -5, 0], np.int32), np.array([2, 2, -2, -2, -1, 0, 0, 3], np.int32)
  q = run_op("div.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b)
  r = run_op("rem.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b)
  assert list(q[:5]) == [3, -3, -3, 3, -2**31] and list(q[7:]) == [0]   # truncation; INT_MIN / -1 wraps
  assert list(r[:5]) == [1, -1, 1, -1, 0]
  assert list(q[5:7]) == [-1, -1] and list(r[5:7]) == [5, -5]          # x/0: all ones, x rem 0 = x
  ua, ub = np.array([10, 0xFFFFFFFF, 3], np.uint32), np.array([3, 0, 0], np.uint32)
  assert list(run_op("div.u32 %d, %a, %b;", ['u32', 'u32'], 'u32', ua, ub)) == [3, 0xFFFFFFFF, 0xFFFFFFFF]
  assert list(run_op("rem.u32 %d, %a, %b;", ['u32', 'u32'], 'u32', ua, ub)) == [1, 0xFFFFFFFF, 3]
  a64, b64 = np.array([-2**63, 2**62 + 1, -9], np.int64), np.array([-1, 3, 4], np.int64)
  assert list(run_op("div.s64 %d, %a, %b;", ['s64', 's64'], 's64', a64, b64)) == [-2**63, (2**62 + 1) // 3, -2]

def test_min_max_abs_neg_int():
  a, b = np.array([-2**31, 5, -1, 0], np.int32), np.array([3, -5, 0xFFFF, 0], np.int32)
  assert list(run_op("min.s32 %d, %a, %b;", ['s32', 's32'], 's32', a, b)) == [-2**31, -5, -1, 0]
  assert list(run_op("max.u32 %d, %a, %b;", ['u32', 'u32'], 'u32', a.view(np.uint32), b.view(np.uint32))) == [2**31, 2**32 - 5, 2**32 - 1, 0]
  assert list(run_op("abs.s32 %d, %a;", ['s32'], 's32', a)) == [-2**31, 5, 1, 0]
  assert list(run_op("neg.s32 %d, %a;", ['s32'], 's32', a)) == [-2**31, -5, 1, 0]

def test_shifts_by_width_and_more():
  x, n = np.array([0x80000001] * 6, np.uint32), np.array([0, 1, 31, 32, 33, 255], np.uint32)
  assert list(run_op("shl.b32 %d, %a, %b;", ['b32', 'u32'], 'b32', x, n)) == [0x80000001, 2, 0x80000000, 0, 0, 0]
  assert list(run_op("shr.u32 %d, %a, %b;", ['u32', 'u32'], 'u32', x, n)) == [0x80000001, 0x40000000, 1, 0, 0, 0]
  assert list(run_op("shr.s32 %d, %a, %b;", ['s32', 'u32'], 's32', x.view(np.int32), n)) == [-2147483647, -1073741824, -1, -1, -1, -1]
  y, m = np.array([1, 1, 2**63], np.uint64), np.array([63, 64, 64], np.uint32)
  assert list(run_op("shl.b64 %d, %a, %b;", ['b64', 'u32'], 'b64', y, m)) == [2**63, 0, 0]
  assert list(run_op("shr.s64 %d, %a, %b;", ['s64', 'u32'], 's64', y.view(np.int64), m)) == [0, 0, -1]

def test_funnel_shift():
  lo, hi = np.array([0x89ABCDEF] * 4, np.uint32), np.array([0x01234567] * 4, np.uint32)
  n = np.array([0, 4, 32, 36], np.uint32)
  wrap = run_op("shf.l.wrap.b32 %d, %a, %b, %c;", ['b32', 'b32', 'u32'], 'b32', lo, hi, n)
  v = (0x01234567 << 32) | 0x89ABCDEF
  assert [int(x) for x in wrap] == [((v << (k % 32)) >> 32) & 0xFFFFFFFF for k in (0, 4, 32, 36)]
  clamp = run_op("shf.r.clamp.b32 %d, %a, %b, %c;", ['b32', 'b32', 'u32'], 'b32', lo, hi, n)
  assert [int(x) for x in clamp] == [(v >> min(k, 32)) & 0xFFFFFFFF for k in (0, 4, 32, 36)]

def test_bit_ops():
  x = np.array([0, 1, 0x80000000, 0x00F0F000, 0xFFFFFFFF], np.uint32)
  assert list(run_op("clz.b32 %d, %a;", ['b32'], 'u32', x)) == [32, 31, 0, 8, 0]
  assert list(run_op("popc.b32 %d, %a;", ['b32'], 'u32', x)) == [0, 1, 1, 8, 32]
  assert list(run_op("brev.b32 %d, %a;", ['b32'], 'b32', x)) == [int(f"{int(v):032b}"[::-1], 2) for v in x]
  y = np.array([0, 1, 2**63, 2**40 + 1], np.uint64)
  assert list(run_op("clz.b64 %d, %a;", ['b64'], 'u32', y)) == [64, 63, 0, 23]
  a, b = np.array([0xAB, 0xFFFFFFFF, 0x1234], np.uint32), np.array([0xFFFF0000, 0, 0xFFFFFFFF], np.uint32)
  pos, ln = np.array([8, 4, 30], np.uint32), np.array([8, 8, 8], np.uint32)
  bfi = run_op("bfi.b32 %d, %a, %b, %c, 8;", ['b32', 'b32', 'u32'], 'b32', a, b, pos)
  assert [hex(int(v)) for v in bfi] == [hex(0xFFFFAB00), hex(0xFF0), hex(0x3FFFFFFF)]
  e = run_op("bfe.s32 %d, %a, %b, 4;", ['s32', 'u32'], 's32', np.array([0xF0, 0x70, -1], np.int32), np.array([4, 4, 40], np.uint32))
  assert list(e) == [-1, 7, -1]

def test_prmt_and_dp4a():
  a, b = np.array([0x33221100] * 3, np.uint32), np.array([0x77665544] * 3, np.uint32)
  c = np.array([0x3210, 0x7654, 0x0008 | 0x0010], np.uint32)   # identity, the second word, sign-replicate byte 0 (0x00 -> 0)
  r = run_op("prmt.b32 %d, %a, %b, %c;", ['b32', 'b32', 'b32'], 'b32', a, b, c)
  assert [hex(int(v)) for v in r] == ['0x33221100', '0x77665544', '0x1100']
  r = run_op("prmt.b32 %d, %a, %b, %c;", ['b32', 'b32', 'b32'], 'b32', np.array([0x80], np.uint32), np.array([0], np.uint32), np.array([0x8], np.uint32))
  assert hex(int(r[0])) == '0x808080ff'   # nibble 8: byte 0 sign-replicated; nibbles 0: byte 0 itself
  x, y = np.array([0x01FF7F80], np.uint32), np.array([0x02030405], np.uint32)
  sb = lambda v: [((v >> 8*k) & 0xFF) - (256 if (v >> 8*k) & 0x80 else 0) for k in range(4)]
  ub = lambda v: [(v >> 8*k) & 0xFF for k in range(4)]
  assert int(run_op("dp4a.s32.s32 %d, %a, %b, %c;", ['b32', 'b32', 's32'], 's32', x, y, np.array([10], np.int32))[0]) == 10 + sum(p*q for p, q in zip(sb(0x01FF7F80), sb(0x02030405)))
  assert int(run_op("dp4a.u32.u32 %d, %a, %b, %c;", ['b32', 'b32', 'u32'], 'u32', x, y, np.array([10], np.uint32))[0]) == 10 + sum(p*q for p, q in zip(ub(0x01FF7F80), ub(0x02030405)))

def test_carry_chain_128bit_add_and_mul():
  rng = np.random.default_rng(1)
  A, B = [int(x) for x in rng.integers(0, 2**63, 8, dtype=np.uint64)] + [2**64 - 1], [int(x) for x in rng.integers(0, 2**63, 8, dtype=np.uint64)] + [1]
  lo = lambda v: np.array([x & 0xFFFFFFFF for x in v], np.uint32)
  hi = lambda v: np.array([x >> 32 for x in v], np.uint32)
  extra = ".reg .u32 %x, %y, %z, %w, %r0, %r1, %r2; .reg .b64 %wide;"
  line = ("mov.b64 {%x, %y}, %a; mov.b64 {%z, %w}, %b; add.cc.u32 %r0, %x, %z; addc.cc.u32 %r1, %y, %w; addc.u32 %r2, 0, 0;"
          " mov.b64 %d, {%r0, %r1}; @%pq mov.b64 %d, 0;")
  out = run_op(line.replace("@%pq mov.b64 %d, 0;", ""), ['u64', 'u64'], 'u64', np.array(A, np.uint64), np.array(B, np.uint64), extra_regs=extra)
  assert [int(v) for v in out] == [(x + y) & (2**64 - 1) for x, y in zip(A, B)]
  carry = run_op("mov.b64 {%x, %y}, %a; mov.b64 {%z, %w}, %b; add.cc.u32 %r0, %x, %z; addc.cc.u32 %r1, %y, %w; addc.u32 %d, 0, 0;",
                 ['u64', 'u64'], 'u32', np.array(A, np.uint64), np.array(B, np.uint64), extra_regs=extra)
  assert [int(v) for v in carry] == [(x + y) >> 64 for x, y in zip(A, B)]
  diff = run_op("mov.b64 {%x, %y}, %a; mov.b64 {%z, %w}, %b; sub.cc.u32 %r0, %x, %z; subc.u32 %r1, %y, %w; mov.b64 %d, {%r0, %r1};",
                ['u64', 'u64'], 'u64', np.array(B, np.uint64), np.array(A, np.uint64), extra_regs=extra)
  assert [int(v) for v in diff] == [(y - x) & (2**64 - 1) for x, y in zip(A, B)]
  # 32x64 multiply with mad.lo.cc / madc.hi as NVRTC's Payne-Hanek reduction does it
  prod = run_op("mov.b64 {%x, %y}, %a; mul.lo.u32 %r0, %x, %c; mul.hi.u32 %r1, %x, %c; mad.lo.cc.u32 %r1, %y, %c, %r1; madc.hi.u32 %r2, %y, %c, 0;"
                " mov.b64 %d, {%r1, %r2};", ['u64', 'u64', 'u32'], 'u64', np.array(A, np.uint64), np.array(B, np.uint64),
                np.array([x & 0xFFFFFFFF for x in B], np.uint32), extra_regs=extra)
  assert [int(v) for v in prod] == [(x * (y & 0xFFFFFFFF)) >> 32 & (2**64 - 1) for x, y in zip(A, B)]

F32E = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e-45, 1e-39, 3.4e38, 0.1, 2.5], np.float32)

def test_float_arith_matches_numpy():
  b = np.roll(F32E, 3)
  for op, f in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)]:
    np.testing.assert_array_equal(run_op(f"{op}.rn.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', F32E, b), f(F32E, b))
  np.testing.assert_array_equal(run_op("div.rn.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', F32E, b), F32E / b)
  ref = (F32E.astype(np.float64) * b + F32E[::-1]).astype(np.float32)
  np.testing.assert_array_equal(run_op("fma.rn.f32 %d, %a, %b, %c;", ['f32'] * 3, 'f32', F32E, b, F32E[::-1]), ref)

def test_float_ftz_sat_and_rounding():
  den = np.array([1e-39, -1e-39, 1e-30, 2.0], np.float32)
  out = run_op("mul.ftz.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', den, np.ones(4, np.float32))
  assert list(out[:2]) == [0.0, 0.0] and np.signbit(out[1]) and out[2] == np.float32(1e-30)
  assert list(run_op("add.sat.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', np.array([0.5, 2, -3, np.nan], np.float32), np.zeros(4, np.float32))) == [0.5, 1, 0, 0]
  one, tiny = np.float32(1.0), np.float32(2**-30)
  rz = run_op("add.rz.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', np.array([1, -1], np.float32), np.array([tiny, -tiny], np.float32))
  rp = run_op("add.rp.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', np.array([1, -1], np.float32), np.array([tiny, -tiny], np.float32))
  rm = run_op("add.rm.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', np.array([1, -1], np.float32), np.array([tiny, -tiny], np.float32))
  assert list(rz) == [1, -1] and rp[0] == np.nextafter(one, 2) and rp[1] == -1 and rm[0] == 1 and rm[1] == -np.nextafter(one, 2)

def test_f64_fma_exact():
  a, b, c = np.array([1 + 2**-52, 0.1, 1e308, 3.0], np.float64), np.array([1 - 2**-52, 10.0, 10.0, 1 / 3], np.float64), np.array([-1.0, -1.0, -np.inf, -1.0], np.float64)
  out = run_op("fma.rn.f64 %d, %a, %b, %c;", ['f64'] * 3, 'f64', a, b, c)
  exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a[[0, 1, 3]], b[[0, 1, 3]], c[[0, 1, 3]])]
  assert [out[0], out[1], out[3]] == exact and out[2] == -np.inf

def test_half_and_bf16_arith():
  h = np.array([1.0, 65504, -2.5, 0.0009765625, np.nan, 6e-8], np.float16)
  g = np.array([2**-11, 32, 0.5, 3, 1, 6e-8], np.float16)
  np.testing.assert_array_equal(run_op("add.f16 %d, %a, %b;", ['f16', 'f16'], 'f16', h, g), h + g)
  np.testing.assert_array_equal(run_op("mul.rn.f16 %d, %a, %b;", ['f16', 'f16'], 'f16', h, g), h * g)
  ref = (h.astype(np.float64) * g + h[::-1]).astype(np.float16)
  np.testing.assert_array_equal(run_op("fma.rn.f16 %d, %a, %b, %c;", ['f16'] * 3, 'f16', h, g, h[::-1]), ref)
  bf = lambda x: (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
  x, y, z = bf([1.0, 3.0, -2.0, 1e30]), bf([1.0078125, 3.0, 0.5, 1e10]), bf([0.0, 1.0, 1.0, -np.inf])
  out = run_op("fma.rn.bf16 %d, %a, %b, %c;", ['bf16'] * 3, 'bf16', x, y, z)
  f = lambda u: (u.astype(np.uint32) << 16).view(np.float32)
  assert list(f(out)) == [1.0078125, 10.0, 0.0, -np.inf]
  assert list(run_op("neg.bf16 %d, %a;", ['bf16'], 'bf16', x)) == list(x ^ 0x8000)

def test_nan_aware_compares():
  a = np.array([1, np.nan, 1, np.nan, -0.0, np.inf], np.float32)
  b = np.array([2, 1, np.nan, np.nan, 0.0, np.inf], np.float32)
  un = np.isnan(a) | np.isnan(b)
  for cmp, f in [("eq", np.equal), ("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    assert (run_op(f"setp.{cmp}.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == (f(a, b) & ~un)).all(), cmp
    assert (run_op(f"setp.{cmp}u.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == (f(a, b) | un)).all(), cmp + "u"
  assert (run_op("setp.ne.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == ((a != b) & ~un)).all()
  assert (run_op("setp.neu.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == ((a != b) | un)).all()
  assert (run_op("setp.nan.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == un).all()
  assert (run_op("setp.num.f32 %d, %a, %b;", ['f32', 'f32'], 'pred', a, b) == ~un).all()
  # on bits (PTXRenderer's float -> bool cast): -0.0 differs from +0.0
  assert list(run_op("setp.ne.b32 %d, %a, 0f00000000;", ['b32'], 'pred', np.array([0x80000000, 0], np.uint32))) == [True, False]
  u = np.array([1, 0xFFFFFFFF], np.uint32)
  assert list(run_op("setp.lo.u32 %d, %a, 5;", ['u32'], 'pred', u)) == [True, False]
  assert list(run_op("setp.lt.s32 %d, %a, 5;", ['s32'], 'pred', u.view(np.int32))) == [True, True]
  out = run_op("set.ltu.u32.f32 %d, %a, %b;", ['f32', 'f32'], 'u32', a, b)
  assert list(out) == [0xFFFFFFFF if x else 0 for x in ((a < b) | un)]
  assert list(run_op("set.gt.f32.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', a, b)) == [1.0 if x else 0.0 for x in ((a > b) & ~un)]

def test_setp_two_destinations_and_bool_combine():
  a = np.array([1, 5, 3], np.int32)
  extra = ".reg .pred %pp, %qq;"
  out = run_op("setp.lt.s32 %pp|%qq, %a, 3; setp.eq.and.s32 %d, %a, %a, %qq;", ['s32'], 'pred', a, extra_regs=extra)
  assert list(out) == [False, True, True]

def test_min_max_nan():
  a, b = np.array([np.nan, 1, np.nan, -0.0], np.float32), np.array([2, np.nan, np.nan, 1], np.float32)
  out = run_op("min.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', a, b)
  assert list(out[:2]) == [2, 1] and np.isnan(out[2]) and out[3] == -0.0
  assert np.isnan(run_op("max.NaN.f32 %d, %a, %b;", ['f32', 'f32'], 'f32', a, b)[:3]).all()
  n = run_op("abs.f32 %d, %a;", ['f32'], 'f32', np.array([-np.nan, -0.0], np.float32))
  assert np.isnan(n[0]) and not np.signbit(n[0]) and not np.signbit(n[1])

def test_cvt_float_to_int_saturates():
  f = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 3.5, -0.7, 255.9], np.float32)
  assert list(run_op("cvt.rzi.s32.f32 %d, %a;", ['f32'], 's32', f)) == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2, 3, 0, 255]
  assert list(run_op("cvt.rni.s32.f32 %d, %a;", ['f32'], 's32', f)) == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2, 4, -1, 256]
  assert list(run_op("cvt.rzi.u8.f32 %d, %a;", ['f32'], 'u8', f)) == [0, 255, 0, 255, 0, 2, 0, 3, 0, 255]
  assert list(run_op("cvt.rmi.s64.f32 %d, %a;", ['f32'], 's64', f))[5:8] == [2, -3, 3]
  assert list(run_op("cvt.rpi.u64.f32 %d, %a;", ['f32'], 'u64', f))[:3] == [0, 2**64 - 1, 0]
  assert list(run_op("cvt.rzi.f32.f32 %d, %a;", ['f32'], 'f32', f))[5:9] == [2, -2, 3, -0.0]

def test_cvt_int_to_float_rounding_modes():
  i = np.array([2**24 + 1, -(2**24 + 1), 2**24 + 3, 16777217 * 4 + 1], np.int32)
  assert list(run_op("cvt.rn.f32.s32 %d, %a;", ['s32'], 'f32', i)) == [2**24, -2**24, 2**24 + 4, 67108872]
  assert list(run_op("cvt.rz.f32.s32 %d, %a;", ['s32'], 'f32', i)) == [2**24, -2**24, 2**24 + 2, 67108868]
  assert list(run_op("cvt.rm.f32.s32 %d, %a;", ['s32'], 'f32', i)) == [2**24, -(2**24 + 2), 2**24 + 2, 67108868]
  assert list(run_op("cvt.rp.f32.s32 %d, %a;", ['s32'], 'f32', i)) == [2**24 + 2, -2**24, 2**24 + 4, 67108872]
  big = np.array([2**64 - 1, 2**53 + 1], np.uint64)
  assert list(run_op("cvt.rz.f64.u64 %d, %a;", ['u64'], 'f64', big)) == [float(2**64 - 2048), float(2**53)]
  assert list(run_op("cvt.rn.f64.u64 %d, %a;", ['u64'], 'f64', big)) == [float(2**64), float(2**53)]

def test_cvt_float_formats():
  f = np.array([65520.0, 65519.0, 1e-8, -0.0, np.nan, 1.00048828125, 1.00146484375], np.float32)
  out = run_op("cvt.rn.f16.f32 %d, %a;", ['f32'], 'f16', f)
  np.testing.assert_array_equal(out, f.astype(np.float16))   # ties to even, overflow to inf, NaN stays NaN
  rz = run_op("cvt.rz.f16.f32 %d, %a;", ['f32'], 'f16', f)
  assert rz[0] == 65504 and rz[5] == 1.0 and rz[6] == np.float16(1.0009765625)
  bf = run_op("cvt.rn.bf16.f32 %d, %a;", ['f32'], 'bf16', np.array([1.00390625, 1.01171875, -np.inf, np.nan, 3.4e38], np.float32))
  assert list(bf[:3]) == [0x3F80, 0x3F82, 0xFF80] and (bf[3] & 0x7FC0) == 0x7FC0 and bf[4] == 0x7F80
  bz = run_op("cvt.rz.bf16.f32 %d, %a;", ['f32'], 'bf16', np.array([1.01171875, -1.01171875], np.float32))
  assert list(bz) == [0x3F81, 0xBF81]
  d = run_op("cvt.rn.f32.f64 %d, %a;", ['f64'], 'f32', np.array([1 + 2**-24, 1 + 3 * 2**-25, 1e300, 1e-50], np.float64))
  assert list(d) == [1.0, np.float32(1 + 2**-23), np.inf, 0.0]   # a tie to even, then 0.75 ulp up
  assert list(run_op("cvt.f32.bf16 %d, %a;", ['bf16'], 'f32', np.array([0x3F80, 0xC000], np.uint16))) == [1.0, -2.0]

def test_cvt_int_narrow_widen_and_sat():
  x = np.array([0x1FF, -1, 300, -300], np.int32)
  assert list(run_op("cvt.u8.s32 %d, %a;", ['s32'], 'u8', x)) == [0xFF, 0xFF, 44, 212]
  assert list(run_op("cvt.sat.u8.s32 %d, %a;", ['s32'], 'u8', x)) == [255, 0, 255, 0]
  assert list(run_op("cvt.sat.s8.s32 %d, %a;", ['s32'], 's8', x)) == [127, -1, 127, -128]
  assert list(run_op("cvt.s64.s32 %d, %a;", ['s32'], 's64', x)) == [0x1FF, -1, 300, -300]
  assert list(run_op("cvt.u64.u32 %d, %a;", ['u32'], 'u64', x.view(np.uint32))) == [0x1FF, 2**32 - 1, 300, 2**32 - 300]
  assert list(run_op("cvt.s16.s8 %d, %a;", ['s8'], 's16', np.array([-128, 127, -1], np.int8))) == [-128, 127, -1]

def test_transcendentals_within_isa_bounds_and_specials():
  x = np.array([0.5, 1.0, 3.7, 100.0, 1e-3, 7.0], np.float32)
  for op, f, bound in [("ex2", np.exp2, 2**-21), ("lg2", np.log2, 2**-21), ("sin", np.sin, 2**-20), ("cos", np.cos, 2**-20),
                       ("rsqrt", lambda v: 1 / np.sqrt(v), 2**-21), ("rcp", lambda v: 1 / v, 2**-22), ("sqrt", np.sqrt, 2**-22)]:
    out = run_op(f"{op}.approx.ftz.f32 %d, %a;", ['f32'], 'f32', x)
    ref = f(x.astype(np.float64))
    assert np.all(np.abs(out - ref) <= bound * np.maximum(np.abs(ref), 1)), op
  sp = np.array([-np.inf, 0.0, -1.0, np.inf, np.nan], np.float32)
  ex2 = run_op("ex2.approx.f32 %d, %a;", ['f32'], 'f32', sp)
  assert ex2[0] == 0 and ex2[1] == 1 and ex2[3] == np.inf and np.isnan(ex2[4])
  lg2 = run_op("lg2.approx.f32 %d, %a;", ['f32'], 'f32', sp)
  assert lg2[1] == -np.inf and np.isnan(lg2[2]) and lg2[3] == np.inf
  rcp = run_op("rcp.rn.f32 %d, %a;", ['f32'], 'f32', sp)
  assert rcp[1] == np.inf and rcp[0] == -0.0 and np.signbit(rcp[0])
  assert np.isnan(run_op("sqrt.rn.f32 %d, %a;", ['f32'], 'f32', sp)[2])
  np.testing.assert_array_equal(run_op("sqrt.rn.f64 %d, %a;", ['f64'], 'f64', np.array([2.0, 1e-310])), np.sqrt([2.0, 1e-310]))
  h = run_op("ex2.approx.f16 %d, %a;", ['f16'], 'f16', np.array([1, -1, 15.9], np.float16))
  assert list(h[:2]) == [2, 0.5] and abs(int(h[2].view(np.uint16)) - int(np.exp2(np.float32(np.float16(15.9))).astype(np.float16).view(np.uint16))) <= 1

def test_selp_mov_pack_unpack():
  a, b = np.array([1.5, 2.5], np.float32), np.array([-1, -2], np.float32)
  extra = ".reg .pred %pp; .reg .b16 %h0, %h1; .reg .b32 %w;"
  out = run_op("setp.lt.f32 %pp, %a, 2.0; selp.f32 %d, %a, %b, %pp;", ['f32', 'f32'], 'f32', a, b, extra_regs=extra)
  assert list(out) == [1.5, -2]
  sw = run_op("mov.b32 {%h0, %h1}, %a; mov.b32 %d, {%h1, %h0};", ['b32'], 'b32', np.array([0x11112222], np.uint32), extra_regs=extra)
  assert int(sw[0]) == 0x22221111
  assert list(run_op("mov.b32 %d, 0f3F800000;", ['b32'], 'f32', np.zeros(1, np.uint32))) == [1.0]

def test_unsupported_instruction_names_kernel_and_instruction():
  with pytest.raises(Unsupported, match=r"k.*shfl\.sync"):
    run_op("shfl.sync.bfly.b32 %d, %a, 1, 31, -1;", ['b32'], 'b32', np.zeros(1, np.uint32))
  with pytest.raises(Unsupported, match="sin.approx.f64"):
    run_op("sin.approx.f64 %d, %a;", ['f64'], 'f64', np.zeros(1))
