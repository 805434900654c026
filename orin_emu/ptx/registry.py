# Compile-side registry: remembers the PTX behind every program image tinygrad builds, keyed by what the GPU sees.
# NVProgram uploads elf_loader(cubin, force_section_align=128) and points the QMD at the entry's .text section (with
# relocations applied, so relocated fields are masked out of the key: 8 bytes at the offset, the whole 16-byte instruction for a
# CALL.ABS target, R_CUDA_ABS47_34).
# Programs also run in processes other than the one that compiled them (BEAM compiles its candidates in worker processes and times
# them in the parent), so every registration is stored on disk too, in a directory all processes share (ORIN_EMU_PTX_DIR, inherited
# by children), one file per cubin named by its hash: a process that loads a cubin it did not compile registers it from there (load()).
# The directory sits beside tinygrad's disk cache, which keeps programs for later processes: the PTX lives as long as their cubins.
import copy, os, re, struct, hashlib, tempfile, threading, zlib
from dataclasses import dataclass, field
from pathlib import Path
from orin_emu.faults import GpuFault

HEAD = 64   # bytes of .text used as the first-level key
def _beside_cache() -> Path:
  from tinygrad.helpers import CACHEDB
  return Path(CACHEDB).with_name("orin-emu-ptx") if os.path.isabs(CACHEDB) else Path(tempfile.gettempdir()) / f"orin-emu-ptx-{os.getuid()}"
STORE = Path(os.environ.setdefault("ORIN_EMU_PTX_DIR", str(_beside_cache())))

@dataclass
class UnknownProgram(GpuFault):
  va: int
  def __str__(self): return f"no PTX registered for the program image at 0x{self.va:x}"

@dataclass
class Entry:
  name: str
  ptx: str
  text: bytes                 # .text bytes, relocated fields zeroed
  relocs: list[tuple[int, int]]   # (offset in .text, bytes) of the fields the loader patches
  text_off: int               # image offset of .text: image base = program_va - text_off
  param_base: int             # constant bank 0 offset of the kernel parameters (EIATTR_PARAM_CBANK; cbuf0's end for a kernel without)
  globals: dict[str, int] = field(default_factory=dict)   # module .global symbol -> image offset

_by_head: dict[bytes, list[Entry]] = {}
_odd: list[Entry] = []          # entries with a relocation inside the head
_seen: set[bytes] = set()

def _info_attrs(content:bytes):
  off = 0
  while off < len(content):
    fmt, attr, sz = struct.unpack_from("BBH", content, off)
    yield attr, content[off+4:off+4+sz] if fmt == 0x4 else sz.to_bytes(2, 'little')
    off += 4 + (sz if fmt == 0x4 else 0)

def register(cubin:bytes, ptx:bytes|str, store:bool=True) -> list[Entry]:
  from tinygrad.runtime.support.elf import elf_loader
  if (key:=hashlib.sha256(cubin).digest()) in _seen: return []
  _seen.add(key)
  ptx = ptx.decode().rstrip('\0') if isinstance(ptx, bytes) else ptx
  _, sections, relocs = elf_loader(cubin, force_section_align=128)
  symtab = next(sh for sh in sections if sh.header.sh_type == 2)
  strtab = sections[symtab.header.sh_link].content
  glob = {}
  for i in range(0, len(symtab.content), 24):
    st_name, st_info, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", symtab.content, i)
    if st_info & 0xf == 1 and 0 < shndx < len(sections):   # STT_OBJECT: module variables such as __cudart_i2opi_f
      glob[strtab[st_name:strtab.index(b'\0', st_name)].decode()] = sections[shndx].header.sh_addr + value
  out = []
  for sh in sections:
    if not sh.name.startswith('.text.'): continue
    name, a, n = sh.name[6:], sh.header.sh_addr, sh.header.sh_size
    info = next((s for s in sections if s.name == f'.nv.info.{name}'), None)
    if not re.search(rf"\.entry\s+{re.escape(name)}\b", ptx): continue   # not a kernel entry (e.g. ptxas' __cuda_sm20_div_s64 helper)
    pbase = next((struct.unpack_from("<IH", d)[1] for attr, d in _info_attrs(info.content) if attr == 0xa), None) if info else None
    if pbase is None: pbase = next(s.header.sh_size for s in sections if s.name == f'.nv.constant0.{name}')   # no parameters (no EIATTR_PARAM_CBANK)
    rel = sorted((o - a, 16 if typ == 0x3a else 8) for o, _, typ, _ in relocs if a <= o < a + n)
    text = bytearray(sh.content)
    for o, w in rel: text[o:o+w] = bytes(len(text[o:o+w]))
    e = Entry(name, ptx, bytes(text), rel, a, pbase, glob)
    (_odd if any(o < HEAD for o, _ in rel) else _by_head.setdefault(e.text[:HEAD], [])).append(e)
    out.append(e)
  if store and not (f:=STORE / key.hex()).exists():
    STORE.mkdir(parents=True, exist_ok=True)
    (tmp:=STORE / f".{f.name}.{os.getpid()}").write_bytes(zlib.compress(ptx.encode()))
    os.replace(tmp, f)
  return out

