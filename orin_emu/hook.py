# ORIN_EMU=1 (the switch, README.md): importing this module puts the process on the emulated Orin. tinygrad is not imported here: when
# tinygrad.runtime.support.hcq is first imported, its FileIOInterface is replaced by the seam's, before any backend takes the name.
import atexit, importlib.abc, importlib.util, os, queue, sys, threading, types
HCQ, CC, NV, GRAPH = "tinygrad.runtime.support.hcq", "tinygrad.runtime.support.compiler_cuda", "tinygrad.runtime.ops_nv", "tinygrad.runtime.graph.hcq"
# HCQ's signal wait keeps upstream's timeout (HCQDEV_WAIT_TIMEOUT_MS, 30 s): a run that needs longer for interpreted kernels asks for it
# in its environment (scripts/suites.py, scripts/run), where it shows.
# The emulated GPU is a thread that shares the GIL with a host spinning in HCQSignal.wait: each numpy op of the interpreter that drops
# the GIL then waits out a whole switch interval to get it back, which halved the speed of the upstream suites at the default 5 ms.
sys.setswitchinterval(min(sys.getswitchinterval(), 0.0005))
# processes this one starts (tinygrad's lowering workers, BEAM's) compile for the emulated Orin too: their PTX reaches the store
os.environ["ORIN_EMU"] = "1"

def _patch(mod):
  from orin_emu.seam import emulated
  if getattr(real:=mod.FileIOInterface, "__module__", "") != "orin_emu.seam":
    mod.FileIOInterface = emu = emulated(real)
    # backends imported before the switch took the real class by name (from ... import FileIOInterface): rebind it there too
    for m in list(sys.modules.values()):
      if getattr(m, "__name__", "").startswith("tinygrad.") and getattr(m, "FileIOInterface", None) is real: m.FileIOInterface = emu
    mod.HCQAllocatorBase._free = _on_host(mod.HCQAllocatorBase._free)
  _register_ptx()

# The emulated GPU is threads of this process: a garbage collection that their allocations trigger runs the host's finalizers on them,
# and a finalizer that waits for the GPU (freeing memory synchronizes, a graph waits for its last run) would wait for itself. On a
# Jetson they run beside the GPU, so here a host thread takes such a call over from a GPU thread.
_handed: queue.SimpleQueue = queue.SimpleQueue()
_host_thread: list[threading.Thread] = []
def _run_handed():
  while (item:=_handed.get()) is not None:
    fn, args, kwargs = item
    try: fn(*args, **kwargs)
    except Exception as e:
      sys.unraisablehook(types.SimpleNamespace(exc_type=type(e), exc_value=e, exc_traceback=e.__traceback__, object=fn,
                                               err_msg="Exception ignored in a finalizer the emulated GPU's thread handed over"))
def _on_host(fn):
  try: from orin_emu.gpu import on_gpu_thread
  except ModuleNotFoundError as e:
    if e.name != "orin_emu.gpu": raise
    return fn   # no GPU room, no GPU threads
  def call(*args, **kwargs):
    if not on_gpu_thread(): return fn(*args, **kwargs)
    if not _host_thread:
      (t:=threading.Thread(target=_run_handed, name="orin-emu-host-finalizers", daemon=True)).start(); _host_thread.append(t)
      # registered after the devices' own finalizers, so run before them: a handed free still reading a device's signals when its
      # finalize unmaps them would crash the exit
      atexit.register(lambda: (_handed.put(None), t.join()))
    _handed.put((fn, args, kwargs))
  return call

def _register_ptx():
  # the SM room maps program images back to PTX (Contract C); also in processes that compile without opening a device (BEAM workers)
  try: from orin_emu.ptx import registry
  except ModuleNotFoundError as e:
    if e.name not in ("orin_emu.ptx", "orin_emu.ptx.registry"): raise
  else: registry.install()   # the SM room maps program images back to PTX (the program interface)

def _load_stored_programs(mod):
  # a program compiled in another process (a BEAM worker) has its PTX in the registry's store: register it when it is loaded
  from orin_emu.ptx import registry
  def init(self, dev, *args, _init=mod.NVProgram.__init__, **kwargs):
    registry.load(args[0].lib if hasattr(args[0], "lib") else args[1])   # a TinyELF (tinygrad >= 0.13), or name and lib
    _init(self, dev, *args, **kwargs)
  mod.NVProgram.__init__ = init

# HCQSignal.wait polls the signal in a loop that holds the GIL the emulated GPU's threads need, where on a Jetson it spins on a core of
# its own: each poll first waits, without the GIL, for the GPU to release something (or POLL_S). The loop, its timeout and fault checks
# stay tinygrad's.
POLL_S, _polls = 0.002, threading.local()
def _signal_sleep_yields(mod):
  from orin_emu.kernel import kernel
  sig = getattr(mod, "NVSignal", mod.HCQSignal)   # 0.12.0 before its fault report signals with HCQSignal itself
  def _sleep(self, *args, _sleep=sig._sleep, **kwargs):
    if (wait:=getattr(kernel().gpu, "wait_released", None)) is not None: _polls.seen = wait(getattr(_polls, "seen", None), POLL_S)
    return _sleep(self, *args, **kwargs)
  sig._sleep = _sleep

def _graph_on_host(mod): mod.HCQGraph.__del__ = _on_host(mod.HCQGraph.__del__)

HOOKS = {HCQ: _patch, CC: lambda mod: _register_ptx(), NV: lambda mod: (_load_stored_programs(mod), _signal_sleep_yields(mod)), GRAPH: _graph_on_host}

class _Loader(importlib.abc.Loader):
  def __init__(self, inner): self.inner = inner
  def create_module(self, spec): return self.inner.create_module(spec)
  def exec_module(self, mod):
    self.inner.exec_module(mod)
    HOOKS[mod.__name__](mod)

class _Finder(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path, target=None):
    if name not in HOOKS: return None
    sys.meta_path.remove(self)
    try: spec = importlib.util.find_spec(name)
    finally: sys.meta_path.insert(0, self)
    if spec is not None and spec.loader is not None: spec.loader = _Loader(spec.loader)
    return spec

for name, hook in HOOKS.items():   # already imported (the switch flipped inside a running process)
  if name in sys.modules: hook(sys.modules[name])
if not all(m in sys.modules for m in HOOKS) and not any(isinstance(f, _Finder) for f in sys.meta_path): sys.meta_path.insert(0, _Finder())
