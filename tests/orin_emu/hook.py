# ORIN_EMU=1 (the switch, README.md): importing this module puts the process on the emulated Orin. tinygrad is not imported here: when
# tinygrad.runtime.support.hcq is first imported, its FileIOInterface is replaced by the seam's, before any backend takes the name.
import importlib.abc, importlib.util, os, sys
HCQ = "tinygrad.runtime.support.hcq"
# HCQ's signal wait keeps upstream's timeout (HCQDEV_WAIT_TIMEOUT_MS, 30 s): a run that needs longer for interpreted kernels asks for it
# in its environment (scripts/suites.py, scripts/run), where it shows.
# The emulated GPU is a thread that shares the GIL with a host spinning in HCQSignal.wait: each numpy op of the interpreter that drops
# the GIL then waits out a whole switch interval to get it back, which halved the speed of the upstream suites at the default 5 ms.
sys.setswitchinterval(min(sys.getswitchinterval(), 0.0005))

def _patch(mod):
  from orin_emu.seam import emulated
  if getattr(real:=mod.FileIOInterface, "__module__", "") != "orin_emu.seam":
    mod.FileIOInterface = emu = emulated(real)
    # backends imported before the switch took the real class by name (from ... import FileIOInterface): rebind it there too
    for m in list(sys.modules.values()):
      if getattr(m, "__name__", "").startswith("tinygrad.") and getattr(m, "FileIOInterface", None) is real: m.FileIOInterface = emu
  try: from orin_emu.ptx import registry
  except ModuleNotFoundError as e:
    if e.name not in ("orin_emu.ptx", "orin_emu.ptx.registry"): raise
  else: registry.install()   # the SM room maps program images back to PTX (the program interface)

class _Loader(importlib.abc.Loader):
  def __init__(self, inner): self.inner = inner
  def create_module(self, spec): return self.inner.create_module(spec)
  def exec_module(self, mod): self.inner.exec_module(mod); _patch(mod)

class _Finder(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path, target=None):
    if name != HCQ: return None
    sys.meta_path.remove(self)
    try: spec = importlib.util.find_spec(name)
    finally: sys.meta_path.insert(0, self)
    if spec is not None and spec.loader is not None: spec.loader = _Loader(spec.loader)
    return spec

if HCQ in sys.modules: _patch(sys.modules[HCQ])   # already imported (the switch flipped inside a running process)
elif not any(isinstance(f, _Finder) for f in sys.meta_path): sys.meta_path.insert(0, _Finder())
