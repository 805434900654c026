# The SM: runs a PTX entry over a grid, all threads of a batch of CTAs at once as numpy lanes (SIMT with per-thread PCs).
import ctypes, functools, numpy as np
from orin_emu.faults import MMUFault, SMException
from orin_emu.ptx.parse import parse_module, Function, Module, PTXError, TYPE_SIZE
from orin_emu.ptx.lower import lower, reader, nsel, Unsupported, UINT

WINDOW_SIZE = 1 << 24      # shader window extent: 16 MiB, an assumption (orin_emu/OBSERVED.md)
BATCH_BYTES = 96 << 20     # register + local + shared bytes one batch of CTAs may hold
STATS = {'instructions': 0, 'thread_instructions': 0}   # dispatched instructions and active-thread instructions
OP, BRA, RET, BAR, CALL = range(5)
# every instruction allocates and frees arrays of a batch's lanes (100s of KiB): glibc would hand them back to the OS (mmap, heap trim)
# and fault them in again each time; keep up to 256 MiB of freed memory for the next ones (mallopt M_TRIM_THRESHOLD, M_MMAP_THRESHOLD)
if hasattr(libc:=ctypes.CDLL(None), "mallopt"): libc.mallopt(-1, 256 << 20), libc.mallopt(-3, 32 << 20)
KIND = {'op': OP, 'bra': BRA, 'ret': RET, 'bar': BAR, 'call': CALL}

def _round(x, a): return (x + a - 1) // a * a

class Compiled:
  """A function lowered once: code entries (kind, payload, guard reader, instr), labels resolved."""
  def __init__(self, fn:Function):
    self.fn, self.code = fn, []
    for ins in fn.code:
      try: kind, payload = lower(ins, fn.name)
      except PTXError as e: raise Unsupported(f"{fn.name}: {e} (in {ins.text!r})") from None
      if kind == 'bra':
        if payload not in fn.labels: raise PTXError(f"{fn.name}: unknown label {payload}")
        payload = fn.labels[payload]
      guard = None
      if ins.guard is not None:
        g = reader(('reg', ins.guard[0]), 'pred')
        guard = (lambda g: lambda st, s: ~g(st, s))(g) if ins.guard[1] else g
      self.code.append((KIND[kind], payload, guard, ins))
    self.code.append((RET, None, None, None))   # falling off the end returns
    # a thread parked at an unconditional ret has nothing left to do: it counts as exited (bar.sync waits for the rest)
    self.at_ret = np.array([k == RET and g is None for k, _, g, _ in self.code] + [True])

class Program:
  """A decoded PTX module with its static memory layout."""
  def __init__(self, src:str):
    self.mod:Module = parse_module(src)
    self.funcs = {n: Compiled(f) for n, f in self.mod.funcs.items()}
    self.layout, off = {}, 0
    shared = [v for v in self.mod.globals.values() if v.space == 'shared']
    for f in self.mod.funcs.values(): shared += f.shared
    for v in shared: off = _round(off, max(v.align, 1)); self.layout[id(v)] = off; off += v.size
    self.shared_size, off = off, 0
    for f in self.mod.funcs.values():   # every function gets its own frame: no recursion in what tinygrad emits
      for v in f.local: off = _round(off, max(v.align, 1)); self.layout[id(v)] = off; off += v.size
    self.local_size = off

@functools.lru_cache(maxsize=4096)
def program(src:str) -> Program: return Program(src)

def _sel(base, mask):
  idx = np.flatnonzero(mask) if isinstance(base, slice) else base[mask]
  return idx

