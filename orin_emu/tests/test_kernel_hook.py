# The switch: a fresh process with the hook (or ORIN_EMU=1 through the environment's .pth) opens the ctrl node through tinygrad's
# own FileIOInterface and gets ga10b's characteristics; tinygrad itself is only imported when the program imports it.
import os, pathlib, subprocess, sys, sysconfig
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = """
import sys, os, ctypes
print('tinygrad' in sys.modules)
from tinygrad.runtime.support.hcq import FileIOInterface
from orin_emu.kernel.uapi import structs as S, ioctls as I
ctrl = FileIOInterface('/dev/nvgpu/igpu0/ctrl', os.O_RDWR | os.O_CLOEXEC)
c = S.nvgpu_gpu_characteristics()
req = S.nvgpu_gpu_get_characteristics(gpu_characteristics_buf_size=328, gpu_characteristics_buf_addr=ctypes.addressof(c))
ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, req)
print(hex(c.arch), hex(c.impl), hex(c.compute_class), hex(c.gpfifo_class), hex(c.sm_arch_sm_version), bytes(c.chipname).rstrip(b'\\0').decode())
"""
GA10B = ["0x170", "0xb", "0xc7c0", "0xc76f", "0x807", "ga10b"]

def run(code:str, **env) -> list[str]:
  e = {k: v for k, v in os.environ.items() if k not in ("ORIN_EMU", "ORIN_EMU_FAULTS", "HCQDEV_WAIT_TIMEOUT_MS")}
  e.update(PYTHONPATH=os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")]), **env)
  out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  return out.stdout.split()

def test_hook_import_activates_the_emulator_lazily():
  assert run("import orin_emu.hook\n" + PROBE) == ["False", *GA10B]

def test_without_the_switch_the_node_is_not_there():
  if os.path.exists("/dev/nvgpu/igpu0/ctrl"): pytest.skip("a real Jetson")
  assert run("from tinygrad.runtime.support.hcq import FileIOInterface as F; print(F.exists('/dev/nvgpu/igpu0/ctrl'))") == ["False"]

def test_orin_emu_env_switch():
  if not (pathlib.Path(sysconfig.get_paths()["purelib"])/"orin_emu.pth").exists(): pytest.skip("scripts/setup has not written orin_emu.pth")
  assert run(PROBE, ORIN_EMU="1") == ["False", *GA10B]

def test_hook_after_tinygrad_was_imported_still_patches():
  assert run("import tinygrad.runtime.support.hcq as h, orin_emu.hook; print(h.FileIOInterface.exists('/dev/nvmap'))") == ["True"]

def test_hook_after_ops_nv_was_imported_reaches_its_interface():
  # ops_nv took FileIOInterface by name before the switch flipped: its ioctls must still reach the emulator, not fcntl (ENOTTY)
  code = "import tinygrad.runtime.ops_nv as nv, orin_emu.hook, tinygrad.runtime.support.hcq as h; print(nv.FileIOInterface is h.FileIOInterface)"
  assert run(code) == ["True"]

def test_switch_keeps_upstreams_wait_timeout():
  # a run that wants longer waits for interpreted kernels says so in its environment; the switch alone changes nothing (it raised it to 240 s)
  # HCQSignal.wait reads HCQDEV_WAIT_TIMEOUT_MS when it is called without a timeout
  code = "import orin_emu.hook, tinygrad.runtime.support.hcq; from tinygrad.helpers import getenv; print(getenv('HCQDEV_WAIT_TIMEOUT_MS', 30000))"
  assert run(code) == ["30000"]
  assert run(code, HCQDEV_WAIT_TIMEOUT_MS="240000") == ["240000"]

def test_hook_shortens_the_gil_switch_interval():
  # the GPU thread gets the GIL back from a host spinning on a signal within 0.5 ms, not the default 5 ms
  assert float(run("import sys, orin_emu.hook; print(sys.getswitchinterval())")[0]) <= 0.0005

def test_host_wait_leaves_the_gil_to_the_gpu():
  # a host waiting on a signal polls once per GPU release, not in a loop that takes the GIL from the GPU's threads; the kernel is held
  # until the timer fires, so a spinning wait polls thousands of times meanwhile
  code = """
import threading, orin_emu.hook as h
from tinygrad import Tensor
import tinygrad.runtime.ops_nv as nv
from orin_emu.kernel import kernel
from orin_emu.ptx import launch
h.POLL_S = 60
a = (Tensor([1, 2, 3], device='NV') + 1).realize()
gate, polls, sleep = threading.Event(), [0], nv.NVSignal._sleep
def held(*args, **kwargs): gate.wait(); return launch(*args, **kwargs)
def counted(self, *args, **kwargs): polls[0] += 1; return sleep(self, *args, **kwargs)
kernel().gpu._executor, nv.NVSignal._sleep = held, counted
threading.Timer(0.5, gate.set).start()
print((a * 2).tolist(), polls[0])
"""
  out = run(code)
  assert out[:3] == ["[4,", "6,", "8]"] and int(out[3]) <= 4, out

def test_finalizers_handed_off_a_gpu_thread_finish_before_exit():
  # the devices' atexit finalize unmaps their signals: a free handed over from a GPU thread must not still be running then
  code = """
import orin_emu.hook, threading, time
from orin_emu import hook
from orin_emu.gpu import gpu
def slow_free(): time.sleep(0.5); print("freed", flush=True)
def on_a_gpu_thread(): gpu._thread.gpu = True; hook._on_host(slow_free)()
threading.Thread(target=on_a_gpu_thread).start()
"""
  assert run(code) == ["freed"]
