# Lowering: each PTX instruction becomes a closure f(st, s) over numpy arrays; s selects the threads (slice or index array).
# Semantics follow the PTX ISA: registers hold raw bits, instructions reinterpret them by their type.
import re, numpy as np
from orin_emu.faults import SMException
from orin_emu.ptx.parse import TYPE_SIZE, Instr, PTXError

UINT = {1:np.uint8, 2:np.uint16, 4:np.uint32, 8:np.uint64}
SINT = {1:np.int8, 2:np.int16, 4:np.int32, 8:np.int64}
NP = {**{f'u{8*k}':v for k,v in UINT.items()}, **{f'b{8*k}':v for k,v in UINT.items()}, **{f's{8*k}':v for k,v in SINT.items()},
      'f16':np.float16, 'f32':np.float32, 'f64':np.float64, 'bf16':np.uint16, 'f16x2':np.uint32, 'bf16x2':np.uint32, 'pred':np.bool_}
FLOATS = {'f16', 'bf16', 'f32', 'f64'}
TINY = {np.float16: np.float16(6.103515625e-05), np.float32: np.float32(1.1754944e-38), np.float64: np.float64(2.2250738585072014e-308)}

class Unsupported(PTXError): pass

def nsel(st, s): return st.N if isinstance(s, slice) else len(s)

# ---- number formats
def bf16_to_f32(b): return (np.asarray(b, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
def f32_to_bf16(x, mode='rn'):
  """Round f32 to bf16 bits; NaN stays a quiet NaN."""
  u = np.asarray(x, np.float32).view(np.uint32)
  if mode == 'rn': r = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
  elif mode == 'rz': r = u >> np.uint32(16)
  else:
    up, neg, exact = (u & np.uint32(0xFFFF)) != 0, (u >> np.uint32(31)) == 1, u >> np.uint32(16)
    r = np.where(up & (neg == (mode == 'rm')), exact + np.uint32(1), exact)
  return np.where(np.isnan(np.asarray(x, np.float32)), (u >> np.uint32(16)) | np.uint32(0x40), r).astype(np.uint16)
def f64_to_bf16(x, mode='rn'):
  # round-to-odd into f32 keeps the final rounding to 8 bits exact
  x = np.asarray(x, np.float64)
  r = round_to(x, np.float32, 'rz')
  odd = (r.astype(np.float64) != x) & np.isfinite(x)
  return f32_to_bf16(np.where(odd, (r.view(np.uint32) | np.uint32(1)).view(np.float32), r), mode)

def round_to(x, dt, mode):
  """x holds the exact value in a wider format (float64 / longdouble); round it to dt with a PTX rounding mode."""
  r = np.asarray(x).astype(dt)
  if mode in ('rn', None): return r
  rx = r.astype(np.asarray(x).dtype)
  if mode == 'rz': adj, to = np.abs(rx) > np.abs(x), dt(0)
  elif mode == 'rm': adj, to = rx > x, dt(-np.inf)
  elif mode == 'rp': adj, to = rx < x, dt(np.inf)
  else: raise Unsupported(f"rounding mode {mode}")
  return np.where(adj, np.nextafter(r, to), r).astype(dt)

def ftz(x):
  x = np.asarray(x)
  return np.where(np.abs(x) < TINY[x.dtype.type], np.copysign(x.dtype.type(0), x), x).astype(x.dtype)

def sat01(x): return np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1)).astype(x.dtype)

def _fma64(p, q, r):
  """p*q + r in float64, where a product of two floats or halves is exact (operands widened first: numpy's contiguous casts beat
  casting inside the ufunc)"""
  w = np.multiply(np.asarray(p, np.float64), np.asarray(q, np.float64))
  return np.add(w, np.asarray(r, np.float64), out=w) if w.ndim else w + np.asarray(r, np.float64)

def two_prod_fma(a, b, c):
  """f64 fma via error-free transformations: faithful (exact except in rare double-rounding cases)."""
  p = a * b
  sp = np.float64(134217729.0)
  ah, bh = a*sp - (a*sp - a), b*sp - (b*sp - b)
  al, bl = a - ah, b - bh
  e = ((ah*bh - p) + ah*bl + al*bh) + al*bl
  s = p + c
  bb = s - p
  t = (p - (s - bb)) + (c - bb)
  r = s + (t + e)
  # overflowing products and infinities: the wide exponent of longdouble keeps a*b finite
  return np.where(np.isfinite(p) & np.isfinite(r), r, (a.astype(np.longdouble) * b + c).astype(np.float64))

# ---- operand access
def imm_value(op, ty):
  kind, v, dt = op[1], op[2], NP[ty]
  if ty == 'pred': return np.bool_(v != 0)
  if kind == 'int':
    if ty in FLOATS and ty != 'bf16': return dt(v)
    return np.array(v & ((1 << 8*TYPE_SIZE[ty]) - 1), dtype=UINT[TYPE_SIZE[ty]]).view(dt)[()]
  f = np.uint32(v).view(np.float32) if kind == 'f32' else np.uint64(v).view(np.float64) if kind == 'f64' else np.float64(v)
  if ty == 'bf16': return f32_to_bf16(np.float32(f))[()]
  if ty in FLOATS: return dt(f)
  if kind == 'float': raise Unsupported(f"float literal {v} for .{ty}")
  bits = int(np.asarray(f).view(UINT[np.asarray(f).itemsize]))
  return np.array(bits & ((1 << 8*TYPE_SIZE[ty]) - 1), dtype=UINT[TYPE_SIZE[ty]]).view(dt)[()]

# A value every live thread computed alike (loop counters, addresses of uniform loops) stays one 0-d array in st.U until threads diverge:
# its instructions then cost a scalar numpy op, not one over every lane (which also drops the GIL the emulated GPU shares with the host).
def reg(st, rid, s): return u if (u:=st.U.get(rid)) is not None else st.R[rid][s]

def put(st, rid, s, v):
  st.bases.pop(rid, None)
  if s is st.live:   # every live thread: the register's lane values are all replaced
    if v.ndim == 0: st.U[rid] = v if v.dtype == st.dts[rid] else v.astype(st.dts[rid]); return
    if st.U.pop(rid, None) is not None and st.R[rid] is None: st.R[rid] = np.empty(st.N, st.dts[rid])
  elif (u:=st.U.pop(rid, None)) is not None:   # some threads only: the others keep the shared value
    if st.R[rid] is None: st.R[rid] = np.empty(st.N, st.dts[rid])
    st.R[rid][:] = u
  st.R[rid][s] = v

