# The interpreter's fast paths agree with its general code on everything they cover: constant prmt selectors, constant shifts, the
# casts cvt leaves to numpy, and global accesses that skip materializing addresses.
import itertools, numpy as np, pytest
from orin_emu.faults import MMUFault, SMException
from orin_emu.ptx import sm
from orin_emu.ptx.lower import prmt_const, _prmt, _shift, cvt_fn, cvt_value, _fma64, NP, FLOATS
from orin_emu.ptx.parse import TYPE_SIZE
from orin_emu.ptx.testing import DictMemory
from orin_emu.tests.test_ptx_launch import run, TID

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
rng = np.random.default_rng(0)

def bits(dt, n=512):
  """random bit patterns of dt with its edge values (0, extremes, NaN/inf/denormals/-0.0 for floats)"""
  u = np.dtype(dt).itemsize
  raw = rng.integers(0, 256, n * u, dtype=np.uint8).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[u]).view(dt)
  if np.dtype(dt).kind == 'f':
    edge = np.array([0, -0.0, 1, -1, 0.5, np.inf, -np.inf, np.nan, np.finfo(dt).tiny, np.finfo(dt).tiny / 4, np.finfo(dt).max, 65504, 2**31, -2**31,
                     2**32, 2**63, 1e20], np.float64).astype(dt)
  else: edge = np.array([0, 1, np.iinfo(dt).min, np.iinfo(dt).max, np.iinfo(dt).max // 2 + 1], dtype=object).astype(dt)
  return np.concatenate([raw, edge])

def test_prmt_constant_selector():
  a, b = bits(np.uint32, 64), bits(np.uint32, 64)
  for c in [*rng.integers(0, 1 << 16, 3000), 0x3210, 0x7654, 0x7604, 0x5410, 0x8888, 0xFFFF, 0x0123]:
    np.testing.assert_array_equal(prmt_const(int(c))(a, b), _prmt(a, b, np.uint32(c)), err_msg=hex(c))
  assert prmt_const(0x8421)(np.uint32(0x80000080), np.uint32(0x8000)) == _prmt(np.uint32(0x80000080), np.uint32(0x8000), np.uint32(0x8421))

@pytest.mark.parametrize("ty", ["b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64"])
def test_constant_shifts(ty):
  x = bits(NP[ty])
  for op, k in itertools.product(("shl", "shr"), range(8*TYPE_SIZE[ty])):
    body = f".reg .{ty} %x, %d;\nmov.{ty} %x, 0;\n{op}.{ty} %d, %x, {k};"   # lowered with the constant as written
    f = sm.program(sm_src(body)).funcs["k"].code[1][1]
    st = _State(x, NP[ty])
    f(st, slice(None))
    np.testing.assert_array_equal(st.R[1].view(NP[ty]), _shift(op, ty, x, np.uint32(k)), err_msg=f"{op}.{ty} {k}")

def sm_src(body): return f".version 8.5\n.target sm_87\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}"

class _State:
  """registers %x (holding x) and %d of a one-instruction program, as CTABatch keeps them"""
  def __init__(self, x, dt):
    self.R, self.U, self.live, self.N, self.bases = [x.view(sm.UINT[x.itemsize]).copy(), np.zeros(len(x), sm.UINT[x.itemsize])], {}, slice(None), len(x), {}
    self.dts = [r.dtype for r in self.R]

@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_fma_widened_operands(dt):
  x, y, z = bits(dt), bits(dt)[::-1], np.roll(bits(dt), 7)
  for p, q, r in ((x, y, z), (x[3], y, z), (x, y[5], z[9]), (x[1], y[2], z)):
    want = np.add(np.multiply(p, q, dtype=np.float64), r, dtype=np.float64)
    np.testing.assert_array_equal(np.asarray(_fma64(p, q, r)).view(np.uint64), np.asarray(want).view(np.uint64))

TYPES = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "f32", "f64"]
@pytest.mark.parametrize("sty", TYPES)
def test_cvt_casts(sty):
  x = bits(NP[sty])
  for dty in TYPES:
    for mods in ([], ["rn"], ["rz"], ["sat"], ["rni"], ["ftz"]):
      if (mods == ["rn"] or mods == ["rz"]) and dty not in FLOATS: continue
      want = cvt_value(x, dty, sty, mods)
      np.testing.assert_array_equal(np.asarray(cvt_fn(dty, sty, mods)(x)).view(np.uint8), np.asarray(want).view(np.uint8), err_msg=f"cvt.{mods}.{dty}.{sty}")

# memory accesses: through _direct (global ones once their mapping is known), through the general routing with _direct off
MEM = TID + """.reg .u64 %b, %s, %g; .reg .u32 %x<4>; .shared .align 16 .b8 sm[1024];
  ld.param.u64 %b, [b1];
  cvt.u64.u32 %o, %t; add.u64 %w, %a, %o;
  ld.global.u8 %v0, [%w]; ld.global.u8 %v1, [%w+1]; mov.u32 %c, %ctaid.x; mad.lo.u32 %v1, %c, 1000, %v1;
  add.u64 %w, %w, 8; ld.global.u8 %v2, [%w+-7]; add.u32 %v0, %v0, %v2;
  ld.global.u32 %v3, [%a+8]; add.u32 %v0, %v0, %v3;
  mul.wide.u32 %o, %t, 16; add.u64 %w, %a, %o; add.u64 %w, %w, 4096;
  ld.global.v4.u32 {%x0, %x1, %x2, %x3}, [%w+-4080]; add.u32 %v0, %v0, %x3; add.u32 %v1, %v1, %x0;
  mov.u64 %s, sm; cvta.shared.u64 %g, %s; mul.wide.u32 %o, %t, 4; add.u64 %g, %g, %o;
  st.u32 [%g], %v1; bar.sync 0;
  setp.lt.u32 %p, %t, 32; add.u64 %w, %a, %o; selp.b64 %w, %g, %w, %p; ld.u32 %v2, [%w];
  .reg .u64 %l, %e; .reg .u32 %y<4>; .local .align 16 .b8 depot[64];
  mul.wide.u32 %o, %t, 4; add.u64 %e, %s, %o; st.shared.u32 [%e+256], %v1; bar.sync 0;
  ld.shared.v4.u32 {%y0, %y1, %y2, %y3}, [%s+272]; add.u32 %v2, %v2, %y1; ld.shared.u32 %y0, [%e+260]; add.u32 %v1, %v1, %y0;
  mov.u64 %l, depot; st.local.u32 [%l+28], %t; st.local.v2.u32 [%l+16], {%v1, %v2}; ld.local.v4.u32 {%y0, %y1, %y2, %y3}, [%l+16];
  add.u32 %v0, %v0, %y0; add.u32 %v1, %v1, %y3;
  mul.wide.u32 %o, %t, 16; add.u64 %e, %s, %o; st.shared.v2.u32 [%e], {%v0, %v1}; bar.sync 0; ld.shared.v4.u32 {%y0, %y1, %y2, %y3}, [%e];
  ld.shared.u32 %y2, [%e+4]; add.u32 %v0, %v0, %y2; st.local.v4.u32 [%l+32], {%v1, %v0, %y1, %y0}; ld.local.u32 %y3, [%l+36];
  ld.local.v2.u32 {%y0, %y1}, [%l+40]; add.u32 %v1, %v1, %y3; add.u32 %v1, %v1, %y0; mov.u64 %e, 8; ld.local.u32 %y1, [%e+24];
  add.u32 %v2, %v2, %y1; and.b32 %n, %t, 3; mul.wide.u32 %o, %n, 16; st.local.u32 [%o], %v1; ld.local.u32 %y1, [%o]; add.u32 %v2, %v2, %y1;
  mad.lo.u32 %n, %c, 64, %t; mul.wide.u32 %o, %n, 4; add.u64 %w, %b, %o;
  st.global.u32 [%w], %v0; st.global.u32 [%w+1024], %v2; st.global.u32 [%b+3072], %t; st.global.u8 [%w+2048], %v1;"""

def _both(monkeypatch, fn):
  fast = fn()
  with monkeypatch.context() as m:
    m.setattr(sm.CTABatch, "_direct", lambda *args: None)
    assert fn() == fast
  return fast

def test_direct_global_accesses(monkeypatch):
  def go():
    src, out = np.arange(8192, dtype=np.uint8).copy(), np.zeros(1024, np.uint32)
    run(MEM, src[16:], out, grid=(3, 1, 1), block=(64, 1, 1))
    return out.tobytes()
  assert any(_both(monkeypatch, go))

@pytest.mark.parametrize("bad", ["ld.global.u32 %v1, [%a+2];", "ld.global.u8 %v1, [%w+4093];", "st.global.u8 [%w+4093], 1;",
                                 "ld.global.u8 %v1, [%a+-1];", "ld.global.u64 %w, [%a+-8];", "ld.global.u32 %v1, [%a+4096];",
                                 "ld.global.v2.u32 {%v1, %v2}, [%w+4];", "ld.global.u8 %v1, [%a+18446744073709551615];",
                                 "ld.shared.u32 %v1, [%s+1024];", "st.shared.u8 [%e+1021], 1;", "ld.shared.u32 %v1, [%e+2];",
                                 "ld.local.u32 %v1, [%l+64];", "st.local.v2.u32 [%l+4], {%v1, %v2};", "ld.shared.u8 %v1, [%s+-1];",
                                 "mul.wide.u32 %o, %t, 16; add.u64 %e, %s, %o; ld.shared.u32 %v1, [%e]; ld.shared.u32 %v1, [%e+2];",
                                 "mul.wide.u32 %o, %t, 16; add.u64 %w, %a, %o; ld.global.u32 %v1, [%w]; ld.global.v2.u32 {%v1, %v2}, [%w+4];"])
def test_direct_faults(monkeypatch, bad):
  pre = TID + """.reg .u64 %s, %l, %e; .shared .align 16 .b8 sm[1024]; .local .align 16 .b8 depot[64];
  ld.global.u8 %v0, [%a]; mov.u64 %s, sm; mov.u64 %l, depot; ld.shared.u8 %v0, [%s]; ld.local.u8 %v0, [%l];
  cvt.u64.u32 %w, %t; add.u64 %w, %w, %a; add.u64 %e, %s, %w; sub.u64 %e, %e, %a;\n"""
  def go():
    try: run(pre + bad, np.zeros(4096, np.uint8), block=(4, 1, 1), shared_bytes=1024)
    except (MMUFault, SMException) as e: return repr(e)
    return "no fault"
  assert _both(monkeypatch, go) != "no fault"

def test_direct_access_stops_at_a_window(monkeypatch):
  # a mapping that runs into the shared window: past the window's start a generic address is shared memory, mapping or not
  def go():
    mem = DictMemory()
    va, buf = mem.map_at(0xFE00000000 - 0x1000, np.arange(0x2000, dtype=np.uint8).astype(np.uint8))
    body = ".reg .u64 %g; .reg .u32 %v<2>;\nmov.u64 %g, " + str(va) + """;
    ld.u32 %v0, [%g]; ld.u32 %v1, [%g+4100]; st.u32 [%g+16], %v0; st.u32 [%g+20], %v1;"""
    run(body, mem=mem, shared_bytes=0x400)
    return buf[16:24].view(np.uint32).tolist()
  assert _both(monkeypatch, go) == [0x03020100, 0]

@pytest.mark.parametrize("ld,reg,want", [("s8", "s32", lambda x: x.view(np.int8).astype(np.int32)), ("s8", "u64", lambda x: x.view(np.int8).astype(np.int64)),
  ("u8", "u32", lambda x: x.astype(np.uint32)), ("s16", "b64", lambda x: x.view(np.int16).astype(np.int64)), ("u16", "u64", lambda x: x.astype(np.uint64))])
def test_narrow_values_widen_into_registers(ld, reg, want):
  # a register wider than the value's type: sign-extended for signed types, zero-extended for the others, per lane and uniform alike
  x = np.array([0, 1, 0x7F, 0x80, 0xFF, 0x10, 0xFE, 0x42], np.uint8) if ld[1:] == "8" else np.array([0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x1234, 0xFF80, 0x80], np.uint16)
  out, size = np.zeros(16, np.uint64), x.itemsize
  body = TID + f""".reg .{reg} %r, %u; .reg .u64 %b, %x;
  ld.param.u64 %b, [b1]; mul.wide.u32 %o, %t, {size}; add.u64 %w, %a, %o;
  ld.global.{ld} %r, [%w]; ld.global.{ld} %u, [%a+{3 * size}]; cvt.u64.{reg.replace('b', 'u')} %x, %r;
  mul.wide.u32 %o, %t, 8; add.u64 %w, %b, %o; st.global.u64 [%w], %x; cvt.u64.{reg.replace('b', 'u')} %x, %u; st.global.u64 [%w+64], %x;"""
  run(body, x, out, block=(8, 1, 1))
  np.testing.assert_array_equal(out[:8], want(x).astype(np.int64).view(np.uint64))
  assert (out[8:] == out[3]).all()

def test_exited_threads_are_dropped_alike(monkeypatch):
  # after most threads exit, the rest run on compacted lanes: registers, carries, special registers, .local, .shared and call
  # parameters stay each thread's own
  pre = """.func (.param .b32 ret0) twice(.param .b32 x)
{ .reg .b32 %r<2>; ld.param.b32 %r0, [x]; shl.b32 %r1, %r0, 1; st.param.b32 [ret0], %r1; ret; }"""
  body = TID + """.reg .u64 %l, %e, %s; .shared .align 4 .b8 sm[256]; .local .align 4 .b8 depot[8];
  mov.u64 %l, depot; st.local.u32 [%l+4], %t; mov.u64 %s, sm; mul.wide.u32 %o, %t, 4; add.u64 %e, %s, %o; st.shared.u32 [%e], %t;
  bar.sync 0; mov.u32 %c, %ctaid.x; mad.lo.u32 %v0, %c, 1000, %t; add.cc.u32 %v3, %t, 4294967292;
  .param .b32 keep; st.param.b32 [keep], %v0;
  and.b32 %n, %t, 7; setp.ne.u32 %p, %n, 5; @%p ret;
  ld.param.b32 %v2, [keep]; add.u32 %v0, %v0, %v2; ld.local.u32 %v1, [%l+4]; ld.shared.u32 %v2, [%e+-4]; add.u32 %v1, %v1, %v2; addc.u32 %v3, 0, 0; mov.u32 %n, %laneid;
  { .param .b32 arg0; st.param.b32 [arg0], %v1; .param .b32 rv; call.uni (rv), twice, (arg0); ld.param.b32 %v1, [rv]; }
  mov.u32 %v2, %tid.x; mad.lo.u32 %v1, %v1, 10, %v3; mad.lo.u32 %v2, %v2, 100, %n;
  mad.lo.u32 %n, %c, 64, %t; mul.wide.u32 %o, %n, 16; add.u64 %w, %a, %o; st.global.v4.u32 [%w], {%v0, %v1, %v2, %v3};"""
  def go():
    out = np.zeros(4 * 3 * 64, np.uint32)
    run(body, out, grid=(3, 1, 1), block=(64, 1, 1), pre=pre)
    return out.tobytes()
  fast = go()
  with monkeypatch.context() as m:
    m.setattr(sm.CTABatch, "compact", lambda self, idx: idx)
    assert go() == fast
  out = np.frombuffer(fast, np.uint32).reshape(3, 64, 4)
  assert (out[:, 5::8, 0] == 2 * (np.arange(3)[:, None] * 1000 + np.arange(5, 64, 8))).all() and (out[:, 5::8, 3] == 1).all()
  assert (out[:, 5::8, 1] == 2 * (2 * np.arange(5, 64, 8) - 1) * 10 + 1).all() and out[:, 6::8].sum() == 0
