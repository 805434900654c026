# Host semaphores (acquire comparisons tinygrad uses, 64-bit releases with timestamps, reductions), cross-channel ordering and the
# cache-maintenance accounting.
import numpy as np, pytest
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.gpu import Ga10bGPU
from orin_emu.gpu.rig import FlatMemory, PB, Submitter

SEM, DATA = 0x200000, 0x400000

@pytest.fixture
def rig():
  log, mem = [], FlatMemory()
  gpu = Ga10bGPU(log.append, deterministic=True)
  mem.map(SEM, 0x10000), mem.map(DATA, 0x10000)
  return gpu, mem

def u64(mem, va): return int(mem.view(va, 1, np.uint64)[0])
def put64(mem, va, v): mem.view(va, 1, np.uint64)[0] = v

OP = {"eq": nv.NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE, "strict_geq": nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ,
      "circ_geq": nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, "and": nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND,
      "nor": nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR}

@pytest.mark.parametrize("op,want,blocked,passes", [("eq", 5, 4, 5), ("strict_geq", 5, 4, 6), ("circ_geq", 5, 4, 7),
  ("circ_geq", 2**64 - 16, 2**64 - 17, 3), ("strict_geq", 2**64 - 16, 3, 2**64 - 1), ("and", 0b100, 0b011, 0b110), ("nor", 0b1, 2**64 - 1, 0b10)])
def test_acquire_waits_until_condition_holds(rig, op, want, blocked, passes):
  gpu, mem = rig
  s = Submitter(gpu, mem, 511)
  put64(mem, SEM, blocked)
  s.submit(PB().acquire(SEM, want, op=OP[op]).release(SEM + 16, 1))
  assert u64(mem, SEM + 16) == 0 and s.ch.error is None
  put64(mem, SEM, passes)
  gpu.sync()
  assert u64(mem, SEM + 16) == 1 and s.ch.error is None

def test_release_64bit_payload_with_timestamp(rig):
  gpu, mem = rig
  s = Submitter(gpu, mem, 511)
  mem.view(SEM, 64)[:] = 0xAA
  s.submit(PB().release(SEM, 0x1122334455667788).release(SEM + 32, 3))
  assert u64(mem, SEM) == 0x1122334455667788 and 0 < u64(mem, SEM + 8) < u64(mem, SEM + 40)
  assert bytes(mem.view(SEM + 16, 16)) == b"\xaa" * 16

def test_release_32bit_without_timestamp_writes_four_bytes(rig):
  gpu, mem = rig
  s = Submitter(gpu, mem, 511)
  mem.view(SEM, 16)[:] = 0xAA
  s.submit(PB().release(SEM, 0x1_0000_0007, ts=False, b64=False))
  assert bytes(mem.view(SEM, 8)) == b"\x07\0\0\0\xaa\xaa\xaa\xaa"

def test_semaphore_reduction_and_legacy_semaphore(rig):
  gpu, mem = rig
  s = Submitter(gpu, mem, 511)
  put64(mem, SEM, 40)
  red = nv.NVC56F_SEM_EXECUTE_OPERATION_REDUCTION | nv.NVC56F_SEM_EXECUTE_REDUCTION_IADD << 27 | 1 << 31
  s.submit(PB().inc(0, nv.NVC56F_SEM_ADDR_LO, SEM, 0, 2, 0, red))
  s.submit(PB().inc(0, nv.NVC56F_SEMAPHOREA, 0, SEM + 16, 9, nv.NVC56F_SEMAPHORED_OPERATION_RELEASE))
  assert u64(mem, SEM) == 42 and u64(mem, SEM + 16) == 9 and u64(mem, SEM + 24) > 0

def test_acquire_orders_channels(rig):
  """compute waits for the copy channel's signal: its release must see the copied bytes, whichever channel is rung first"""
  gpu, mem = rig
  k, c = Submitter(gpu, mem, 511, classes=[0xc7c0]), Submitter(gpu, mem, 510, classes=[0xc7b5])
  mem.view(DATA, 256)[:] = np.arange(256, dtype=np.uint8)
  k.submit(PB().acquire(SEM, 1).release(SEM + 16, 2))
  assert u64(mem, SEM + 16) == 0
  c.submit(PB().inc(4, nv.NVC6C0_SET_OBJECT, 0xc7b5).inc(4, nv.NVC6B5_OFFSET_IN_UPPER, 0, DATA, 0, DATA + 0x1000)
             .inc(4, nv.NVC6B5_LINE_LENGTH_IN, 256).inc(4, nv.NVC6B5_LAUNCH_DMA, 0x182)
             .inc(4, nv.NVC6B5_SET_SEMAPHORE_A, 0, SEM, 1).inc(4, nv.NVC6B5_LAUNCH_DMA, 0x14), doorbell=False)
  gpu.doorbell(c.token)
  assert u64(mem, SEM) == 1 and u64(mem, SEM + 16) == 2
  assert np.array_equal(mem.view(DATA + 0x1000, 256), np.arange(256, dtype=np.uint8))

def test_cache_maintenance_is_accounted(rig):
  gpu, mem = rig
  s = Submitter(gpu, mem, 511, classes=[0xc7c0])
  s.submit(PB().inc(1, nv.NVC6C0_SET_OBJECT, 0xc7c0).inc(1, nv.NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, 1 << 12 | 1 << 4 | 1)
           .inc(0, nv.NVC56F_MEM_OP_A, 0, 0, 0, nv.NVC56F_MEM_OP_D_OPERATION_L2_FLUSH_DIRTY << 27).inc(0, nv.NVC56F_WFI, 0)
           .inc(0, nv.NVC56F_NON_STALL_INTERRUPT, 0))
  gpu.flush_l2(True, True, True)
  assert s.ch.error is None
  assert {k: gpu.counters[k] for k in ["invalidate_shader_caches_no_wfi", "mem_op_l2_flush_dirty", "wfi", "non_stall_interrupt", "l2_flush",
    "l2_invalidate", "fb_flush"]} == dict.fromkeys(["invalidate_shader_caches_no_wfi", "mem_op_l2_flush_dirty", "wfi", "non_stall_interrupt",
    "l2_flush", "l2_invalidate", "fb_flush"], 1)

def test_describe_names_a_parked_acquire(rig):
  """a host wait that times out is told where each channel is: here parked on an acquire that nothing releases"""
  gpu, mem = rig
  s = Submitter(gpu, mem, 511)
  put64(mem, SEM, 4)
  s.submit(PB().acquire(SEM, 5).release(SEM + 16, 1))
  assert f"channel 511: GP_GET 1, GP_PUT 1 (seen 1), at method 4 of 10" in (d:=gpu.describe()), d
  assert f"semaphore acquire at 0x{SEM:x}: waits for circ_geq 5, holds 4" in d, d
  put64(mem, SEM, 5)
  gpu.sync()
  assert "channel 511: GP_GET 1, GP_PUT 1 (seen 1), idle" in gpu.describe()

def test_a_polling_host_wakes_at_the_release():
  """wait_released blocks a polling host until a pushbuffer segment has run, its release already in memory"""
  mem = FlatMemory()
  gpu = Ga10bGPU(lambda line: None)
  mem.map(SEM, 0x10000)
  s = Submitter(gpu, mem, 511)
  seen = gpu.wait_released(None, 0)
  assert gpu.wait_released(seen, 0.01) == seen   # nothing ran: it times out
  s.submit(PB().release(SEM, 7))
  assert gpu.wait_released(seen, 30) != seen and u64(mem, SEM) == 7
  gpu.close()