def reader(op, ty):
  kind, dt = op[0], NP[ty]
  if kind == 'reg':
    r = op[1]; rid, rsz, size = r.rid, TYPE_SIZE[r.type], TYPE_SIZE[ty]
    if r.type == 'pred' or ty == 'pred':
      if r.type != ty: raise Unsupported(f"predicate/non-predicate mix {r.name} as .{ty}")
      return lambda st, s: reg(st, rid, s)
    if rsz == size: return lambda st, s: reg(st, rid, s).view(dt)
    ut = UINT[size]
    return lambda st, s: reg(st, rid, s).astype(ut).view(dt)
  if kind == 'imm': v = imm_value(op, ty); return lambda st, s: v
  if kind == 'sreg': name = op[1]; return lambda st, s: (v.astype(dt) if (v:=st.sreg[name]).ndim == 0 else v[s].astype(dt))
  if kind == 'not':
    inner = reader(op[1], 'pred'); return lambda st, s: ~inner(st, s)
  if kind == 'sym':
    addr = sym_addr(op); return lambda st, s: dt(addr(st))
  raise Unsupported(f"operand {op[0]} as source")

def sym_addr(op):
  """Address of a symbol in its own state space (global: GPU VA; shared/local: offset in the space)."""
  _, kind, var, off = op
  if kind == 'global': return lambda st: st.global_va[var.name] + off
  if kind in ('shared', 'local'): return lambda st: st.layout[id(var)] + off
  raise Unsupported(f"address of .{kind} symbol {var.name}")

def writer(op, ty):
  if op[0] == 'sink': return lambda st, s, v: None
  if op[0] != 'reg': raise Unsupported(f"destination {op}")
  r = op[1]; rid, rsz, size, dt = r.rid, TYPE_SIZE[r.type], TYPE_SIZE[ty], NP[ty]
  if r.type == 'pred' or ty == 'pred':
    if r.type != ty: raise Unsupported(f"predicate/non-predicate mix {r.name} as .{ty}")
    def wp(st, s, v): put(st, rid, s, np.asarray(v, np.bool_))
    return wp
  # put() casts to the register's width: sign-extending a signed value, zero-extending or truncating the bits of any other
  if rsz > size and ty[0] == 's': return lambda st, s, v: put(st, rid, s, np.asarray(v, dt))
  ut = UINT[size]
  return lambda st, s, v: put(st, rid, s, np.asarray(v, dt).view(ut))

def elems(op): return op[1] if op[0] == 'vec' else [op]

# ---- instruction families
def _cmp(cmp, a, b, isfloat):
  if cmp in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'lo', 'ls', 'hi', 'hs'):
    f = {'eq':np.equal, 'ne':np.not_equal, 'lt':np.less, 'le':np.less_equal, 'gt':np.greater, 'ge':np.greater_equal,
         'lo':np.less, 'ls':np.less_equal, 'hi':np.greater, 'hs':np.greater_equal}[cmp]
    r = f(a, b)
    return r & ~(np.isnan(a) | np.isnan(b)) if isfloat and cmp == 'ne' else r
  if not isfloat: raise Unsupported(f"comparison {cmp} on integers")
  nan = np.isnan(a) | np.isnan(b)
  if cmp == 'nan': return nan
  if cmp == 'num': return ~nan
  return _cmp(cmp[:-1], a, b, True) | nan

def _as_float(v, ty):
  if ty == 'bf16': return bf16_to_f32(v)
  return v

def _unsigned(ty): return NP['u'+ty[1:]] if ty[0] in 'sb' and ty not in FLOATS else NP[ty]

def _mulhi(a, b, ty):
  size = TYPE_SIZE[ty]
  if size < 8:
    w = SINT[2*size] if ty[0] == 's' else UINT[2*size]
    return ((a.astype(w) * b.astype(w)) >> (8*size)).astype(NP[ty])
  ua, ub = np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64)
  m32 = np.uint64(0xFFFFFFFF); s32 = np.uint64(32)
  al, ah, bl, bh = ua & m32, ua >> s32, ub & m32, ub >> s32
  ll, lh, hl, hh = al*bl, al*bh, ah*bl, ah*bh
  mid = (ll >> s32) + (lh & m32) + (hl & m32)
  hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
  if ty[0] == 's':  # signed correction: hi(a*b) = hi_u - (a<0)*b - (b<0)*a
    hi = hi - np.where(np.asarray(a) < 0, ub, np.uint64(0)) - np.where(np.asarray(b) < 0, ua, np.uint64(0))
  return hi.view(NP[ty])

