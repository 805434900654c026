# PTX front end: module text -> Module of Functions (declarations, scoped registers, instructions, labels).
import re
from dataclasses import dataclass, field

TYPE_SIZE = {'pred':1, 'b8':1, 'u8':1, 's8':1, 'b16':2, 'u16':2, 's16':2, 'f16':2, 'bf16':2, 'b32':4, 'u32':4, 's32':4, 'f32':4,
             'f16x2':4, 'bf16x2':4, 'b64':8, 'u64':8, 's64':8, 'f64':8}

class PTXError(Exception): pass

@dataclass
class Reg: rid:int; name:str; type:str   # noqa: E702
@dataclass
class Var: space:str; name:str; type:str; size:int; align:int; init:bytes|None=None; offset:int=0   # noqa: E702

@dataclass
class Instr:
  op:str            # full opcode, e.g. "ld.global.v4.f32"
  args:list         # operands, parsed (see Operand kinds in parse_operand)
  guard:tuple|None  # (reg, negated)
  text:str
  def __str__(self): return self.text

@dataclass
class Function:
  name:str
  kind:str                                               # "entry" | "func"
  params:list[Var] = field(default_factory=list)         # .param in ABI order, offsets filled
  rets:list[Var] = field(default_factory=list)
  code:list[Instr] = field(default_factory=list)
  labels:dict[str,int] = field(default_factory=dict)
  shared:list[Var] = field(default_factory=list)
  local:list[Var] = field(default_factory=list)
  scoped_params:list[Var] = field(default_factory=list)  # call-site .param declarations inside the body

@dataclass
class Module:
  funcs:dict[str,Function] = field(default_factory=dict)
  globals:dict[str,Var] = field(default_factory=dict)
  regs:list[Reg] = field(default_factory=list)

_comment = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
_header = re.compile(r'((?:\.(?:visible|weak|extern)\s+)*)\.(entry|func)\s*(\([^)]*\))?\s*([\w$]+)\s*(\([^)]*\))?([^{;]*)([{;])')
_decl = re.compile(r'\.(reg|param|shared|local|global|const)(?=[\s.])\s*((?:\.\w+\s*(?:\d+\s+)?)*)\s*([^;]+)$', re.S)
_brace = re.compile(r'[{}]')
_label = re.compile(r'^([\w$]+):')
_range = re.compile(r'^(.*?)(\d+)$')

def _decl_vars(space:str, mods:str, names:str) -> list[Var]:
  mods_l = [m.lstrip('.') for m in mods.split()]
  align = next((int(m2) for m, m2 in zip(mods_l, mods_l[1:]+['']) if m == 'align'), 0)
  types = [m for m in mods_l if m in TYPE_SIZE]
  if len(types) != 1: raise PTXError(f"declaration without one type: .{space} {mods}{names}")
  ty, out = types[0], []
  init = None
  if '=' in names: names, init_s = names.split('=', 1); init = [int(x, 0) for x in init_s.strip().strip('{}').split(',') if x.strip()]
  for n in (x.strip() for x in names.split(',') if x.strip()):
    m = re.fullmatch(r'([\w$%]+)\s*(?:<(\d+)>)?\s*((?:\[\d*\])*)', n)
    if m is None: raise PTXError(f"bad declaration name {n!r}")
    count = 1
    for d in re.findall(r'\[(\d*)\]', m.group(3)): count *= int(d) if d else (len(init) if init else 0)
    size = TYPE_SIZE[ty] * count
    data = None
    if init is not None: data = b''.join(int(v).to_bytes(TYPE_SIZE[ty], 'little', signed=v < 0) for v in init).ljust(size, b'\0')
    out.append(Var(space, m.group(1) + (f"<{m.group(2)}>" if m.group(2) else ""), ty, size, align or TYPE_SIZE[ty], data))
  return out

def _param_list(s:str|None) -> list[Var]:
  if not s: return []
  out, off = [], 0
  for p in (x.strip() for x in s.strip()[1:-1].split(',') if x.strip()):
    m = _decl.match(p + ' ') if p.startswith('.param') else None
    if m is None: raise PTXError(f"bad parameter {p!r}")
    for v in _decl_vars('param', m.group(2), m.group(3)):
      off = (off + v.align - 1) // v.align * v.align
      v.offset, off = off, off + v.size
      out.append(v)
  return out

