# EMU: a test-only tinygrad device that renders and compiles exactly as NV does for sm_87 and runs every kernel on the SM room
# over a DictMemory, so upstream tests (test_ops, test_jit) exercise the interpreter without the kernel and GPU rooms.
# Use: DEV=EMU python -m pytest -p orin_emu.ptx.device <tinygrad>/test/test_ops.py   (DEV=EMU:PTX or, on 0.12, NV_PTX=1 selects PTXRenderer)
import sys, time, functools, numpy as np
from tinygrad.device import Compiled, LRUAllocator, BufferSpec
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.helpers import ALLOW_TF32
from tinygrad.dtype import dtypes
from orin_emu.ptx.testing import DictMemory, Loaded, nv_cbuf0, cbuf0_prefix, SHARED_WINDOW, LOCAL_WINDOW
from orin_emu.ptx import launch, registry
try: from tinygrad.device import CompilerSet, CompilerPair   # tinygrad 0.12: renderers paired with compilers
except ImportError: CompilerSet = None
# on import: compile workers (spawned) import this module when they unpickle its renderers, and must register their PTX too
registry.install()

def _no_tf32(r):   # tinygrad keeps float32 off the tf32 tensor cores on NV unless ALLOW_TF32; the renderers here say "EMU"
  if not ALLOW_TF32: r.tensor_cores = [tc for tc in r.tensor_cores if tc.dtype_in != dtypes.float]
  return r
if CompilerSet is not None:
  from tinygrad.renderer.cstyle import NVRenderer
  from tinygrad.helpers import NV_PTX
  from tinygrad.runtime.support.compiler_cuda import NVCompiler, NVPTXCompiler
  class EmuNVRenderer(NVRenderer):
    device = "EMU"
    def __init__(self, arch:str): _no_tf32(super().__init__(arch) or self)
  class EmuPTXRenderer(PTXRenderer):
    def __init__(self, arch:str): _no_tf32(super().__init__(arch, device="EMU") or self)
  def renderers(): return CompilerSet([CompilerPair(functools.partial(EmuNVRenderer, "sm_87"), functools.partial(NVCompiler, "sm_87")),
                                       CompilerPair(functools.partial(EmuPTXRenderer, "sm_87"), functools.partial(NVPTXCompiler, "sm_87"), NV_PTX)])
else:
  # a renderer carries its compiler, chosen by the target: a device other than CUDA gets NVRTC's cubin and nvJitLink, as NV does
  from tinygrad.renderer.cstyle import CUDARenderer
  class EmuNVRenderer(CUDARenderer):
    def __init__(self, target): _no_tf32(super().__init__(target) or self)
  class EmuPTXRenderer(PTXRenderer):
    def __init__(self, target): _no_tf32(super().__init__(target) or self)
  def renderers(): return [EmuNVRenderer, EmuPTXRenderer]   # DEV=EMU, DEV=EMU:PTX

class EmuBuffer:
  def __init__(self, va:int, size:int): self.va, self.size = va, size

class EmuAllocator(LRUAllocator['EmuDevice']):
  def _alloc(self, size:int, options:BufferSpec): return EmuBuffer(self.dev.mem.map(size)[0], size)
  def _free(self, opaque:EmuBuffer, options:BufferSpec): self.dev.mem.unmap(opaque.va)
  def _view(self, b:EmuBuffer):
    base, buf = self.dev.mem.lookup(b.va)
    return buf[b.va - base:b.va - base + b.size]
  def _copyin(self, dest:EmuBuffer, src:memoryview): self._view(dest)[:] = np.frombuffer(src, np.uint8)
  def _copyout(self, dest:memoryview, src:EmuBuffer): np.frombuffer(dest, np.uint8)[:] = self._view(src)
  def _offset(self, buf:EmuBuffer, size:int, offset:int): return EmuBuffer(buf.va + offset, size)

class EmuProgram:
  def __init__(self, dev:'EmuDevice', *args):
    name, lib = (args[0].name, args[0].lib) if len(args) == 1 else args   # a TinyELF (tinygrad >= 0.13), or name and lib
    registry.load(lib)   # compiled in another process (a BEAM worker): its PTX is in the registry's store
    self.dev, self.name, self.lib, self.loaded, self.prefix = dev, name, lib, Loaded(dev.mem, lib, name), cbuf0_prefix(lib)
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False, timeout=None):
    st = time.perf_counter()
    launch(self.loaded.image(), grid=tuple(global_size), block=tuple(local_size or (1, 1, 1)), cbuf0=nv_cbuf0(None, [b.va for b in bufs], list(vals), self.prefix),
           shared_bytes=0x400, mem=self.dev.mem, shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=self.loaded.prog_va)
    return time.perf_counter() - st if wait else None

class EmuDevice(Compiled):
  def __init__(self, device:str):
    self.mem = DictMemory()
    if CompilerSet is not None: super().__init__(device, EmuAllocator(self), renderers(), functools.partial(EmuProgram, self))
    else: super().__init__(device, EmuAllocator(self), renderers(), EmuProgram, arch="sm_87")

sys.modules.setdefault("tinygrad.runtime.ops_emu", sys.modules[__name__])