def _divrem(a, b, ty, rem):
  if ty[0] == 'u' or ty[0] == 'b':
    safe = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, a if rem else np.iinfo(NP[ty]).max, (a % safe) if rem else (a // safe)).astype(NP[ty])
  u, a, b = UINT[TYPE_SIZE[ty]], np.asarray(a), np.asarray(b)
  ua, ub = np.where(a < 0, -a.astype(u), a.astype(u)), np.where(b < 0, -b.astype(u), b.astype(u))
  safe = np.where(ub == 0, 1, ub).astype(u)
  if rem:   # remainder takes the dividend's sign; x rem 0 = x
    r = ua % safe; r = np.where(a < 0, -r, r).astype(u)
    return np.where(ub == 0, a.astype(u), r).view(NP[ty])
  q = ua // safe; q = np.where((a < 0) ^ (b < 0), -q, q).astype(u)
  return np.where(ub == 0, u(np.iinfo(u).max), q).view(NP[ty])   # x/0 = all ones, as the hardware's unsigned divide leaves it

def _shift(op, ty, a, n):
  size = 8*TYPE_SIZE[ty]
  n = np.asarray(n).astype(np.uint32)
  big = n >= size
  nc = np.minimum(n, size - 1).astype(a.dtype)
  if op == 'shl': return np.where(big, a.dtype.type(0), a << nc).astype(a.dtype)
  if ty[0] == 's': return (a >> nc).astype(a.dtype)   # arithmetic shift saturates at size-1: sign fill
  return np.where(big, a.dtype.type(0), a >> nc).astype(a.dtype)

def _clz(a, ty):
  size = 8*TYPE_SIZE[ty]; u = np.asarray(a).view(UINT[TYPE_SIZE[ty]]).astype(np.uint64)
  n = np.zeros(np.shape(u), np.uint64)
  for k in (32, 16, 8, 4, 2, 1):
    hit = (u >> np.uint64(k)) != 0
    n, u = np.where(hit, n + np.uint64(k), n), np.where(hit, u >> np.uint64(k), u)
  return (size - (n + (u != 0))).astype(np.uint32)

def _popc(a, ty):
  u = np.asarray(a).view(UINT[TYPE_SIZE[ty]]).astype(np.uint64)
  return np.bitwise_count(u).astype(np.uint32)

def _prmt(a, b, c):
  x = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
  c = np.asarray(c).astype(np.uint32)
  out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
  for i in range(4):
    sel = (c >> np.uint32(4*i)) & np.uint32(0xF)
    byte = ((x >> (8*(sel & np.uint32(7))).astype(np.uint64)) & np.uint64(0xFF)).astype(np.uint32)
    byte = np.where(sel & np.uint32(8), np.where(byte & np.uint32(0x80), np.uint32(0xFF), np.uint32(0)), byte)
    out |= byte << np.uint32(8*i)
  return out

def prmt_const(c:int):
  """_prmt with a constant selector: the bytes that move by the same shift from the same source take one shift and mask"""
  moves, signs = {}, []
  for i in range(4):
    sel = (c >> 4*i) & 0xF
    if sel & 8: signs.append((sel >> 2 & 1, 8*(sel & 3) + 7, np.uint32(0xFF << 8*i)))
    else: moves[(sel >> 2, 8*(i - (sel & 3)))] = moves.get((sel >> 2, 8*(i - (sel & 3))), 0) | 0xFF << 8*i
  moves = [(src, np.uint32(abs(sh)), sh >= 0, np.uint32(m)) for (src, sh), m in moves.items()]
  def f(a, b):
    out, ab = None, (a, b)
    for src, sh, left, m in moves:
      v = ab[src] if not sh else ab[src] << sh if left else ab[src] >> sh
      v = v if m == 0xFFFFFFFF else v & m
      out = v if out is None else out | v
    for src, bit, m in signs:
      v = np.where(ab[src] >> np.uint32(bit) & np.uint32(1), m, np.uint32(0))
      out = v if out is None else out | v
    return np.asarray(out, np.uint32)
  return f

def _bfe(a, pos, ln, ty):
  # PTX ISA bfe: bits past the msb (or past len) read as the sign bit a[min(pos+len-1, msb)] for signed types, else 0
  size = 8*TYPE_SIZE[ty]; u = UINT[TYPE_SIZE[ty]]
  pos, ln = np.asarray(pos).astype(np.int64) & 0xFF, np.asarray(ln).astype(np.int64) & 0xFF
  ua = np.asarray(a).view(u).astype(np.uint64)
  nvalid = np.clip(np.minimum(ln, size - pos), 0, 64).astype(np.uint64)
  mask = np.where(nvalid >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << np.minimum(nvalid, 63)) - np.uint64(1))
  v = (ua >> np.minimum(pos, size - 1).astype(np.uint64)) & mask
  if ty[0] == 's':
    sbit = np.where(ln == 0, np.uint64(0), (ua >> np.minimum(pos + ln - 1, size - 1).astype(np.uint64)) & np.uint64(1))
    v = v | np.where(sbit == 1, ~mask, np.uint64(0))
  return v.astype(u).view(NP[ty])

def _bfi(a, b, pos, ln, ty):
  size = 8*TYPE_SIZE[ty]; u = UINT[TYPE_SIZE[ty]]
  pos, ln = np.asarray(pos).astype(np.uint64) & np.uint64(0xFF), np.asarray(ln).astype(np.uint64) & np.uint64(0xFF)
  ua, ub = np.asarray(a).view(u).astype(np.uint64), np.asarray(b).view(u).astype(np.uint64)
  ln_c = np.minimum(ln, np.maximum(np.int64(size) - pos.astype(np.int64), 0).astype(np.uint64))
  mask = np.where(ln_c >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << np.minimum(ln_c, 63)) - np.uint64(1))
  sh = np.minimum(pos, 63)
  r = (ub & ~(mask << sh)) | ((ua & mask) << sh)
  return np.where((ln == 0) | (pos >= size), ub, r).astype(u).view(NP[ty])

UNARY_F = {'sqrt': np.sqrt, 'ex2': np.exp2, 'lg2': np.log2, 'sin': np.sin, 'cos': np.cos, 'tanh': np.tanh,
           'rcp': lambda x: x.dtype.type(1) / x, 'rsqrt': lambda x: x.dtype.type(1) / np.sqrt(x)}

def _parse_op(op):
  parts = op.split('.')
  base, mods = parts[0], parts[1:]
  types = [m for m in mods if m in NP]
  return base, mods, types

def lower(ins:Instr, fn_name:str):
  """Return (kind, payload): ('op', closure) for straight-line work, or a control kind for the executor."""
  base, mods, types = _parse_op(ins.op)
  a = ins.args
  if base == 'bra': return ('bra', a[0][1])
  if base in ('ret', 'exit'): return ('ret', None)
  if base == 'trap': return ('op', _trap)
  if base in ('bar', 'barrier'):
    if 'arrive' in mods or 'red' in mods: raise Unsupported(ins.op)
    return ('bar', None)
  if base == 'call': return ('call', (a[0], a[1], a[2]))
  if base in ('membar', 'fence'): return ('op', lambda st, s: None)
  f = _LOWER.get(base)
  if f is None: raise Unsupported(f"instruction {ins.op}")
  return ('op', f(ins, mods, types, a))

def _trap(st, s):
  # BPT.TRAP stops the warp and interrupts the host: an SM exception, recovered like any other. Unconfirmed: the ESR bits it sets
  # without a trap handler (CUDA's driver installs one, nvgpu does not); modelled as the breakpoint interrupt, global ESR 0x10
  # (hw_gr_ga10b.h gr_gpc0_tpc0_sm0_hww_global_esr_bpt_int_pending_f), warp ESR 0
  if nsel(st, s): raise SMException(0, 0, st.program_va, global_esr=0x10, detail=f"{st.entry}: trap")

_LOWER = {}
def fam(*names):
  def deco(fn):
    for n in names: _LOWER[n] = fn
    return fn
  return deco