def split_operands(s:str) -> list[str]:
  if not any(c in s for c in '{[('): return [x.strip() for x in s.split(',') if x.strip()]
  out, depth, cur = [], 0, ''
  for ch in s:
    if ch in '{[(': depth += 1
    elif ch in '}])': depth -= 1
    if ch == ',' and depth == 0: out.append(cur.strip()); cur = ''
    else: cur += ch
  if cur.strip(): out.append(cur.strip())
  return out

class _Scopes:
  def __init__(self, mod:Module): self.mod, self.stack = mod, [{}]
  def declare(self, v:Var):
    if v.name.endswith('>'):
      base, n = v.name[:-1].split('<')
      self.stack[-1][base] = ('range', v.type, int(n), {})
    else: self.stack[-1][v.name] = ('reg', self._new(v.name, v.type))
  def _new(self, name, ty): self.mod.regs.append(r:=Reg(len(self.mod.regs), name, ty)); return r
  def lookup(self, name:str) -> Reg|None:
    for sc in reversed(self.stack):
      if (e:=sc.get(name)) is not None and e[0] == 'reg': return e[1]
      if (m:=_range.match(name)) and (e:=sc.get(m.group(1))) is not None and e[0] == 'range' and int(m.group(2)) < e[2]:
        return e[3][name] if name in e[3] else e[3].setdefault(name, self._new(name, e[1]))
    return None

def _parse_body(mod:Module, fn:Function, body:str, syms:dict):
  sc = _Scopes(mod)
  for v in fn.params + fn.rets: syms[v.name] = ('param', v)
  pieces = body.split(';')
  for piece in pieces:
    s = piece.strip()
    while s:
      if s[0] == '{': sc.stack.append({}); s = s[1:].strip(); continue
      if s[0] == '}':
        if len(sc.stack) == 1: raise PTXError(f"unbalanced '}}' in {fn.name}")
        sc.stack.pop(); s = s[1:].strip(); continue
      if m:=_label.match(s): fn.labels[m.group(1)] = len(fn.code); s = s[m.end():].strip(); continue
      break
    if not s or s.startswith('.pragma') or s.startswith('.maxntid') or s.startswith('.reqntid'): continue
    if m:=_decl.match(s):
      for v in _decl_vars(m.group(1), m.group(2), m.group(3)):
        if v.space == 'reg': sc.declare(v)
        elif v.space == 'shared': fn.shared.append(v); syms[v.name] = ('shared', v)
        elif v.space == 'local': fn.local.append(v); syms[v.name] = ('local', v)
        elif v.space == 'param': fn.scoped_params.append(v); syms[v.name] = ('param', v)
        else: raise PTXError(f"unsupported declaration in {fn.name}: {s}")
      continue
    fn.code.append(_parse_instr(s, sc, syms, fn))

def _parse_instr(s:str, sc:_Scopes, syms:dict, fn:Function) -> Instr:
  text, guard = ' '.join(s.split()), None
  if s.startswith('@'):
    g, s = s[1:].split(None, 1)
    guard = (_reg(g.lstrip('!'), sc, text), g.startswith('!'))
  m = re.match(r'([\w.:]+)\s*(.*)$', s, re.S)
  if m is None: raise PTXError(f"cannot parse {text!r} in {fn.name}")
  op, rest = m.group(1), m.group(2).strip()
  if op.startswith('call'):
    cm = re.fullmatch(r'(?:\(([^)]*)\)\s*,\s*)?([\w$]+)\s*(?:,\s*\(([^)]*)\))?', rest, re.S)
    if cm is None: raise PTXError(f"cannot parse call {text!r}")
    names = lambda x: [syms[n.strip()][1] for n in (x or '').split(',') if n.strip()]
    return Instr(op, [names(cm.group(1)), cm.group(2), names(cm.group(3))], guard, text)
  return Instr(op, [parse_operand(o, sc, syms, text) for o in split_operands(rest)], guard, text)

def _reg(name:str, sc:_Scopes, text:str) -> Reg:
  if (r:=sc.lookup(name)) is None: raise PTXError(f"undeclared register {name} in {text!r}")
  return r

