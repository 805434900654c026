# Copy class 0xC7B5: pitch-linear copies of any size (byte-exact, across mappings, multi-line), semaphore releases, faults.
import numpy as np, pytest
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.gpu import Ga10bGPU
from orin_emu.gpu.rig import FlatMemory, PB, Submitter

SEM, SRC, DST = 0x200000, 0x10_0000_0000, 0x20_0000_0000

@pytest.fixture
def rig():
  log, mem = [], FlatMemory()
  gpu = Ga10bGPU(log.append, deterministic=True)
  mem.map(SEM, 0x1000)
  return gpu, mem, log, Submitter(gpu, mem, 510, classes=[0xc7b5])

def copy_pb(dst, src, n, launch=0x182):
  """tinygrad's NVCopyQueue.copy: 2 GiB pieces of OFFSET_IN/OUT, LINE_LENGTH_IN, LAUNCH_DMA(non-pipelined, pitch, pitch)"""
  pb = PB().inc(4, nv.NVC6C0_SET_OBJECT, 0xc7b5)
  for off in range(0, n, 1 << 31):
    pb.inc(4, nv.NVC6B5_OFFSET_IN_UPPER, (src + off) >> 32, (src + off) & 0xffffffff, (dst + off) >> 32, (dst + off) & 0xffffffff)
    pb.inc(4, nv.NVC6B5_LINE_LENGTH_IN, min(n - off, 1 << 31)).inc(4, nv.NVC6B5_LAUNCH_DMA, launch)
  return pb.inc(4, nv.NVC6B5_SET_SEMAPHORE_A, 0, SEM, 0x77).inc(4, nv.NVC6B5_LAUNCH_DMA, 0x14)

def pattern(n, seed): return np.random.default_rng(seed).integers(0, 256, min(n, 1 << 16), dtype=np.uint8) if n <= 1 << 16 else \
  np.resize(np.random.default_rng(seed).integers(0, 256, (1 << 16) + 7, dtype=np.uint8), n)

@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 4095, 4097, (1 << 20) + 13, 256 << 20])
def test_copy_is_byte_exact(rig, n):
  gpu, mem, _, s = rig
  src, dst = mem.map(SRC, n + 64), mem.map(DST, n + 64)
  src[:] = pattern(n + 64, n)
  s.submit(copy_pb(DST + 5, SRC + 3, n))
  assert s.ch.error is None and gpu.counters["copy_bytes"] == n
  assert np.array_equal(dst[5:5 + n], src[3:3 + n]) and not dst[:5].any() and not dst[5 + n:].any()
  assert int(mem.view(SEM, 1, np.uint32)[0]) == 0x77

def test_copy_across_mappings(rig):
  gpu, mem, _, s = rig
  parts = [mem.map(SRC + i * 0x1000, 0x1000) for i in range(3)] + [mem.map(DST, 0x800), mem.map(DST + 0x800, 0x2800)]
  for i, p in enumerate(parts[:3]): p[:] = pattern(0x1000, i)
  s.submit(copy_pb(DST + 0x10, SRC + 0x20, 0x2f00))
  assert np.array_equal(np.concatenate(parts[3:])[0x10:0x2f10], np.concatenate(parts[:3])[0x20:0x2f20])

def test_multi_line_pitched_copy(rig):
  gpu, mem, _, s = rig
  src, dst = mem.map(SRC, 0x1000), mem.map(DST, 0x1000)
  src[:] = pattern(0x1000, 1)
  s.submit(PB().inc(4, nv.NVC6C0_SET_OBJECT, 0xc7b5).inc(4, nv.NVC6B5_OFFSET_IN_UPPER, SRC >> 32, 0, DST >> 32, 0, 100, 64, 30, 5)
           .inc(4, nv.NVC6B5_LAUNCH_DMA, 0x182 | 1 << 9))
  for i in range(5): assert np.array_equal(dst[i * 64:i * 64 + 30], src[i * 100:i * 100 + 30]) and not dst[i * 64 + 30:(i + 1) * 64].any()

def test_copy_semaphore_four_word_and_one_word(rig):
  gpu, mem, _, s = rig
  mem.view(SEM, 32)[:] = 0xAA
  s.submit(PB().inc(4, nv.NVC6C0_SET_OBJECT, 0xc7b5).inc(4, nv.NVC6B5_SET_SEMAPHORE_A, 0, SEM, 5).inc(4, nv.NVC6B5_LAUNCH_DMA, 0x14)
           .inc(4, nv.NVC6B5_SET_SEMAPHORE_A, 0, SEM + 16, 6).inc(4, nv.NVC6B5_LAUNCH_DMA, 0x0c))
  v = mem.view(SEM, 4, np.uint64)
  assert int(v[0]) == 5 and int(v[1]) > 0 and bytes(mem.view(SEM + 16, 8)) == b"\x06\0\0\0\xaa\xaa\xaa\xaa"

def test_copy_to_unmapped_va_is_mmu_fault(rig):
  gpu, mem, log, s = rig
  mem.map(SRC, 0x1000)
  s.submit(copy_pb(0x30_0000_0000, SRC, 16))
  assert "virt write" in str(s.ch.error) and int(mem.view(SEM, 1, np.uint32)[0]) == 0
  mmu = [l for l in log if "[MMU FAULT]" in l]
  assert mmu[0].endswith("mmu engine id:  15, ch id:  510, fault addr: 0x3000000000, fault addr aperture: 0, fault type: invalid pte, "
                         "access type: virt write, ")
  assert "client type: hub, client id:  ce0, " in mmu[1]

def test_block_linear_copy_is_rejected(rig):
  gpu, mem, log, s = rig
  mem.map(SRC, 0x1000), mem.map(DST, 0x1000)
  s.submit(copy_pb(DST, SRC, 16, launch=0x102))
  assert "block-linear" in str(s.ch.error) and "block-linear" in log[-1]