@fam('mov')
def _mov(ins, mods, types, a):
  ty = types[0]
  d, src = a
  if d[0] == 'vec':   # unpack: first element takes the low bits
    ws = d[1]; part = TYPE_SIZE[ty] // len(ws); rd = reader(src, ty); u, pu = UINT[TYPE_SIZE[ty]], UINT[part]
    wrs = [writer(o, f'b{8*part}') for o in ws]
    def unpack(st, s):
      v = np.asarray(rd(st, s)).view(u)
      for i, w in enumerate(wrs): w(st, s, (v >> u(8*part*i)).astype(pu))
    return unpack
  w = writer(d, ty)
  if src[0] == 'vec':
    es = src[1]; part = TYPE_SIZE[ty] // len(es); u = UINT[TYPE_SIZE[ty]]
    rds = [reader(o, f'b{8*part}') for o in es]
    def pack(st, s):
      v = u(0)
      for i, r in enumerate(rds): v = v | (np.asarray(r(st, s)).astype(u) << u(8*part*i))
      w(st, s, np.asarray(v, u).view(NP[ty]))
    return pack
  if src[0] == 'sym':
    addr = sym_addr(src); dt = NP[ty]
    return lambda st, s: w(st, s, dt(addr(st)))
  rd = reader(src, ty)
  return lambda st, s: w(st, s, rd(st, s))

@fam('cvta')
def _cvta(ins, mods, types, a):
  ty = types[0]; d, src = a
  rd = sym_addr(src) if src[0] == 'sym' else None
  r = reader(src, ty) if rd is None else (lambda st, s: NP[ty](rd(st)))
  w = writer(d, ty); dt = NP[ty]
  space = next(m for m in mods if m in ('global', 'shared', 'local', 'const', 'param'))
  if space == 'global': return lambda st, s: w(st, s, r(st, s))
  win = {'shared': 'shared_window', 'local': 'local_window'}.get(space)
  if win is None: raise Unsupported(f"cvta to .{space}")
  sign = -1 if 'to' in mods else 1
  return lambda st, s: w(st, s, (r(st, s) + dt(sign * getattr(st, win) & (2**(8*TYPE_SIZE[ty]) - 1))).astype(dt))

def _binop_int(base, mods, ty):
  dt = NP[ty]
  if base == 'add': return lambda x, y: x + y
  if base == 'sub': return lambda x, y: x - y
  if base in ('min', 'max'): return np.minimum if base == 'min' else np.maximum
  if base == 'and': return np.bitwise_and
  if base == 'or': return np.bitwise_or
  if base == 'xor': return np.bitwise_xor
  if base in ('div', 'rem'): return lambda x, y: _divrem(np.asarray(x), np.asarray(y), ty, base == 'rem')
  raise Unsupported(f"{base}.{ty}")

def _float_binop(base, mods, ty):
  rnd = next((m for m in mods if m in ('rn', 'rz', 'rm', 'rp')), None)
  dt = NP[ty]
  if base in ('min', 'max'):
    f = np.fmin if base == 'min' else np.fmax
    if 'NaN' in mods: f = np.minimum if base == 'min' else np.maximum
    return lambda x, y: f(x, y)
  if base == 'div' and ty == 'f32' and 'rn' not in mods: return lambda x, y: x / y   # .approx/.full: within 2 ulp
  op = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide}[base]
  if rnd in (None, 'rn') or ty == 'f16': return op
  wide = np.longdouble if ty == 'f64' else np.float64
  return lambda x, y: round_to(op(np.asarray(x, wide), np.asarray(y, wide)), dt, rnd)

@fam('add', 'sub', 'mul', 'div', 'rem', 'min', 'max', 'and', 'or', 'xor', 'addc', 'subc')
def _binary(ins, mods, types, a):
  base = ins.op.split('.')[0]; ty = types[-1]
  d, x, y = a
  rx, ry = reader(x, ty), reader(y, ty)
  if ty == 'pred':
    f = {'and': np.logical_and, 'or': np.logical_or, 'xor': np.logical_xor}[base]; w = writer(d, ty)
    return lambda st, s: w(st, s, f(rx(st, s), ry(st, s)))
  if ty in ('f16x2', 'bf16x2'): return _packed2(base, mods, ty, d, rx, ry)
  if ty in FLOATS:
    w = writer(d, ty)
    if ty == 'bf16':
      f32op = _float_binop(base, mods, 'f32')
      return lambda st, s: w(st, s, f32_to_bf16(f32op(bf16_to_f32(rx(st, s)), bf16_to_f32(ry(st, s)))))
    f = _float_binop(base, mods, ty)
    if ty == 'f16' and base in ('add', 'sub', 'mul', 'div'):
      f = (lambda g: lambda x, y: g(np.asarray(x, np.float32), np.asarray(y, np.float32)).astype(np.float16))(f)
    fz, sat = 'ftz' in mods and ty == 'f32', 'sat' in mods
    if not fz and not sat: return lambda st, s: w(st, s, f(rx(st, s), ry(st, s)))
    def g(st, s):
      x, y = rx(st, s), ry(st, s)
      if fz: x, y = ftz(x), ftz(y)
      r = np.asarray(f(x, y), NP[ty])
      if fz: r = ftz(r)
      return w(st, s, sat01(r) if sat else r)
    return g
  if base == 'mul':
    mode = next((m for m in mods if m in ('lo', 'hi', 'wide')), 'lo')
    if mode == 'wide':
      wt = ('s' if ty[0] == 's' else 'u') + str(16*TYPE_SIZE[ty]); w = writer(d, wt); wd = NP[wt]
      return lambda st, s: w(st, s, np.asarray(rx(st, s)).astype(wd) * np.asarray(ry(st, s)).astype(wd))
    w = writer(d, ty)
    if mode == 'hi': return lambda st, s: w(st, s, _mulhi(rx(st, s), ry(st, s), ty))
    return lambda st, s: w(st, s, rx(st, s) * ry(st, s))
  w = writer(d, ty)
  if base in ('addc', 'subc') or 'cc' in mods: return _carry(base, mods, ty, d, rx, ry)
  if base == 'add' and 'sat' in mods:
    return lambda st, s: w(st, s, np.clip(np.asarray(rx(st, s), np.int64) + np.asarray(ry(st, s), np.int64), -2**31, 2**31-1).astype(np.int32))
  if base == 'sub' and 'sat' in mods:
    return lambda st, s: w(st, s, np.clip(np.asarray(rx(st, s), np.int64) - np.asarray(ry(st, s), np.int64), -2**31, 2**31-1).astype(np.int32))
  f = _binop_int(base, mods, ty)
  return lambda st, s: w(st, s, f(rx(st, s), ry(st, s)))