class CTABatch:
  """Architectural state of a batch of CTAs: registers, carry flags, special registers, shared/local/param memory."""
  def __init__(self, prg:Program, entry:str, cta0:int, ncta:int, grid, block, cbuf0:bytes, param_base:int, mem, shared_bytes:int,
               shared_window:int, local_window:int, global_va:dict, program_va:int):
    T = block[0]*block[1]*block[2]
    self.prg, self.entry, self.N, self.T, self.mem, self.program_va = prg, entry, ncta*T, T, mem, program_va
    self.cbuf0, self.param_base, self.global_va, self.layout = cbuf0, param_base, global_va, prg.layout
    self.shared_window, self.local_window = shared_window, local_window
    # registers every live thread holds alike (all, zero, at the start) and the live threads while none diverge (lower.put); a
    # register gets its lanes (R) when threads first hold different values
    self.dts = [np.dtype(np.bool_ if r.type == 'pred' else UINT[TYPE_SIZE[r.type]]) for r in prg.mod.regs]
    self.R, self.U, self.live = [None] * len(self.dts), {i: dt.type(0) for i, dt in enumerate(self.dts)}, None
    self.cc = np.zeros(self.N, np.bool_)
    self.sreg = Specials(self.N, cta0, grid, block)
    self.sh_stride = _round(max(prg.shared_size, shared_bytes), 16)
    self.shared = np.zeros(ncta * self.sh_stride, np.uint8) if self.sh_stride else None
    self.l_stride = _round(prg.local_size, 16)
    self.local = np.zeros(self.N * self.l_stride, np.uint8) if self.l_stride else None
    self.pbuf, self.entry_params, self.maps, self.bases, self.typed = {}, {id(v) for v in prg.mod.funcs[entry].params}, [], {}, {}

  # ---- kernel and call parameters
  def param_load(self, var, off, dt, s):
    if id(var) in self.entry_params:
      o = self.param_base + var.offset + off
      if o + np.dtype(dt).itemsize > len(self.cbuf0): raise SMException(0x12, o, self.program_va, detail=f"{self.entry}: param beyond cbuf0")
      return np.frombuffer(self.cbuf0, dt, 1, o)[0]
    return np.ascontiguousarray(self._pbuf(var)[s, off:off + np.dtype(dt).itemsize]).view(dt).reshape(-1)
  def param_store(self, var, off, dt, s, v):
    n = nsel(self, s); sz = np.dtype(dt).itemsize
    self._pbuf(var)[s, off:off+sz] = np.broadcast_to(np.asarray(v, dt), (n,)).copy().view(np.uint8).reshape(n, sz)
  def _pbuf(self, var):
    if (b:=self.pbuf.get(id(var))) is None: b = self.pbuf[id(var)] = np.zeros((self.N, max(var.size, 1)), np.uint8)
    return b

  def check_warps(self, s, ins):
    idx = np.arange(self.N) if isinstance(s, slice) else s
    lane = self.sreg['%laneid'][idx]
    if self.T % 32 or len(idx) % 32 or not (lane.reshape(-1, 32) == np.arange(32)).all():
      raise Unsupported(f"{self.entry}: {ins.text}: warp-collective op needs all 32 lanes of each warp converged")

  # ---- memory
  def _fault(self, code, va, ins, what): return SMException(code, int(va), self.program_va, detail=f"{self.entry}: {what} in {ins.text!r}")

  def _route(self, space, addr, s, isz, nbytes, ins, write):
    """Yield (mask|None, typed-view-maker, element index) parts covering the accessed threads."""
    if space in ('generic', 'global'):
      parts, rest, lo, hi = [], None, int(addr.min()), int(addr.max())
      for win, kind in ((self.shared_window, 'shared'), (self.local_window, 'local')):
        if hi < win or lo >= win + WINDOW_SIZE: continue
        if (m:=(addr >= np.uint64(win)) & (addr < np.uint64(win + WINDOW_SIZE))).any():
          parts.append((m, kind, addr[m] - np.uint64(win)))
          rest = ~m if rest is None else rest & ~m
      if rest is None: yield from self._global(None, addr, isz, nbytes, ins, write, lo, hi)
      else:
        if rest.any(): yield from self._global(rest, addr[rest], isz, nbytes, ins, write)
        for m, kind, off in parts: yield from self._space(kind, m, off, s, isz, nbytes, ins, True)
      return
    if space in ('shared', 'local'): yield from self._space(space, None, addr, s, isz, nbytes, ins, False); return
    raise Unsupported(f"{self.entry}: state space .{space} in {ins.text!r}")

  def _space(self, kind, m, off, s, isz, nbytes, ins, via_window):
    limit, store = (self.sh_stride, self.shared) if kind == 'shared' else (self.l_stride, self.local)
    if (bad:=(off >= np.uint64(limit)) | (off + np.uint64(nbytes) > np.uint64(limit))).any():   # the first: past 2**64 wraps
      # a window access past the CTA's allocation is an invalid address space; a .shared/.local one is out of range
      raise self._fault(0x10 if via_window else 0xE, off[bad][0] + (getattr(self, f'{kind}_window') if via_window else 0), ins,
                        f".{kind} access beyond {limit} bytes")
    idx = np.arange(self.N) if isinstance(s, slice) else s
    if m is not None: idx = idx[m]
    row = (self.sh_rows if kind == 'shared' else self.l_rows)[idx]
    yield m, store[:len(store)//isz*isz], (row + off.view(np.int64)) >> SHIFT[isz]

  def _global(self, m, addr, isz, nbytes, ins, write, lo=None, hi=None):
    if lo is None: lo, hi = int(addr.min()), int(addr.max())
    for base, end, buf in self.maps:   # common case: every lane inside a mapping this launch already touched
      if base <= lo and hi + nbytes <= end and base % isz == 0:
        yield m, buf, (addr - np.uint64(base)).view(np.int64) >> SHIFT[isz]
        return
    todo = np.ones(len(addr), np.bool_)
    while todo.any():
      lo = int(addr[todo].min())
      try: base, buf = self.mem.lookup(lo)
      except MMUFault as e:
        if write: e.access = "virt write"
        raise
      if base % isz: raise Unsupported(f"{self.entry}: mapping at 0x{base:x} not aligned for {isz}-byte access")
      self.maps.append((base, end:=base + len(buf), buf))
      inside = todo & (addr >= np.uint64(base)) & (addr + np.uint64(nbytes) <= np.uint64(end))
      if not inside[todo].any(): raise MMUFault(end, "virt write" if write else "virt read")
      mm = None if m is None and inside.all() else inside if m is None else _scatter_mask(m, inside)
      yield mm, buf, ((addr[inside] if mm is not None else addr) - np.uint64(base)).view(np.int64) >> SHIFT[isz]
      todo &= ~inside

  def _prep(self, r, off, s, dt, vec, ins):
    n = nsel(self, s); isz = np.dtype(dt).itemsize; nbytes = isz*vec
    addr = np.uint64(off) if r is None else np.add(r, np.uint64(off), dtype=np.uint64)   # modulo 2**64
    if nbytes > 1 and (bad:=(addr & np.uint64(nbytes - 1)) != 0).any(): raise self._fault(0xF, addr[bad][0] if addr.ndim else addr, ins, "misaligned address")
    return n, isz, nbytes, np.broadcast_to(addr, (n,))

  def _direct(self, space, r, off, dt, vec, s, rid):
    """(typed memory, j, idx) when every lane's address r + off lies, unwrapped and aligned, in one global mapping this launch already
    touched and in no window, or in the lane's .shared/.local area: lane i's element k is memory[j + k + idx[i]], no address is
    materialized, and a base register's bounds and indices are kept (self.bases) until it is written. None: take the general path"""
    isz, c = dt.itemsize, None
    nbytes = isz*vec
    if r is None or r.ndim == 0: rlo = rhi = 0 if r is None else int(r)
    elif rid is not None and (c:=self.bases.get(rid)) is not None and c[0] is s: rlo, rhi = c[1], c[2]
    else:
      rlo, rhi = int(r.min()), int(r.max())
      if rid is not None: self.bases[rid] = c = [s, rlo, rhi, None, {}]
    lo, hi = rlo + off, rhi + off
    if hi >= 1 << 64: lo, hi, off = lo - (1 << 64), hi - (1 << 64), off - (1 << 64)
    if lo < 0: return None
    if space in ('shared', 'local'):
      if hi + nbytes > (self.sh_stride if space == 'shared' else self.l_stride): return None
      buf, origin = self.shared if space == 'shared' else self.local, 0
    else:
      sw, lw = self.shared_window, self.local_window
      if (lo < sw + WINDOW_SIZE and sw <= hi) or (lo < lw + WINDOW_SIZE and lw <= hi): return None
      for origin, end, buf in self.maps:
        if origin <= lo and hi + nbytes <= end and origin % nbytes == 0: break
      else: return None
    if (tv:=self.typed.get((id(buf), dt))) is None: tv = self.typed[(id(buf), dt)] = _typed(buf, dt)
    shift = SHIFT[isz]
    if c is not None and rlo >= origin and 0 <= off and nbytes <= 16 and origin % 16 == 0:
      if nbytes > 1 and c[3] is None: c[3] = int(low[0]) if ((low:=r & 15) == low[0]).all() else -1   # the residue mod 16 all lanes share, or -1
      if nbytes == 1 or (c[3] >= 0 and (c[3] + off) % nbytes == 0 and off % isz == 0):
        if (idx:=c[4].get((space, origin, shift))) is None:
          rel = np.add(r, self.rows(space, s) if space in ('shared', 'local') else -origin, dtype=np.int64, casting='unsafe')
          idx = c[4][(space, origin, shift)] = rel >> shift if shift else rel
        return tv, off >> shift, idx
    b = np.int64(lo - origin) if r is None else np.add(r, np.int64(off - origin), dtype=np.int64, casting='unsafe')
    if space in ('shared', 'local'): b = self.rows(space, s) + b
    if nbytes > 1 and (b & (nbytes - 1)).any(): return None
    return tv, 0, b >> shift if shift else b

  def rows(self, space, s): return (self.sh_rows if space == 'shared' else self.l_rows)[s]

  def compact(self, idx):
    """keep the lanes idx only (the threads that have not exited), as lanes 0..len(idx)-1: later instructions skip the exited ones"""
    for k in ('sh_rows', 'l_rows'): self.__dict__[k] = getattr(self, k)[idx]
    self.N, self.cc, self.bases = len(idx), self.cc[idx], {}
    self.R = [None if r is None else r[idx] for r in self.R]
    self.pbuf = {k: b[idx] for k, b in self.pbuf.items()}
    self.sreg.compact(idx)
    return slice(None)

  @functools.cached_property
  def sh_rows(self): return self.sreg.cta * self.sh_stride   # each lane's CTA's shared memory
  @functools.cached_property
  def l_rows(self): return np.arange(self.N, dtype=np.int64) * self.l_stride   # each lane's local memory

  def load(self, space, r, off, rid, dt, vec, s, ins):
    if (d:=self._direct(space, r, off, np.dtype(dt), vec, s, rid)) is not None:
      tv, j, idx = d
      return [tv[j + k:][idx] for k in range(vec)]   # one global address (r uniform): one value every lane holds
    n, isz, nbytes, addr = self._prep(r, off, s, dt, vec, ins)
    out = [np.empty(n, dt) for _ in range(vec)]
    for m, raw, idx in self._route(space, addr, s, isz, nbytes, ins, False):
      view = _typed(raw, dt)
      for k in range(vec):
        if m is None: out[k] = view[idx + k if k else idx]
        else: out[k][m] = view[idx + k]
    return out

  def store(self, space, r, off, rid, dt, vals, s, ins):
    n = nsel(self, s)
    vals = [np.broadcast_to(np.asarray(v, dt), (n,)) for v in vals]
    if (d:=self._direct(space, r, off, np.dtype(dt), len(vals), s, rid)) is not None:
      tv, j, idx = d
      idx = np.broadcast_to(idx, (n,))
      for k, v in enumerate(vals): tv[j + k:][idx] = v
      return
    n, isz, nbytes, addr = self._prep(r, off, s, dt, len(vals), ins)
    for m, raw, idx in self._route(space, addr, s, isz, nbytes, ins, True):
      view = _typed(raw, dt)
      for k, v in enumerate(vals): view[idx + k if k else idx] = v if m is None else v[m]

  # ---- control
  def call(self, payload, s):
    rets, name, args = payload
    if (cf:=self.prg.funcs.get(name)) is None: raise Unsupported(f"{self.entry}: call to undefined function {name}")
    fn = cf.fn
    if len(args) != len(fn.params) or len(rets) != len(fn.rets): raise PTXError(f"{self.entry}: call to {name} with wrong arity")
    for p, a in zip(fn.params, args): self._pbuf(p)[s, :min(p.size, a.size)] = self._pbuf(a)[s, :min(p.size, a.size)]
    run(self, cf, s, top=False)
    for r, d in zip(fn.rets, rets): self._pbuf(d)[s, :min(r.size, d.size)] = self._pbuf(r)[s, :min(r.size, d.size)]

class Specials(dict):
  """special registers of a batch's lanes, made at first read; one value where every thread of the launch holds the same"""
  def __init__(self, n:int, cta0:int, grid, block):
    super().__init__()
    self.cta0, self.grid, self.block, T = cta0, grid, block, block[0]*block[1]*block[2]
    self.update({f'%ntid.{ax}': np.int64(block[i]) for i, ax in enumerate('xyz')} | {f'%nctaid.{ax}': np.int64(grid[i]) for i, ax in enumerate('xyz')})
    self.update({'%nwarpid': np.int64((T + 31) // 32), '%smid': np.int64(0), '%gridid': np.int64(0)})
    lin = np.arange(n, dtype=np.int64)
    self.t, self.cta = lin % T, lin // T
  def compact(self, idx):
    self.t, self.cta = self.t[idx], self.cta[idx]
    for k, v in self.items():
      if v.ndim: self[k] = v[idx]
  def __missing__(self, name:str):
    t, g, (bx, by, _), (gx, gy, _) = self.t, self.cta + self.cta0, self.block, self.grid
    v = {'%tid.x': lambda: t % bx, '%tid.y': lambda: (t // bx) % by, '%tid.z': lambda: t // (bx*by), '%ctaid.x': lambda: g % gx,
         '%ctaid.y': lambda: (g // gx) % gy, '%ctaid.z': lambda: g // (gx*gy), '%laneid': lambda: t % 32, '%warpid': lambda: t // 32}[name]()
    self[name] = v
    return v

SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}
def _typed(raw, dt):
  """raw bytes as dt elements (a trailing partial element is dropped)"""
  isz = np.dtype(dt).itemsize
  return (raw if isz == 1 else raw[:len(raw)//isz*isz]).view(dt)

def _scatter_mask(m, inner):
  out = np.zeros(len(m), np.bool_); out[np.flatnonzero(m)[inner]] = True
  return out

def run(st:CTABatch, cf:Compiled, base, top=True):
  """Execute one function for the threads in base. Uniform while all live threads share a PC; otherwise the group at the
  lowest PC runs until it reaches another group's PC or a control instruction (min-PC reconvergence). A called function runs for
  threads the caller chose (top=False): the caller's threads decide what is uniform."""
  code, L = cf.code, len(cf.code)
  pc, pcs, wait = 0, None, None
  while True:
    if pcs is None:
      if top: st.live = base
      n, pc0 = nsel(st, base), pc
      while True:
        kind, f, g, ins = code[pc]
        if kind != OP: break
        if g is None: f(st, base)
        else:
          p = g(st, base)
          if p.all(): f(st, base)
          elif p.any(): f(st, _sel(base, p))
        pc += 1
      STATS['instructions'] += pc - pc0 + 1; STATS['thread_instructions'] += (pc - pc0 + 1) * n
      if kind == BAR: pc += 1; continue
      if kind == CALL:
        p = None if g is None else g(st, base)
        if p is None or p.all(): st.call(f, base)
        elif p.any(): st.call(f, _sel(base, p))
        pc += 1; continue
      p = None if g is None else g(st, base)
      target = f if kind == BRA else L
      if p is None or p.all():
        if kind == RET: return
        pc = f; continue
      if not p.any(): pc += 1; continue
      pcs, st.live = np.where(p, target, pc + 1).astype(np.int64), None
      pcs[cf.at_ret[pcs]] = L
      continue
    live = pcs < L
    cand = live if wait is None else live & ~wait
    if not cand.any():
      if not live.any(): return
      pcs[wait] += 1; wait = None   # every live thread waits at a barrier (bar.sync counts non-exited threads): release
      continue
    m = int(pcs[cand].min())
    grp = cand & (pcs == m)
    if wait is None and grp.sum() == live.sum():   # reconverged: drop exited threads and run uniform again
      base, pcs, pc = _sel(base, grp) if not grp.all() else base, None, m
      if top and not isinstance(base, slice) and 2*len(base) <= st.N: base = st.compact(base)
      continue
    sel, stop, pc = _sel(base, grp), int(pcs[live & ~grp].min()), m
    pc0 = pc
    while pc < stop:
      kind, f, g, ins = code[pc]
      if kind != OP: break
      if g is None: f(st, sel)
      else:
        p = g(st, sel)   # a 0-d predicate when every thread holds it alike
        if p.all(): f(st, sel)
        elif p.any(): f(st, sel[p])
      pc += 1
    STATS['instructions'] += pc - pc0 + 1; STATS['thread_instructions'] += (pc - pc0 + 1) * len(sel)
    if pc >= stop: pcs[grp] = pc; pcs[cf.at_ret[pcs]] = L; continue
    if kind == BAR:   # park until the other live threads arrive or exit
      pcs[grp] = pc
      wait = grp if wait is None else wait | grp
      continue
    if kind == CALL:
      if g is None or (p:=g(st, sel)).all(): st.call(f, sel)
      elif p.any(): st.call(f, sel[p])
      pcs[grp] = pc + 1; continue
    target = f if kind == BRA else L
    pcs[grp] = target if g is None else np.where(g(st, sel), target, pc + 1)
    pcs[cf.at_ret[pcs]] = L

def execute(src:str, entry:str, *, grid, block, cbuf0:bytes, param_base:int, mem, shared_bytes:int=0, shared_window:int=0,
            local_window:int=0, global_va:dict|None=None, program_va:int=0):
  """Run entry of the PTX module src over the grid."""
  prg = program(src)
  if entry not in prg.funcs or prg.funcs[entry].fn.kind != 'entry': raise PTXError(f"no .entry {entry} in program at 0x{program_va:x}")
  missing = [n for n, v in prg.mod.globals.items() if v.space == 'global' and n not in (global_va or {})]
  if missing: raise PTXError(f"{entry}: no address for module globals {missing}")
  grid, block = tuple(int(x) for x in grid), tuple(int(x) for x in block)
  T, G = block[0]*block[1]*block[2], grid[0]*grid[1]*grid[2]
  if T == 0 or G == 0: return
  per_thread = 8*len(prg.mod.regs) + _round(prg.local_size, 16) + _round(max(prg.shared_size, shared_bytes), 16) // T + 64
  K = max(1, min(G, BATCH_BYTES // (per_thread * T)))
  with np.errstate(all='ignore'):
    for c0 in range(0, G, K):
      st = CTABatch(prg, entry, c0, min(K, G - c0), grid, block, cbuf0, param_base, mem, shared_bytes, shared_window, local_window,
                    global_va or {}, program_va)
      run(st, prg.funcs[entry], slice(None))
