# ga10b channel front end: doorbell and GP_PUT/GP_GET, ring entry fields, wrap-around, lapping, pushbuffer opcodes, illegal methods.
import numpy as np, pytest
from hypothesis import given, settings, strategies as st
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import ChannelError
from orin_emu.gpu import Ga10bGPU
from orin_emu.gpu.channel import gp_entry, decode
from orin_emu.gpu.rig import FlatMemory, PB, Submitter

COMPUTE, COPY, SEM = 0xc7c0, 0xc7b5, 0x200000

@pytest.fixture
def rig():
  log, mem = [], FlatMemory()
  gpu = Ga10bGPU(log.append, deterministic=True)
  mem.map(SEM, 0x10000)
  return gpu, mem, log

def u64(mem, va): return int(mem.view(va, 1, np.uint64)[0])

def test_entry_fields_match_tinygrad_encoding():
  va = 0xFE_1234_5678 & ~3
  e = gp_entry((va // 4) << 2 | 77 << 42 | 1 << 41)
  assert (e["va"], e["length"], e["level"], e["sync"], e["fetch"]) == (va, 77, nv.NVC56F_GP_ENTRY1_LEVEL_SUBROUTINE, 0, 0)
  assert gp_entry(1 << 63 | (2**21 - 1) << 42)["sync"] == 1 and gp_entry((2**21 - 1) << 42)["length"] == 2**21 - 1

def test_gp_put_alone_does_nothing_until_doorbell(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511)
  s.submit(PB().release(SEM, 7), doorbell=False)
  gpu.sync()
  assert u64(mem, SEM) == 0 and s.gp_get == 0
  gpu.doorbell(s.token)
  assert u64(mem, SEM) == 7 and s.gp_get == 1

def test_doorbell_of_other_token_does_not_run_channel(rig):
  gpu, mem, _ = rig
  a, b = Submitter(gpu, mem, 511), Submitter(gpu, mem, 510)
  a.submit(PB().release(SEM, 1), doorbell=False)
  b.submit(PB().release(SEM + 16, 2))
  assert (u64(mem, SEM), u64(mem, SEM + 16)) == (0, 2)

def test_wraparound_over_many_ring_lengths(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511, entries=8)
  for i in range(8 * 6 + 3): s.submit(PB().release(SEM + 16 * (i % 64), i + 1))
  assert [u64(mem, SEM + 16 * i) for i in range(51)] == list(range(1, 52))
  assert s.gp_get == 51 % 8 and gpu.counters["gp_entries"] == 51

def test_batched_submissions_wrap_in_one_doorbell(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511, entries=8)
  for r in range(5):
    for i in range(7): s.submit(PB().release(SEM + 16 * i, 100 * r + i), doorbell=False)
    gpu.doorbell(s.token)
    assert [u64(mem, SEM + 16 * i) for i in range(7)] == [100 * r + i for i in range(7)] and s.ch.error is None

def test_lapping_unfetched_entries_is_flagged(rig):
  gpu, mem, log = rig
  s = Submitter(gpu, mem, 511, entries=8)
  s.submit(PB().acquire(SEM, 1))                 # the GPU parks on this acquire, so nothing after it is fetched
  for i in range(7): s.submit(PB().release(SEM + 16 * (i + 1), i + 1))
  assert s.ch.error is None
  s.submit(PB().release(SEM + 0x100, 9))         # an 8th outstanding entry in an 8-entry ring overwrites one the GPU never fetched
  assert isinstance(s.ch.error, ChannelError) and "lapped" in str(s.ch.error) and any("lapped" in line for line in log)
  mem.view(SEM, 1, np.uint64)[0] = 1
  gpu.sync()
  assert u64(mem, SEM + 0x100) == 0              # a channel in error runs nothing more

def test_rewriting_a_pending_entry_is_flagged(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511, entries=8)
  s.submit(PB().acquire(SEM, 1)).submit(PB().release(SEM + 16, 5))
  s.ring.view(np.uint64)[1] = s.entry(s.place(PB().release(SEM + 32, 6)), 8)
  mem.view(SEM, 1, np.uint64)[0] = 1
  gpu.sync()
  assert "rewritten" in str(s.ch.error) and u64(mem, SEM + 32) == 0

def test_decode_opcodes():
  pb = PB().inc(1, 0x100, 1, 2).noninc(1, 0x1b4, 3, 4).oneinc(1, 0x1b0, 5, 6, 7).imm(2, 0x110, 0x1abc).inc(0, 0x20)
  pb.words.insert(3, 0)                          # a zero word is a NOP
  assert decode(np.array(pb.endseg().words + [0xdeadbeef], np.uint32)) == [(1, 0x100, 1), (1, 0x104, 2), (1, 0x1b4, 3), (1, 0x1b4, 4),
    (1, 0x1b0, 5), (1, 0x1b4, 6), (1, 0x1b4, 7), (2, 0x110, 0x1abc)]

METHOD = st.tuples(st.sampled_from(["inc", "noninc", "oneinc", "imm"]), st.integers(0, 7), st.integers(0, 0xfff).map(lambda a: a * 4),
                   st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=20), st.integers(0, 0x1fff))

@settings(deadline=None)
@given(st.lists(METHOD, max_size=30))
def test_decode_matches_method_semantics(methods):
  pb, want = PB(), []
  for kind, subc, addr, data, imm in methods:
    if kind == "imm": pb.imm(subc, addr, imm); want.append((subc, addr, imm)); continue
    getattr(pb, kind)(subc, addr, *data)
    want += [(subc, addr + 4 * (i if kind == "inc" else min(i, 1) if kind == "oneinc" else 0), d) for i, d in enumerate(data)]
  assert decode(np.array(pb.words, np.uint32)) == want

def test_truncated_method_is_pbdma_error(rig):
  gpu, mem, log = rig
  s = Submitter(gpu, mem, 511)
  s.submit(PB().inc(0, nv.NVC56F_SEM_ADDR_LO, 1, 2)).ch.error = None
  s.ring.view(np.uint64)[s.put % 16] = s.entry(s.place(PB().inc(0, nv.NVC56F_SEM_ADDR_LO, 1, 2, 3)), 3)
  s.userd[0x8c:0x90].view(np.uint32)[0], s.put = s.put + 1, s.put + 1
  gpu.doorbell(s.token)
  assert "wants 3 words" in str(s.ch.error)
  assert s.faults == [s.ch.error]

def test_inline_to_memory_with_every_opcode(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511, classes=[COMPUTE])
  data = np.arange(10, dtype=np.uint8) + 0x40
  words = np.concatenate([data, np.zeros(2, np.uint8)]).view(np.uint32).tolist()
  pb = PB().inc(1, nv.NVC6C0_SET_OBJECT, COMPUTE).imm(1, nv.NVC6C0_LINE_COUNT, 1).inc(1, nv.NVC6C0_LINE_LENGTH_IN, 10)
  pb.inc(1, nv.NVC6C0_OFFSET_OUT_UPPER, 0, SEM + 0x103).oneinc(1, nv.NVC6C0_LAUNCH_DMA, 0x1, words[0])
  pb.noninc(1, nv.NVC6C0_LOAD_INLINE_DATA, *words[1:])
  s.submit(pb)
  assert s.ch.error is None and gpu.counters["inline_to_memory"] == 1
  assert bytes(mem.view(SEM + 0x100, 16)) == b"\0\0\0" + data.tobytes() + b"\0\0\0"

def test_inline_to_memory_release_semaphore(rig):
  gpu, mem, _ = rig
  s = Submitter(gpu, mem, 511, classes=[COMPUTE])
  pb = PB().inc(1, nv.NVC6C0_SET_OBJECT, COMPUTE).inc(1, nv.NVC6C0_SET_I2M_SEMAPHORE_A, 0, SEM + 0x40, 0x1234)
  pb.inc(1, nv.NVC6C0_LINE_LENGTH_IN, 4, 1, 0, SEM + 0x80).inc(1, nv.NVC6C0_LAUNCH_DMA, 0x1 | 2 << 4 | 1 << 12)
  pb.noninc(1, nv.NVC6C0_LOAD_INLINE_DATA, 0xcafe)
  s.submit(pb)
  assert (u64(mem, SEM + 0x80), u64(mem, SEM + 0x40), u64(mem, SEM + 0x48)) == (0xcafe, 0x1234, 0)

@pytest.mark.parametrize("subc,method,needle,code", [(1, 0x1234, "illegal method 0x1234", 13), (0, 0x0c, "illegal host method", 32),
                                                     (3, 0x200, "without SET_OBJECT", 32)])
def test_unknown_method_is_channel_error_with_notifier(rig, subc, method, needle, code):
  gpu, mem, log = rig
  s = Submitter(gpu, mem, 511, classes=[COMPUTE])
  s.ch.error_notifier = notifier = np.zeros(16, np.uint8)
  s.submit(PB().inc(1, nv.NVC6C0_SET_OBJECT, COMPUTE).inc(subc, method, 0).release(SEM, 1))
  assert needle in str(s.ch.error) and any(needle in line and line.startswith("nvgpu: 17000000.gpu") for line in log)
  ts, info32, _, status = np.frombuffer(notifier.tobytes(), dtype="<u8,<u4,<u2,<u2")[0]
  assert ts > 0 and info32 == code and status == 0xffff
  assert u64(mem, SEM) == 0 and s.faults == [s.ch.error]
  s.submit(PB().release(SEM, 2))
  assert u64(mem, SEM) == 0

def test_unknown_class(rig):
  gpu, mem, log = rig
  s = Submitter(gpu, mem, 511, classes=[COMPUTE])
  with pytest.raises(ChannelError): gpu.alloc_obj(511, 0xc797)
  s.submit(PB().inc(4, nv.NVC6C0_SET_OBJECT, COPY))
  assert "class 0xc7b5" in str(s.ch.error) and "not allocated" in log[-1]