def _carry(base, mods, ty, d, rx, ry):
  # CC.CF: carry-out of add, borrow-out of sub (PTX ISA "Extended-Precision Integer Arithmetic")
  u = UINT[TYPE_SIZE[ty]]; w = writer(d, ty); cin, cout = base in ('addc', 'subc'), 'cc' in mods
  sub = base.startswith('sub')
  def f(st, s):
    x, y = np.asarray(rx(st, s)).view(u), np.asarray(ry(st, s)).view(u)
    c = st.cc[s].astype(u) if cin else u(0)
    if sub: r = x - y - c; co = (x < y) | ((x == y) & (c == 1)) if cin else x < y
    else: t = x + y; r = t + c; co = (t < x) | (r < t)
    if cout: st.cc[s] = co
    w(st, s, np.asarray(r).view(NP[ty]))
  return f

def _packed2(base, mods, ty, d, rx, ry, rz=None):
  w = writer(d, 'b32'); half = 'f16' if ty == 'f16x2' else 'bf16'
  def split(v):
    v = np.asarray(v).view(np.uint32)
    lo, hi = (v & np.uint32(0xFFFF)).astype(np.uint16), (v >> np.uint32(16)).astype(np.uint16)
    return (lo.view(np.float16).astype(np.float32), hi.view(np.float16).astype(np.float32)) if half == 'f16' else (bf16_to_f32(lo), bf16_to_f32(hi))
  def join(lo, hi):
    if half == 'f16': lo, hi = np.asarray(lo).astype(np.float16).view(np.uint16), np.asarray(hi).astype(np.float16).view(np.uint16)
    else: lo, hi = f32_to_bf16(lo), f32_to_bf16(hi)
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))
  if base == 'fma':
    def ffma(st, s):
      (al, ah), (bl, bh), (cl, ch) = split(rx(st, s)), split(ry(st, s)), split(rz(st, s))
      fm = lambda p, q, r: p.astype(np.float64) * q + r.astype(np.float64)
      return w(st, s, join(fm(al, bl, cl), fm(ah, bh, ch)))
    return ffma
  f = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'min': np.fmin, 'max': np.fmax}[base]
  def g(st, s):
    (xl, xh), (yl, yh) = split(rx(st, s)), split(ry(st, s))
    return w(st, s, join(f(xl, yl), f(xh, yh)))
  return g

@fam('mad', 'fma', 'madc')
def _mad(ins, mods, types, a):
  base = ins.op.split('.')[0]; ty = types[-1]
  d, x, y, z = a
  rx, ry = reader(x, ty), reader(y, ty)
  if ty in ('f16x2', 'bf16x2'): return _packed2('fma', mods, ty, d, rx, ry, reader(z, 'b32'))
  if ty in FLOATS:
    rz, w = reader(z, ty), writer(d, ty)
    fz, sat = 'ftz' in mods and ty == 'f32', 'sat' in mods
    rnd = next((m for m in mods if m in ('rn', 'rz', 'rm', 'rp')), 'rn')
    if ty == 'f64':
      if rnd != 'rn': raise Unsupported(f"{ins.op}")
      f = lambda p, q, r: two_prod_fma(np.asarray(p, np.float64), np.asarray(q, np.float64), np.asarray(r, np.float64))
    elif ty == 'bf16':
      f = lambda p, q, r: f64_to_bf16(bf16_to_f32(p).astype(np.float64) * bf16_to_f32(q) + bf16_to_f32(r))
    else:
      f = lambda p, q, r: round_to(_fma64(p, q, r), NP[ty], rnd)
    def g(st, s):
      p, q, r = rx(st, s), ry(st, s), rz(st, s)
      if fz: p, q, r = ftz(p), ftz(q), ftz(r)
      o = np.asarray(f(p, q, r))
      if fz: o = ftz(o)
      return w(st, s, sat01(o) if sat else o)
    return g
  mode = next((m for m in mods if m in ('lo', 'hi', 'wide')), 'lo')
  if mode == 'wide':
    wt = ('s' if ty[0] == 's' else 'u') + str(16*TYPE_SIZE[ty]); wd = NP[wt]
    rz, w = reader(z, wt), writer(d, wt)
    if 'cc' in mods or base == 'madc': raise Unsupported(ins.op)
    return lambda st, s: w(st, s, np.asarray(rx(st, s)).astype(wd) * np.asarray(ry(st, s)).astype(wd) + rz(st, s))
  rz, w = reader(z, ty), writer(d, ty)
  prod = (lambda p, q: _mulhi(p, q, ty)) if mode == 'hi' else (lambda p, q: p * q)
  if 'cc' in mods or base == 'madc':
    u = UINT[TYPE_SIZE[ty]]; cin, cout = base == 'madc', 'cc' in mods
    def c(st, s):
      t, r0 = np.asarray(prod(rx(st, s), ry(st, s))).view(u), np.asarray(rz(st, s)).view(u)
      t2 = t + r0; r = t2 + (st.cc[s].astype(u) if cin else u(0))
      if cout: st.cc[s] = (t2 < t) | (r < t2)
      w(st, s, np.asarray(r).view(NP[ty]))
    return c
  return lambda st, s: w(st, s, prod(rx(st, s), ry(st, s)) + rz(st, s))

@fam('abs', 'neg', 'not', 'cnot', 'clz', 'popc', 'brev', 'sqrt', 'rcp', 'rsqrt', 'ex2', 'lg2', 'sin', 'cos', 'tanh')
def _unary(ins, mods, types, a):
  base = ins.op.split('.')[0]; ty = types[-1]
  d, x = a
  rx = reader(x, ty)
  if base in ('clz', 'popc'):
    w = writer(d, 'u32'); f = _clz if base == 'clz' else _popc
    return lambda st, s: w(st, s, f(rx(st, s), ty))
  w = writer(d, ty)
  if ty == 'pred':
    if base != 'not': raise Unsupported(ins.op)
    return lambda st, s: w(st, s, ~rx(st, s))
  if base in ('abs', 'neg') and ty in FLOATS:   # sign-bit operations, exact for NaN too
    u = UINT[TYPE_SIZE[ty]]; sign = u(1 << (8*TYPE_SIZE[ty]-1)); fz = 'ftz' in mods and ty == 'f32'
    def sb(st, s):
      v = rx(st, s)
      if fz: v = ftz(v)
      b = np.asarray(v).view(u)
      return w(st, s, ((b & ~sign) if base == 'abs' else (b ^ sign)).view(NP[ty]))
    return sb
  if base == 'abs': return lambda st, s: w(st, s, np.abs(rx(st, s)))
  if base == 'neg': return lambda st, s: w(st, s, -np.asarray(rx(st, s)))
  if base == 'not': return lambda st, s: w(st, s, ~rx(st, s))
  if base == 'cnot': dt = NP[ty]; return lambda st, s: w(st, s, (rx(st, s) == 0).astype(dt))
  if base == 'brev':
    size = 8*TYPE_SIZE[ty]; u = UINT[TYPE_SIZE[ty]]
    def brev(st, s):
      v, r = np.asarray(rx(st, s)).view(u), np.zeros(np.shape(rx(st, s)), u)
      for i in range(size): r |= ((v >> u(i)) & u(1)) << u(size - 1 - i)
      return w(st, s, r)
    return brev
  f = UNARY_F[base]; fz = 'ftz' in mods
  if ty == 'f16':
    return lambda st, s: w(st, s, f(np.asarray(rx(st, s), np.float32)).astype(np.float16))
  if ty == 'bf16': return lambda st, s: w(st, s, f32_to_bf16(f(bf16_to_f32(rx(st, s)))))
  if ty == 'f64' and 'approx' in mods and base not in ('rcp', 'rsqrt'):
    raise Unsupported(f"{ins.op}: ptxas rejects .approx.f64 {base}, so no program image can contain it")
  def g(st, s):
    v = rx(st, s)
    if fz: v = ftz(v)
    r = np.asarray(f(np.asarray(v)), NP[ty])
    return w(st, s, ftz(r) if fz else r)
  return g

