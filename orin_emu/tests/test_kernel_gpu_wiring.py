# The GPU-room interface's call sites (README.md): what the kernel room hands the GPU room at boot, SETUP_BIND, ALLOC_OBJ_CTX and channel close.
# The GPU here is a recorder standing in for orin_emu.gpu.Ga10bGPU, so these run whether or not the GPU room is merged.
import ctypes, mmap
import numpy as np
import pytest
import tinygrad.runtime.support.hcq as hcq
from orin_emu.faults import ChannelError, MMUFault
from orin_emu.kernel import core, reset
from orin_emu.kernel.uapi import ioctls as I, structs as S

class RecorderGPU:
  def __init__(self, klog): self.klog, self.calls, self.usermode = klog, [], None
  def add_channel(self, *a): self.calls.append(("add_channel", *a))
  def alloc_obj(self, chid, cls):
    if cls not in (0xC7C0, 0xC7B5): raise ChannelError(f"class 0x{cls:x} not implemented")
    self.calls.append(("alloc_obj", chid, cls))
  def remove_channel(self, chid): self.calls.append(("remove_channel", chid))
  def flush_l2(self, *bits): self.calls.append(("flush_l2", *bits))

@pytest.fixture
def gk(monkeypatch):
  monkeypatch.setattr(core, "_gpu_room", lambda: RecorderGPU)
  yield reset()
  monkeypatch.undo()
  reset()

@pytest.fixture
def gorin(gk):
  from tegra_conformance.tegra import Orin
  o = Orin(); yield o; o.close()

def test_usermode_page_is_shared_with_the_gpu(gk, gorin):
  p = gorin.ctrl.mmap(0, 0x10000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)
  ctypes.c_uint32.from_address(p + 0x90).value = 511   # the doorbell store
  assert gk.gpu.usermode.view(np.uint32)[0x90 // 4] == 511 and len(gk.gpu.usermode) == 0x10000
  hcq.FileIOInterface.munmap(p, 0x10000)

def test_channels_reach_the_gpu(gk, gorin):
  as_, tsg, veid, (compute, sb0), (copy, sb1) = gorin.bring_up()
  adds = [c for c in gk.gpu.calls if c[0] == "add_channel"]
  assert [(c[1], c[2], c[5]) for c in adds] == [(511, 511, 1024), (510, 510, 1024)]
  _, chid, token, mem, gpfifo, entries, userd, on_error = adds[0]
  assert len(gpfifo) == 8192 and len(userd) == 0x1000 and gpfifo.dtype == userd.dtype == np.uint8
  ring = gorin.keep[0]   # the first channel's ring dma-buf: the CPU's view and the GPU's are the same bytes
  p = gorin.cpu_map(ring, 8192)
  ctypes.c_uint64.from_address(p + 8).value = 0x1234_5678_9ABC
  assert gpfifo[8:16].view(np.uint64)[0] == 0x1234_5678_9ABC
  hcq.FileIOInterface.munmap(p, 8192)
  va = gorin.map(as_, gorin.buffer(0x1000)[1])
  assert mem.lookup(va)[0] == va   # the channel's GpuMemory is its AS's
  assert ("alloc_obj", 511, 0xC7C0) in gk.gpu.calls and ("alloc_obj", 510, 0xC7B5) in gk.gpu.calls
  h, note = gorin.buffer(0x1000)
  compute.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=0, size=16, mem=note.fd))
  on_error(MMUFault(va))   # a GPU without an error_notifier view of its own: the kernel room writes the notifier
  assert (compute.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, g:=S.nvgpu_get_param_args()), g.value) == (0, 1)
  assert S.nvgpu_notification.from_buffer_copy(ctypes.string_at(gorin.cpu_map(note, 0x1000), 16)).info32 == 31
  del compute
  assert gk.gpu.calls[-1] == ("remove_channel", 511)

def test_only_classes_the_gpu_room_runs_reach_it(gk, gorin):
  # the kernel accepts every class ga10b_class_is_valid does (Turing compute here); the GPU room gets only the ones it emulates, and a
  # pushbuffer that binds another one faults its channel at SET_OBJECT (test_gpu_frontend.py)
  as_, tsg, veid, (compute, _), _ = gorin.bring_up()
  gorin.alloc_obj(compute, 0xC5C0)
  assert not [c for c in gk.gpu.calls if c[0] == "alloc_obj" and c[2] == 0xC5C0]
