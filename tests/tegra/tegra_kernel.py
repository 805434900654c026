# The Tegra suite's helpers. The kernel under it: the emulated Orin's when it runs on it (ORIN_EMU=1), the Jetson's own otherwise.
import os, subprocess, sys, textwrap, pytest

def emu_kernel():
  """The emulated Orin's kernel room when these tests run on it, None on a real Jetson."""
  if "orin_emu.hook" not in sys.modules: return None   # ORIN_EMU=1 imports the hook
  from orin_emu.kernel import kernel
  return kernel()

def nvmap_buffer(handle:int):
  """The emulated kernel's record of an nvmap handle; skips on a real Jetson, where nvmap's bookkeeping is not visible."""
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's view of nvmap buffers")
  return k.buffers[handle]

def kernel_log() -> list[str]:
  """This boot's kernel messages: the emulated kernel's log, or /dev/kmsg on a Jetson (skips when the user may not read it)."""
  if (k:=emu_kernel()) is not None: return k.klog.lines()
  try: fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
  except PermissionError: pytest.skip("/dev/kmsg is not readable (kernel.dmesg_restrict): run as root or in the adm group")
  lines = []
  try:
    while True: lines.append(os.read(fd, 8192).decode(errors="replace").split(";", 1)[-1].rstrip("\n"))
  except BlockingIOError: pass
  finally: os.close(fd)
  return lines

def nv_kernel(t):
  """The NVProgram of the last kernel that realizes tensor t, compiled as realize() compiles it, and its global and local size."""
  from tinygrad.engine.realize import compile_linear, get_runtime
  prg = compile_linear(t.schedule_linear()).src[-1].src[0]
  return get_runtime("NV", prg), *prg.arg.launch_dims({})

def run_child(src:str, **env) -> subprocess.CompletedProcess:
  """`src` in a fresh interpreter with DEV=NV: what a process sees that starts on the device, not one this process already opened."""
  path = os.pathsep.join([os.path.dirname(__file__), *filter(None, [os.environ.get("PYTHONPATH")])])   # the child imports these helpers too
  return subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True, text=True, timeout=300,
                        env={**os.environ, "DEV": "NV", "PYTHONPATH": path, **env})