@fam('shl', 'shr')
def _shl(ins, mods, types, a):
  base = ins.op.split('.')[0]; ty = types[-1]
  d, x, n = a
  rx, rn, w = reader(x, ty), reader(n, 'u32'), writer(d, ty)
  if n[0] == 'imm' and (k:=int(rn(None, None))) < 8*TYPE_SIZE[ty]:   # a constant shift within the width: one numpy shift
    k = NP[ty](k)
    if base == 'shl': return lambda st, s: w(st, s, rx(st, s) << k)
    return lambda st, s: w(st, s, rx(st, s) >> k)
  return lambda st, s: w(st, s, _shift(base, ty, np.asarray(rx(st, s)), rn(st, s)))

@fam('shf')
def _shf(ins, mods, types, a):
  d, x, y, n = a
  rx, ry, rn, w = reader(x, 'b32'), reader(y, 'b32'), reader(n, 'u32'), writer(d, 'b32')
  left, clamp = 'l' in mods, 'clamp' in mods
  def f(st, s):
    lo, hi, c = np.asarray(rx(st, s)).astype(np.uint64), np.asarray(ry(st, s)).astype(np.uint64), np.asarray(rn(st, s)).astype(np.uint64)
    c = np.minimum(c, 32) if clamp else c & np.uint64(31)
    v = (hi << np.uint64(32)) | lo
    r = ((v << c) >> np.uint64(32)) if left else (v >> c)
    return w(st, s, (r & np.uint64(0xFFFFFFFF)).astype(np.uint32))
  return f

@fam('bfe')
def _bfe_l(ins, mods, types, a):
  ty = types[-1]; d, x, p, l = a
  rx, rp, rl, w = reader(x, ty), reader(p, 'u32'), reader(l, 'u32'), writer(d, ty)
  return lambda st, s: w(st, s, _bfe(rx(st, s), rp(st, s), rl(st, s), ty))

@fam('bfi')
def _bfi_l(ins, mods, types, a):
  ty = types[-1]; d, x, y, p, l = a
  rx, ry, rp, rl, w = reader(x, ty), reader(y, ty), reader(p, 'u32'), reader(l, 'u32'), writer(d, ty)
  return lambda st, s: w(st, s, _bfi(rx(st, s), ry(st, s), rp(st, s), rl(st, s), ty))

@fam('prmt')
def _prmt_l(ins, mods, types, a):
  if any(m in mods for m in ('f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16')): raise Unsupported(ins.op)
  d, x, y, c = a
  rx, ry, rc, w = reader(x, 'b32'), reader(y, 'b32'), reader(c, 'b32'), writer(d, 'b32')
  if c[0] == 'imm': f = prmt_const(int(rc(None, None))); return lambda st, s: w(st, s, f(rx(st, s), ry(st, s)))
  return lambda st, s: w(st, s, _prmt(np.asarray(rx(st, s)), np.asarray(ry(st, s)), rc(st, s)))

@fam('dp4a', 'dp2a')
def _dp4a(ins, mods, types, a):
  base = ins.op.split('.')[0]; ta, tb = types[0], types[1]
  d, x, y, z = a
  rx, ry, rz = reader(x, 'b32'), reader(y, 'b32'), reader(z, 's32' if 's32' in (ta, tb) else 'u32')
  w = writer(d, 's32' if 's32' in (ta, tb) else 'u32')
  def lanes(v, signed, k, width):
    v = np.asarray(v).view(np.uint32).astype(np.int64)
    b = (v >> (width*k)) & ((1 << width) - 1)
    return np.where(signed & (b >= (1 << (width-1))), b - (1 << width), b)
  def f(st, s):
    x, y, acc = rx(st, s), ry(st, s), np.asarray(rz(st, s)).astype(np.int64)
    if base == 'dp4a': tot = sum(lanes(x, ta == 's32', k, 8) * lanes(y, tb == 's32', k, 8) for k in range(4))
    else: tot = sum(lanes(x, ta == 's32', k, 16) * lanes(y, tb == 's32', 2*('hi' in mods) + k, 8) for k in range(2))
    return w(st, s, ((acc + tot) & 0xFFFFFFFF).astype(np.uint32).view(np.int32 if 's32' in (ta, tb) else np.uint32))
  return f

@fam('setp', 'set')
def _setp(ins, mods, types, a):
  base = ins.op.split('.')[0]
  cmp = mods[0]; ty = types[-1]; isf = ty in FLOATS
  bop = next((m for m in mods if m in ('and', 'or', 'xor')), None)
  d, x, y = a[0], a[1], a[2]
  rx, ry = reader(x, ty), reader(y, ty)
  rc = reader(a[3], 'pred') if bop else None
  fz = 'ftz' in mods and ty == 'f32'
  def val(st, s):
    p, q = _as_float(rx(st, s), ty), _as_float(ry(st, s), ty)
    if fz: p, q = ftz(p), ftz(q)
    return np.asarray(_cmp(cmp, p, q, isf))
  comb = {None: lambda t, c: t, 'and': np.logical_and, 'or': np.logical_or, 'xor': np.logical_xor}[bop]
  if base == 'setp':
    dst = elems(d) if d[0] == 'vec' else [d]
    wp = writer(dst[0], 'pred'); wq = writer(dst[1], 'pred') if len(dst) > 1 else None
    def sp(st, s):
      t = val(st, s); c = rc(st, s) if rc else None
      wp(st, s, comb(t, c))
      if wq: wq(st, s, comb(~t, c))
    return sp
  dty = types[0]; w = writer(d, dty)
  one = {'f32': np.float32(1.0), 'f16': np.float16(1.0), 'bf16': np.uint16(0x3F80)}.get(dty, NP[dty](-1 if dty[0] == 's' else np.iinfo(NP[dty]).max) if dty not in FLOATS else None)
  zero = NP[dty](0)
  return lambda st, s: w(st, s, np.where(comb(val(st, s), rc(st, s) if rc else None), one, zero).astype(NP[dty]))

