# tinygrad's own NVComputeQueue/NVCopyQueue pushbuffers and its _submit_to_gpfifo (ring entry, GP_PUT, barrier, doorbell store to the
# usermode page), run unmodified against the asynchronous emulated GPU through a minimal stand-in for the NVDevice fields they touch.
import time, types
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from tinygrad.runtime.ops_nv import NVComputeQueue, NVCopyQueue, GPFifo
from tinygrad.runtime.support.hcq import BumpAllocator
from orin_emu.gpu import Ga10bGPU
from orin_emu.gpu.rig import FlatMemory

CMDQ, SIG, SRC, DST, ENTRIES = 0x1000000, 0x2000000, 0x3000000, 0x4000000, 1024

def device(gpu, mem):
  cmdq, usermode = mem.map(CMDQ, 0x200000), np.zeros(0x10000, np.uint8)
  gpu.usermode = usermode
  def fifo(chid, cls):
    ring, userd = np.zeros(ENTRIES * 8, np.uint8), np.zeros(0x1000, np.uint8)
    gpu.add_channel(chid, chid, mem, ring, ENTRIES, userd)
    gpu.alloc_obj(chid, cls)
    return GPFifo(ring=ring.view(np.uint64), gpput=userd[nv.AmpereAControlGPFifo.GPPut.offset:].view(np.uint32), entries_count=ENTRIES, token=chid)
  return types.SimpleNamespace(cmdq_page=types.SimpleNamespace(va_addr=CMDQ), cmdq_allocator=BumpAllocator(size=0x200000, base=CMDQ, wrap=True),
    cmdq=cmdq.view(np.uint32), gpu_mmio=usermode.view(np.uint32), compute_gpfifo=fifo(511, 0xc7c0), dma_gpfifo=fifo(510, 0xc7b5),
    _check_usable=lambda: None)   # submit() first asks the device whether this process may use it

def hcq_buf(addr): return types.SimpleNamespace(va_addr=addr)   # an HCQBuffer as copy() reads it

def wait(mem, va, value):
  deadline = time.monotonic() + 20
  while int(mem.view(va, 1, np.uint64)[0]) < value: assert time.monotonic() < deadline, f"signal at 0x{va:x} stuck below {value}"

def test_tinygrad_setup_copy_and_timeline():
  log, mem = [], FlatMemory()
  gpu, sig = Ga10bGPU(log.append), types.SimpleNamespace(value_addr=SIG)
  mem.map(SIG, 0x1000), mem.map(SRC, 1 << 20), mem.map(DST, 1 << 20)
  dev = device(gpu, mem)
  mem.view(SRC, 1 << 20)[:] = np.resize(np.arange(251, dtype=np.uint8), 1 << 20)
  NVComputeQueue().setup(compute_class=0xc7c0, local_mem_window=0xFD00000000, shared_mem_window=0xFE00000000).signal(sig, 1).submit(dev)
  NVCopyQueue().wait(sig, 1).setup(copy_class=0xc7b5).signal(sig, 2).submit(dev)
  for i in range(3, 1200):   # more submissions than the 1024-entry rings hold, each waiting for the previous one: no lapping
    if i % 2: NVCopyQueue().wait(sig, i - 1).copy(hcq_buf(DST + i), hcq_buf(SRC + i), 4096 + i).signal(sig, i).submit(dev)
    else: NVComputeQueue().wait(sig, i - 1).memory_barrier().signal(sig, i).submit(dev)
    if i % 100 == 0: wait(mem, SIG, i)
  wait(mem, SIG, 1199)
  assert gpu.errors == [] and log == []
  assert np.array_equal(mem.view(DST + 1199, 4096 + 1199), mem.view(SRC + 1199, 4096 + 1199))
  assert gpu.counters["invalidate_shader_caches_no_wfi"] == 598 and gpu.counters["non_stall_interrupt"] == 599
  assert gpu.channels[511].objs[0xc7c0].shared_window == 0xFE00000000
  gpu.close()
