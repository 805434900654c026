# Test support: a dict-backed GpuMemory (the memory interface, README.md) and a runner that lowers tinygrad schedules with the sm_87 renderers and
# executes them on the SM room directly, laying out parameters exactly as NVProgram/NVArgsState do.
import bisect, struct, time, numpy as np
from orin_emu.faults import MMUFault

class DictMemory:
  """GPU VA space of separate mappings with unmapped gaps between them."""
  def __init__(self, start=0x200000000): self.bases, self.bufs, self.next = [], {}, start
  def map(self, size:int, align:int=0x1000) -> tuple[int, np.ndarray]:
    va = (self.next + align - 1) // align * align
    buf = np.zeros((size + 0xFFF) // 0x1000 * 0x1000, np.uint8)
    return self.map_at(va, buf)
  def map_at(self, va:int, buf:np.ndarray):
    bisect.insort(self.bases, va); self.bufs[va] = buf
    self.next = max(self.next, va + len(buf) + 0x10000)
    return va, buf
  def unmap(self, va:int): self.bases.remove(va); del self.bufs[va]
  def lookup(self, va:int):
    i = bisect.bisect_right(self.bases, va) - 1
    if i >= 0 and va < (b:=self.bases[i]) + len(self.bufs[b]): return b, self.bufs[b]
    raise MMUFault(va)

SHARED_WINDOW, LOCAL_WINDOW = 0xFE00000000, 0xFD00000000   # the windows TegraIface reserves (patch 0016)

def cbuf0_prefix(cubin:bytes) -> bytes:
  """The cbuf_0 words NVProgram writes ahead of the kernel arguments: max(EIATTR_PARAM_CBANK offset / 4, 12) words, windows at 6..11."""
  from tinygrad.runtime.support.elf import elf_loader
  from tinygrad.runtime.ops_nv import NVProgram
  _, sections, _ = elf_loader(cubin, force_section_align=128)
  cbuf0_size = 0
  for sh in sections:
    if sh.name.startswith(".nv.info."):
      for _, param, data in NVProgram._parse_elf_info(None, sh):
        if param == 0xa: cbuf0_size = struct.unpack_from("IH", data)[1]
  prefix = [0] * max(cbuf0_size // 4, 12)
  prefix[6:12] = [SHARED_WINDOW & 0xffffffff, SHARED_WINDOW >> 32, LOCAL_WINDOW & 0xffffffff, LOCAL_WINDOW >> 32, 0xfffdc0, 0]
  return struct.pack(f"<{len(prefix)}I", *prefix)

def nv_cbuf0(cubin:bytes|None, buf_vas:list[int], vals:list[int], prefix:bytes|None=None) -> bytes:
  """Constant bank 0 as NVProgram + NVArgsState write it: cbuf_0 prefix, then buffer VAs, then 32-bit vals."""
  return (prefix or cbuf0_prefix(cubin)) + struct.pack(f"<{len(buf_vas)}Q", *buf_vas) + struct.pack(f"<{len(vals)}I", *vals)

class Loaded:
  """A cubin placed in GPU memory the way NVProgram places it."""
  def __init__(self, mem:DictMemory, cubin:bytes, name:str):
    from tinygrad.runtime.support.elf import elf_loader
    image, sections, relocs = elf_loader(cubin, force_section_align=128)
    image = bytearray(image)
    self.va, buf = mem.map(len(image) + 0x1000)
    for off, sym_off, typ, addend in relocs:
      addr = self.va + sym_off + addend
      if typ == 2: image[off:off+8] = struct.pack('<Q', addr)
      elif typ == 0x38: image[off+4:off+8] = struct.pack('<I', addr & 0xffffffff)
      elif typ == 0x39: image[off+4:off+8] = struct.pack('<I', addr >> 32)
      elif typ == 0x3a:   # R_CUDA_ABS47_34: bits 34..80 hold the target in 4-byte units
        image[off:off+16] = (int.from_bytes(image[off:off+16], 'little') & ~(((1 << 47) - 1) << 34) | (addr >> 2) << 34).to_bytes(16, 'little')
      else: raise RuntimeError(f"unknown reloc {typ}")
    buf[:len(image)] = np.frombuffer(bytes(image), np.uint8)
    text = next(sh for sh in sections if sh.name == f".text.{name}")
    self.prog_va, self.buf, self.cubin = self.va + text.header.sh_addr, buf, cubin
  def image(self): return self.buf[self.prog_va - self.va:]

def compilers():
  """Renderer and compiler for sm_87 as NV pairs them: nv (CUDA C through NVRTC) and ptx (PTX through nvJitLink)."""
  from orin_emu.ptx import registry
  from tinygrad.renderer.ptx import PTXRenderer
  registry.install()
  try: from tinygrad.helpers import Target   # tinygrad >= 0.13: a renderer carries its compiler
  except ImportError:
    from tinygrad.runtime.support.compiler_cuda import NVCompiler, NVPTXCompiler
    from tinygrad.renderer.cstyle import NVRenderer
    return {"nv": (NVRenderer("sm_87"), NVCompiler("sm_87")), "ptx": (PTXRenderer("sm_87"), NVPTXCompiler("sm_87"))}
  from tinygrad.renderer.cstyle import CUDARenderer
  nv, ptx = CUDARenderer(Target("NV", arch="sm_87")), PTXRenderer(Target("NV", arch="sm_87"))
  return {"nv": (nv, nv.compiler), "ptx": (ptx, ptx.compiler)}

class Runner:
  """Executes a tinygrad tensor's schedule on the SM room: every kernel rendered, compiled, loaded and launched."""
  def __init__(self, kind:str):
    self.renderer, self.compiler = compilers()[kind]
    self.mem, self.vas, self.launches, self.exec_s = DictMemory(), {}, 0, 0.0
  def va(self, b):
    base = b.base if hasattr(b, 'base') else b
    if id(base) not in self.vas: self.vas[id(base)] = (self.mem.map(max(base.nbytes, 1))[0], base)
    return self.vas[id(base)][0] + getattr(b, 'offset', 0)
  def array(self, b, dtype, shape):
    va = self.va(b)
    base, buf = self.mem.lookup(va)
    return buf[va - base:va - base + b.nbytes].view(dtype).reshape(shape)
  def kernels(self, out):
    """Each step of out's schedule: (dst, src) Buffers of a copy, or (cubin, function name, global and local size, Buffers, vals)."""
    from tinygrad.uop.ops import Ops
    if not hasattr(out, "schedule_linear"):   # tinygrad 0.12
      from tinygrad.engine.realize import get_program
      for ei in out.schedule():
        if ei.ast.op is Ops.COPY: yield tuple(ei.bufs)
        elif ei.ast.op is not Ops.SINK: raise NotImplementedError(f"schedule item {ei.ast.op}")
        else:
          p = get_program(ei.ast, self.renderer)
          yield (self.compiler.compile_cached(p.src), p.function_name, *p.launch_dims({**ei.fixedvars}), ei.bufs, [ei.fixedvars[v.expr] for v in p.vars])
      return
    from tinygrad.codegen import to_program
    from tinygrad.engine.realize import get_call_arg_uops
    linear, var_vals = out.linear_with_vars()
    for call in linear.src:
      ast, bufs = call.src[0], [u.buffer for u in get_call_arg_uops(call)]
      if ast.op is Ops.COPY: yield tuple(bufs)
      elif ast.op is not Ops.SINK: raise NotImplementedError(f"schedule item {ast.op}")
      else:
        p = to_program(ast, self.renderer)   # compiled with self.renderer's compiler (self.compiler)
        yield (p.src[3].arg, p.arg.function_name, *p.arg.launch_dims(var_vals), [bufs[i] for i in p.arg.globals], list(p.arg.vals(var_vals)))
  def realize(self, out, inputs:dict):
    from orin_emu.ptx import launch
    for t, v in inputs.items(): self.array(t.uop.buffer, v.dtype, v.shape)[...] = v
    for step in self.kernels(out):
      if len(step) == 2:   # host -> device upload (e.g. rand's seed): the source lives on the CPU device
        dst, src = step
        src.ensure_allocated()
        self.array(dst, np.uint8, (dst.nbytes,))[...] = np.frombuffer(bytes(src.as_memoryview() if hasattr(src, "as_memoryview") else src.as_buffer()), np.uint8)
        continue
      cubin, name, gs, ls, bufs, vals = step
      ld = Loaded(self.mem, cubin, name)
      cbuf0 = nv_cbuf0(cubin, [self.va(b) for b in bufs], vals)
      t0 = time.perf_counter()
      launch(ld.image(), grid=tuple(gs), block=tuple(ls or (1, 1, 1)), cbuf0=cbuf0, shared_bytes=0x400, mem=self.mem,
             shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=ld.prog_va)
      self.launches, self.exec_s = self.launches + 1, self.exec_s + time.perf_counter() - t0
    from tinygrad import dtypes
    return self.array(out.uop.buffer, np.uint16 if out.dtype == dtypes.bfloat16 else np.dtype(out.dtype.fmt), out.shape).copy()