@fam('selp')
def _selp(ins, mods, types, a):
  ty = types[-1]; d, x, y, c = a
  rx, ry, rc, w = reader(x, ty), reader(y, ty), reader(c, 'pred'), writer(d, ty)
  return lambda st, s: w(st, s, np.where(rc(st, s), rx(st, s), ry(st, s)).astype(NP[ty]))

@fam('copysign')
def _copysign(ins, mods, types, a):
  ty = types[-1]; d, x, y = a
  rx, ry, w = reader(x, ty), reader(y, ty), writer(d, ty)
  return lambda st, s: w(st, s, np.copysign(ry(st, s), rx(st, s)))

@fam('testp')
def _testp(ins, mods, types, a):
  ty = types[-1]; d, x = a; rx, w = reader(x, ty), writer(d, 'pred')
  f = {'finite': np.isfinite, 'infinite': np.isinf, 'number': lambda v: ~np.isnan(v), 'notanumber': np.isnan,
       'normal': lambda v: np.isfinite(v) & (np.abs(v) >= TINY[v.dtype.type]), 'subnormal': lambda v: (np.abs(v) < TINY[v.dtype.type]) & (v != 0)}[mods[0]]
  return lambda st, s: w(st, s, f(np.asarray(rx(st, s))))

INT_RND = {'rni': np.rint, 'rzi': np.trunc, 'rmi': np.floor, 'rpi': np.ceil}

def cvt_value(v, dty, sty, mods):
  """cvt semantics on typed arrays (bf16 as bits)."""
  irnd = next((m for m in mods if m in INT_RND), None)
  frnd = next((m for m in mods if m in ('rn', 'rz', 'rm', 'rp')), None)
  fz, sat = 'ftz' in mods, 'sat' in mods
  if sty in FLOATS:
    x = bf16_to_f32(v) if sty == 'bf16' else np.asarray(v)
    if fz and sty == 'f32': x = ftz(x)
    if dty in FLOATS:
      if irnd: x = INT_RND[irnd](x)
      if dty == 'bf16':
        r = f32_to_bf16(x, frnd or 'rn') if x.dtype == np.float32 else f64_to_bf16(x.astype(np.float64), frnd or 'rn')
        return f32_to_bf16(sat01(bf16_to_f32(r))) if sat else r
      if np.dtype(NP[dty]).itemsize >= x.dtype.itemsize: r = x.astype(NP[dty])
      else: r = round_to(x.astype(np.float64), NP[dty], frnd or 'rn')
      if fz and dty == 'f32': r = ftz(r)
      return sat01(r) if sat else r
    r = INT_RND[irnd or 'rzi'](x.astype(np.float64))
    info = np.iinfo(NP[dty])
    lo, hi = float(info.min), float(info.max)
    out = np.where(np.isnan(r), 0, np.clip(r, lo, hi))
    big = out >= 2.0**(8*np.dtype(NP[dty]).itemsize - (1 if dty[0] == 's' else 0))
    res = np.where(big, 0, out).astype(NP[dty])
    return np.where(big, NP[dty](info.max), res).astype(NP[dty])
  x = np.asarray(v)
  if dty in FLOATS:
    wide = np.longdouble if x.dtype.itemsize == 8 else np.float64
    ex = x.astype(wide)
    if dty == 'bf16': r = f64_to_bf16(ex.astype(np.float64), frnd or 'rn') if x.dtype.itemsize < 8 else f32_to_bf16(round_to(ex, np.float32, 'rz'), frnd or 'rn')
    else: r = round_to(ex, NP[dty], frnd or 'rn')
    return sat01(r) if sat and dty != 'bf16' else r
  if sat:
    info, src = np.iinfo(NP[dty]), np.iinfo(x.dtype)
    if x.dtype.kind == 'u': x = np.minimum(x, x.dtype.type(min(info.max, src.max)))
    else: x = np.clip(x, max(info.min, src.min), min(info.max, src.max)).astype(x.dtype)
  return x.astype(NP[dty])

@fam('cvt')
def _cvt(ins, mods, types, a):
  if len(types) != 2: raise Unsupported(ins.op)
  dty, sty = types
  if dty in ('f16x2', 'bf16x2'):
    d, x, y = a; half = dty[:-2]
    rx, ry, w = reader(x, sty), reader(y, sty), writer(d, 'b32')
    def pk(st, s):
      hi, lo = cvt_value(rx(st, s), half, sty, mods), cvt_value(ry(st, s), half, sty, mods)
      return w(st, s, np.asarray(lo).view(np.uint16).astype(np.uint32) | (np.asarray(hi).view(np.uint16).astype(np.uint32) << np.uint32(16)))
    return pk
  d, x = a
  rx, w, f = reader(x, sty), writer(d, dty), cvt_fn(dty, sty, mods)
  return lambda st, s: w(st, s, f(rx(st, s)))

def cvt_fn(dty, sty, mods):
  """cvt_value for one instruction; the conversions numpy's cast does exactly (widening floats, integers without .sat, integers of
  up to 32 bits to f32/f64 rounding to nearest) are that cast"""
  plain = not any(m in mods for m in ('sat', 'ftz', *INT_RND, 'rz', 'rm', 'rp')) and 'bf16' not in (dty, sty)
  if plain and ((sty in FLOATS and dty in FLOATS and TYPE_SIZE[dty] >= TYPE_SIZE[sty]) or (sty not in FLOATS and dty not in FLOATS)
                or (sty not in FLOATS and dty in ('f32', 'f64') and TYPE_SIZE[sty] <= 4)):
    if (sty, dty) == ('f16', 'f32'): return lambda v: F16_F32.take(np.asarray(v).view(np.uint16))   # numpy converts halves in software
    dt = NP[dty]
    return lambda v: np.asarray(v).astype(dt)
  return lambda v: cvt_value(v, dty, sty, mods)