_SPECIAL = re.compile(r'%(tid|ntid|ctaid|nctaid)\.[xyz]|%(laneid|warpid|nwarpid|smid|gridid)$')

def parse_imm(o:str):
  if re.fullmatch(r'0[fF][0-9a-fA-F]{8}', o): return ('f32', int(o[2:], 16))
  if re.fullmatch(r'0[dD][0-9a-fA-F]{16}', o): return ('f64', int(o[2:], 16))
  t = o.rstrip('Uu')
  try: return ('int', int(t, 0) if not re.fullmatch(r'-?0\d+', t) else int(t, 8))
  except ValueError: pass
  try: return ('float', float(o))
  except ValueError: return None

def parse_operand(o:str, sc:_Scopes, syms:dict, text:str):
  """('reg', Reg) | ('imm', kind, value) | ('sreg', name) | ('sym', kind, Var, off) | ('vec', [operands]) | ('addr', base, off)
  | ('label', name) | ('sink',) | ('not', operand)"""
  if o.startswith('{'): return ('vec', [parse_operand(x, sc, syms, text) for x in split_operands(o[1:-1])])
  if o.startswith('['):
    inner = o[1:-1].replace(' ', '')
    m = re.fullmatch(r'([^+\-]+)?(?:\+?(-?(?:0[xX][0-9a-fA-F]+|\d+)))?', inner)
    if m is None or (m.group(1) is None and m.group(2) is None): raise PTXError(f"bad address {o!r} in {text!r}")
    base = parse_operand(m.group(1), sc, syms, text) if m.group(1) else None
    return ('addr', base, int(m.group(2), 0) if m.group(2) else 0)
  if o == '_': return ('sink',)
  if '|' in o: return ('vec', [parse_operand(x.strip(), sc, syms, text) for x in o.split('|')])
  if o.startswith('!'): return ('not', parse_operand(o[1:], sc, syms, text))
  if _SPECIAL.fullmatch(o): return ('sreg', o)
  if (r:=sc.lookup(o)) is not None: return ('reg', r)
  if (m:=re.fullmatch(r'([\w$]+)(?:\[(\d+)\]|\+(\d+))?', o)) and m.group(1) in syms:
    kind, v = syms[m.group(1)]
    return ('sym', kind, v, int(m.group(2) or m.group(3) or 0))
  if (imm:=parse_imm(o)) is not None: return ('imm',) + imm
  if re.fullmatch(r'[\w$]+', o): return ('label', o)
  raise PTXError(f"unknown operand {o!r} in {text!r}")

def parse_module(src:str) -> Module:
  src = _comment.sub('', src.replace('\0', ''))
  src = re.sub(r'^\s*\.(version|target|address_size)[^\n]*$', '', src, flags=re.M)
  mod, pos, syms = Module(), 0, {}
  bodies = []
  while pos < len(src):
    rest = src[pos:]
    if not rest.strip(): break
    if (m:=_header.match(rest.lstrip())) is not None:
      start = pos + (len(rest) - len(rest.lstrip())) + m.end()
      kind, name = m.group(2), m.group(4)
      if m.group(7) == ';': pos = start; continue      # forward declaration
      depth, i = 1, start
      for br in _brace.finditer(src, start):
        depth += 1 if br.group() == '{' else -1
        if depth == 0: i = br.end(); break
      else: raise PTXError(f"unterminated body of {name}")
      fn = Function(name, kind, _param_list(m.group(5)), _param_list(m.group(3)))
      mod.funcs[name] = fn
      bodies.append((fn, src[start:i-1]))
      pos = i
      continue
    end = src.index(';', pos)
    stmt = src[pos:end].strip()
    pos = end + 1
    if (dm:=_decl.match(stmt)) is None or dm.group(1) not in ('global', 'const', 'shared'): raise PTXError(f"unsupported module statement {stmt[:80]!r}")
    for v in _decl_vars(dm.group(1), dm.group(2), dm.group(3)): mod.globals[v.name] = v; syms[v.name] = (v.space, v)
  for fn, body in bodies: _parse_body(mod, fn, body, dict(syms))
  return mod
