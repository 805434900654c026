# The kernel room and the GPU room together (runs once orin_emu.gpu is there): a channel brought up with raw ioctls through the
# seam executes a pushbuffer the CPU wrote the way tinygrad's _submit_to_gpfifo does, and a GPU fault reaches the error notifier.
import ctypes
import numpy as np
import pytest
pytest.importorskip("orin_emu.gpu")
import tinygrad.runtime.support.hcq as hcq
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.kernel.uapi import ioctls as I, structs as S, consts as C
from tegra_conformance.tegra import PAGE, WC

def sem_release(va:int, value:int) -> list[int]:   # host-class SEM_EXECUTE release, 64-bit payload with timestamp, WFI
  return [1 << 29 | 5 << 16 | nv.NVC56F_SEM_ADDR_LO >> 2, va & 0xFFFFFFFF, va >> 32, value & 0xFFFFFFFF, value >> 32, 1 | 1 << 20 | 1 << 24 | 1 << 25]

def submit(k, orin, ring_buf, userd_buf, token:int, put:int, pb_va:int, nwords:int):
  ring, userd = orin.cpu_map(ring_buf, 8192), orin.cpu_map(userd_buf, PAGE)
  um = orin.ctrl.mmap(0, 0x10000, 3, 1, 0) if not hasattr(orin, "um") else orin.um
  orin.um = um
  ctypes.c_uint64.from_address(ring + 8 * put).value = (pb_va // 4) << 2 | nwords << 42 | 1 << 41
  ctypes.c_uint32.from_address(userd + 0x8C).value = put + 1
  ctypes.c_uint32.from_address(um + 0x90).value = token   # the doorbell store
  assert k.gpu.sync(timeout=10)
  gp_get = ctypes.c_uint32.from_address(userd + 0x88).value
  hcq.FileIOInterface.munmap(ring, 8192); hcq.FileIOInterface.munmap(userd, PAGE)
  return gp_get

def test_semaphore_release_through_the_seam(k, orin):
  as_ = orin.alloc_as(windows=True)
  tsg = orin.open_tsg()
  ch, sb, ring, userd = orin.channel(as_, tsg, orin.subcontext(tsg, as_))
  _, pb = orin.buffer(PAGE)
  _, sem = orin.buffer(PAGE, WC)
  pb_va, sem_va = orin.map(as_, pb), orin.map(as_, sem)
  words = sem_release(sem_va, 0x1122334455667788)
  p, s = orin.cpu_map(pb, PAGE), orin.cpu_map(sem, PAGE)
  ctypes.memmove(p, np.array(words, np.uint32).tobytes(), 4 * len(words))
  assert submit(k, orin, ring, userd, sb.work_submit_token, 0, pb_va, len(words)) == 1
  assert ctypes.c_uint64.from_address(s).value == 0x1122334455667788 and ctypes.c_uint64.from_address(s + 8).value != 0

def test_gpu_fault_reaches_notifier_and_log(k, orin):
  from tegra_conformance.tegra import kernel_log
  new = kernel_log()
  as_ = orin.alloc_as(windows=True)
  tsg = orin.open_tsg()
  ch, sb, ring, userd = orin.channel(as_, tsg, orin.subcontext(tsg, as_))
  _, note = orin.buffer(PAGE)
  ch.ioctl(I.NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, S.nvgpu_set_error_notifier(offset=0, size=16, mem=note.fd))
  _, pb = orin.buffer(PAGE)
  pb_va = orin.map(as_, pb)
  words = sem_release(0x10000000, 1)   # nothing is mapped at 256 MiB
  ctypes.memmove(orin.cpu_map(pb, PAGE), np.array(words, np.uint32).tobytes(), 4 * len(words))
  submit(k, orin, ring, userd, sb.work_submit_token, 0, pb_va, len(words))
  n = S.nvgpu_notification.from_buffer_copy(ctypes.string_at(orin.cpu_map(note, PAGE), 16))
  assert n.info32 == C.NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT and n.status == 0xFFFF
  assert ch.ioctl(I.NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT, g:=S.nvgpu_get_param_args()) == 0 and g.value == 1
  assert any("[MMU FAULT]" in t and "0x10000000" in t for _, t in new())

def test_semaphore_release_into_process_memory_through_from_va(k, orin):
  import mmap
  host = mmap.mmap(-1, PAGE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
  hp = ctypes.addressof(ctypes.c_char.from_buffer(host))
  as_ = orin.alloc_as(end=0xFF00000000, windows=True)
  tsg = orin.open_tsg()
  ch, sb, ring, userd = orin.channel(as_, tsg, orin.subcontext(tsg, as_))
  _, pb = orin.buffer(PAGE)
  va = orin.map(as_, orin.get_fd(orin.from_va(hp, PAGE)))   # CPU memory sits far above the GPU's 40-bit range: a kernel-chosen VA
  pb_va, words = orin.map(as_, pb), sem_release(va + 64, 0x0123456789ABCDEF)
  p = orin.cpu_map(pb, PAGE)
  ctypes.memmove(p, np.array(words, np.uint32).tobytes(), 4 * len(words))
  assert submit(k, orin, ring, userd, sb.work_submit_token, 0, pb_va, len(words)) == 1
  assert int.from_bytes(host[64:72], "little") == 0x0123456789ABCDEF   # the GPU wrote the process's own page