F16_F32 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)   # every half as a float

@fam('ld', 'st', 'ldu')
def _ldst(ins, mods, types, a):
  base = ins.op.split('.')[0]; ty = types[-1]
  space = next((m for m in mods if m in ('global', 'shared', 'local', 'param', 'const')), 'generic')
  vec = next((int(m[1:]) for m in mods if m in ('v2', 'v4', 'v8')), 1)
  data, addr = (a[0], a[1]) if base != 'st' else (a[1], a[0])
  ops = elems(data)
  if len(ops) != vec: raise PTXError(f"vector width mismatch in {ins.text}")
  if addr[0] != 'addr': raise PTXError(f"{ins.text}: not an address")
  dt = NP[ty]
  if space == 'param' and addr[1] is not None and addr[1][0] == 'sym' and addr[1][1] == 'param':
    var, off = addr[1][2], addr[1][3] + addr[2]
    if base != 'st':
      ws = [writer(o, ty) for o in ops]
      def ldp(st, s):
        for i, w in enumerate(ws): w(st, s, st.param_load(var, off + i*TYPE_SIZE[ty], dt, s))
      return ldp
    rs = [reader(o, ty) for o in ops]
    def stp(st, s):
      for i, r in enumerate(rs): st.param_store(var, off + i*TYPE_SIZE[ty], dt, s, r(st, s))
    return stp
  af = address(addr)
  if base != 'st':
    ws = [writer(o, ty) for o in ops]
    def ld(st, s):
      for w, v in zip(ws, st.load(space, *af(st, s), dt, vec, s, ins)): w(st, s, v)
    return ld
  rs = [reader(o, ty) for o in ops]
  def stf(st, s): st.store(space, *af(st, s), dt, [r(st, s) for r in rs], s, ins)
  return stf

def address(addr):
  """(r, off, rid): the lanes' base register values (None for none), the constant offset and the register's id (None for none);
  the address is r + off modulo 2**64"""
  _, b, off = addr
  o = off & 0xFFFFFFFFFFFFFFFF
  if b is None: return lambda st, s: (None, o, None)
  if b[0] == 'sym':
    sa = sym_addr(b)
    return lambda st, s: (None, (sa(st) + o) & 0xFFFFFFFFFFFFFFFF, None)
  r = reader(b, 'u64') if b[0] != 'reg' or TYPE_SIZE[b[1].type] == 8 else reader(b, 'u32')
  rid = b[1].rid if b[0] == 'reg' else None
  return lambda st, s: (r(st, s), o, rid)

# ---- mma.sync fragment layouts (PTX ISA "Matrix Fragments for mma.m16n8k16 / m16n8k8"): element i of a lane's fragment
def _frag_layouts(shape, ab):
  lane = np.arange(32); g, t = lane >> 2, lane & 3
  def idx(rows, cols): return np.stack(rows, 1), np.stack(cols, 1)
  c = idx([g, g, g+8, g+8], [2*t, 2*t+1, 2*t, 2*t+1])
  if shape == 'm16n8k16' and ab in ('f16', 'bf16'):
    A = idx([g, g, g+8, g+8, g, g, g+8, g+8], [2*t, 2*t+1, 2*t, 2*t+1, 2*t+8, 2*t+9, 2*t+8, 2*t+9])
    return A, idx([2*t, 2*t+1, 2*t+8, 2*t+9], [g, g, g, g]), c, 16
  if shape == 'm16n8k8' and ab in ('f16', 'bf16'):
    return idx([g, g, g+8, g+8], [2*t, 2*t+1, 2*t, 2*t+1]), idx([2*t, 2*t+1], [g, g]), c, 8
  if shape == 'm16n8k8' and ab == 'tf32':
    return idx([g, g+8, g, g+8], [t, t, t+4, t+4]), idx([t, t+4], [g, g]), c, 8
  raise Unsupported(f"mma shape {shape} with .{ab}")

@fam('mma')
def _mma(ins, mods, types, a):
  shape = next((m for m in mods if re.fullmatch(r'm\d+n\d+k\d+', m)), None)
  i = mods.index(shape) if shape else 0
  layout, dty, aty, bty, cty = mods[i+1:i+3], *mods[i+3:i+7]
  if shape is None or layout != ['row', 'col'] or aty != bty or dty not in ('f32', 'f16') or cty != dty or aty not in ('f16', 'bf16', 'tf32'):
    raise Unsupported(ins.op)
  (ar, ac), (br, bc), (cr, cc), K = _frag_layouts(shape, aty)
  xr, yr, zr = [[reader(o, 'b32') for o in elems(op)] for op in a[1:]]
  dw = [writer(o, 'b32') for o in elems(a[0])]
  def unpack(regs, st, s, ty):   # [nwarps, 32, elements] values in f64
    v = np.stack([np.broadcast_to(np.asarray(r(st, s)).view(np.uint32), (nsel(st, s),)) for r in regs], -1).reshape(-1, 32, len(regs))
    if ty == 'tf32': return (v & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)   # the low 13 mantissa bits are ignored
    if ty == 'f32': return v.view(np.float32).astype(np.float64)
    h = np.stack([(v & np.uint32(0xFFFF)).astype(np.uint16), (v >> np.uint32(16)).astype(np.uint16)], -1).reshape(v.shape[0], 32, -1)
    return h.view(np.float16).astype(np.float64) if ty == 'f16' else bf16_to_f32(h).astype(np.float64)
  def f(st, s):
    st.check_warps(s, ins)
    av, bv, cv = unpack(xr, st, s, aty), unpack(yr, st, s, bty), unpack(zr, st, s, cty)
    nw = av.shape[0]
    A, B, C = np.zeros((nw, 16, K)), np.zeros((nw, K, 8)), np.zeros((nw, 16, 8))
    A[:, ar, ac], B[:, br, bc], C[:, cr, cc] = av, bv, cv
    D = (A @ B + C)[:, cr, cc].reshape(-1, 4)
    if dty == 'f32': out = [D[:, k].astype(np.float32).view(np.uint32) for k in range(4)]
    else:
      h = D.astype(np.float16).view(np.uint16).astype(np.uint32)
      out = [h[:, 0] | (h[:, 1] << np.uint32(16)), h[:, 2] | (h[:, 3] << np.uint32(16))]
    for w, o in zip(dw, out): w(st, s, o)
  return f