def load(cubin:bytes):
  """A program is about to be loaded: if another process compiled it, register its PTX from the store."""
  if (key:=hashlib.sha256(cubin).digest()) not in _seen and (f:=STORE / key.hex()).exists():
    register(cubin, zlib.decompress(f.read_bytes()).decode(), store=False)

def _matches(e:Entry, prog:memoryview) -> bool:
  if len(prog) < len(e.text): return False
  t = bytearray(prog[:len(e.text)]) if e.relocs else bytes(prog[:len(e.text)])
  for o, w in e.relocs: t[o:o+w] = bytes(len(t[o:o+w]))
  return t == e.text

_by_va: dict[int, Entry] = {}   # last entry seen at each program address: one compare instead of a search on relaunch

def lookup(prog, program_va:int) -> Entry:
  prog = memoryview(prog).cast('B')
  if (e:=_by_va.get(program_va)) is not None and _matches(e, prog): return e
  for e in reversed(_by_head.get(bytes(prog[:HEAD]), []) + _odd):
    if _matches(e, prog):
      _by_va[program_va] = e
      return e
  raise UnknownProgram(program_va)

_installed = False
def install():
  """Wrap tinygrad's NV compilers so every cubin they hand out (fresh or from the disk cache) has its PTX registered."""
  global _installed
  if _installed: return
  _installed = True   # before the import: importing compiler_cuda under the hook calls install() again
  from tinygrad.runtime.support import compiler_cuda as cc
  from tinygrad.runtime.autogen import nvrtc
  def cached(orig, to_ptx):
    def compile_cached(self, src:str) -> bytes:
      lib = orig(self, src)
      if hashlib.sha256(lib).digest() not in _seen: register(lib, to_ptx(self, src))   # disk-cache hit: derive the PTX again
      return lib
    return compile_cached
  if hasattr(cc, "NVRTCCompiler"): _install_nvrtc(cc, nvrtc, cached)
  else:
    def nv_compile(self, src:str) -> bytes:
      # same NVRTC program as NVCompiler.compile; the PTX is read from it before the CUBIN size query
      ptx = []
      def cubin_size(prog, psz):
        ptx.append(cc._get_bytes(prog, nvrtc.nvrtcGetPTX, nvrtc.nvrtcGetPTXSize, cc.nvrtc_check))
        return nvrtc.nvrtcGetCUBINSize(prog, psz)
      lib = self._compile_program(src, nvrtc.nvrtcGetCUBIN, cubin_size)
      register(lib, ptx[0])
      return lib
    cc.NVCompiler.compile = nv_compile
    cc.NVCompiler.compile_cached = cached(cc.NVCompiler.compile_cached, cc.CUDACompiler.compile)
  orig_ptx = cc.NVPTXCompiler.compile
  def nvptx_compile(self, src:str) -> bytes:
    lib = orig_ptx(self, src)
    register(lib, cc.PTXCompiler.compile(self, src))
    return lib
  cc.NVPTXCompiler.compile = nvptx_compile
  cc.NVPTXCompiler.compile_cached = cached(cc.NVPTXCompiler.compile_cached, cc.PTXCompiler.compile)

def _install_nvrtc(cc, nvrtc, cached):
  # tinygrad >= 0.13 has one NVRTCCompiler, CUBIN or PTX by its ptx flag: the PTX is read from the same NVRTC program before its CUBIN
  ptx = threading.local()
  orig_get, orig_compile = cc._get_bytes, cc.NVRTCCompiler.compile
  def get_bytes(prog, get_str, get_sz, check):
    if get_str is nvrtc.nvrtcGetCUBIN: ptx.last = orig_get(prog, nvrtc.nvrtcGetPTX, nvrtc.nvrtcGetPTXSize, check)
    return orig_get(prog, get_str, get_sz, check)
  def compile(self, src:str) -> bytes:
    lib = orig_compile(self, src)
    if not self.ptx: register(lib, ptx.last)
    return lib
  def to_ptx(self, src:str) -> bytes:
    (c:=copy.copy(self)).ptx = True
    return orig_compile(c, src)
  def compile_cached(self, src:str, _orig=cc.NVRTCCompiler.compile_cached) -> bytes:
    return _orig(self, src) if self.ptx else cached(_orig, to_ptx)(self, src)
  cc._get_bytes, cc.NVRTCCompiler.compile, cc.NVRTCCompiler.compile_cached = get_bytes, compile, compile_cached
