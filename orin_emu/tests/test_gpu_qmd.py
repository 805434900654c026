# QMD v03_00 launches through the compute class: the program interface's arguments, release semaphores, dependent QMDs, the QMD-reuse race knob,
# and the faults a kernel can cause (window collision, misalignment, unmapped VA, local memory, bad QMDs), each with its log lines.
import re, sys, threading, time, types
import numpy as np, pytest
from tinygrad.runtime.autogen import nv_570 as nv
from tinygrad.runtime.ops_nv import QMD as TinyQMD
from orin_emu.faults import GpuFault, SMException, MMUFault
from orin_emu.gpu import Ga10bGPU, mem as M
from orin_emu.gpu.qmd import QMD
from orin_emu.gpu.rig import FlatMemory, PB, Submitter

SEM, PROG, ARGS, BUF = 0x200000, 0x300000, 0x400000, 0xFFFFA00000
LOCAL_WIN, SHARED_WIN, WINDOW = 0xFD00000000, 0xFE00000000, 1 << 24   # window extent: an assumption (OBSERVED.md)

class Kernels:
  """test-only executor with the program interface's signature: a program image starts with an 8-byte name naming a Python kernel"""
  def __init__(self, **fns): self.fns, self.calls = {k.encode().ljust(8, b"\0"): f for k, f in fns.items()}, []
  def __call__(self, prog, *, grid, block, cbuf0, shared_bytes, mem, shared_window, local_window, program_va):
    self.calls.append(dict(name=prog[:8].rstrip(b"\0").decode(), prog_len=len(prog), grid=grid, block=block, cbuf0=cbuf0,
                           shared_bytes=shared_bytes, shared_window=shared_window, local_window=local_window, program_va=program_va))
    if (fn:=self.fns.get(prog[:8])) is None: raise GpuFault(f"unknown program at 0x{program_va:x}")
    fn(types.SimpleNamespace(mem=mem, cbuf0=cbuf0, n=np.prod(grid) * np.prod(block), windows=(shared_window, local_window)))

def ld(k, va, n):
  """a generic-address global load the way the SM resolves it: inside a window it is a shared/local access, and since these kernels
  have no shared or local memory it is out of range there: ga10b's invalid-address-space warp error 0x10; misaligned is warp error
  0xF; otherwise it goes through the MMU"""
  if va % n: raise SMException(0xF, va=va, pc=PROG + 0x80)
  if any(w <= va < w + WINDOW for w in k.windows): raise SMException(0x10, va=va, pc=PROG + 0x80)
  return M.read(k.mem, va, n, "gpc")
def arg(k, i): return int.from_bytes(k.cbuf0[0x160 + 8*i:0x168 + 8*i], "little")

def fill(k):   # out[i] = base + i
  M.write(k.mem, arg(k, 0), (arg(k, 1) + np.arange(k.n, dtype=np.uint32)).astype(np.uint32), "gpc")
def double(k):   # out[i] = 2 * in[i]
  M.write(k.mem, arg(k, 1), ld(k, arg(k, 0), 4 * k.n).view(np.uint32) * 2, "gpc")
def load16(k): ld(k, arg(k, 0), 16)

def tiny_qmd(**kw) -> TinyQMD: return TinyQMD(types.SimpleNamespace(iface=types.SimpleNamespace(compute_class=0xc7c0)), **kw)

class Rig:
  def __init__(self, deterministic=True, **kw):
    self.log, self.mem, self.k = [], FlatMemory(), Kernels(fill=fill, double=double, load16=load16)
    self.gpu = Ga10bGPU(self.log.append, executor=self.k, deterministic=deterministic, **kw)
    for va, sz in [(SEM, 0x1000), (PROG, 0x2000), (ARGS, 0x10000)]: self.mem.map(va, sz)
    for i, name in enumerate(["fill", "double", "load16"]): self.mem.view(PROG + 0x100 * i, 8)[:] = list(name.encode().ljust(8, b"\0"))
    self.s = Submitter(self.gpu, self.mem, 511, classes=[0xc7c0])
    self.notifier = self.s.ch.error_notifier = np.zeros(16, np.uint8)
    self.s.submit(PB().inc(1, nv.NVC6C0_SET_OBJECT, 0xc7c0).inc(1, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, LOCAL_WIN >> 32, 0)
                  .inc(1, nv.NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A, SHARED_WIN >> 32, 0))

  def qmd(self, slot, prog, args, grid=(1, 1, 1), block=(4, 1, 1), **kw):
    """tinygrad's QMD construction (NVProgram + NVComputeQueue.exec) for kernargs at ARGS + slot*0x1000 with the QMD after them"""
    cb = ARGS + slot * 0x1000
    self.mem.view(cb + 0x160, len(args), np.uint64)[:] = args
    q = tiny_qmd(**{"qmd_major_version": 3, "sm_global_caching_enable": 1, "program_address_upper": 0, "program_address_lower": PROG + 0x100 * prog,
                 "shared_memory_size": 0x400, "register_count_v": 16, "qmd_group_id": 0x3f, "barrier_count": 1, "cta_raster_width": grid[0],
                 "cta_raster_height": grid[1], "cta_raster_depth": grid[2], "cta_thread_dimension0": block[0], "cta_thread_dimension1": block[1],
                 "cta_thread_dimension2": block[2], "constant_buffer_size_shifted4_0": 0x160 + 8 * len(args), "constant_buffer_valid_0": 1, **kw})
    q.set_constant_buf_addr(0, cb)
    self.mem.view(cb + 0x800, 0x100)[:] = np.frombuffer(bytes(q.mv), np.uint8)
    return cb + 0x800
  def launch(self, qmd_va):
    """NVComputeQueue.exec's SEND_PCAS_A + SEND_SIGNALING_PCAS2_B(PREFETCH_SCHEDULE), then a pushbuffer signal as on Tegra (patch 0017)"""
    return self.s.submit(PB().inc(1, nv.NVC6C0_SEND_PCAS_A, qmd_va >> 8).inc(1, nv.NVC6C0_SEND_SIGNALING_PCAS2_B, 9).release(SEM, 0xdead)
                         .inc(0, nv.NVC56F_NON_STALL_INTERRUPT, 0))
  def u(self, va, n=1, dt=np.uint32): return self.mem.view(va, n, dt).copy()

@pytest.fixture
def rig(): return Rig()

def test_qmd_decodes_tinygrads_encoding():
  q = tiny_qmd(qmd_major_version=3, program_address_upper=0xfe, program_address_lower=0x12345600, cta_raster_width=70000, cta_raster_height=3,
               cta_raster_depth=2, cta_thread_dimension0=32, cta_thread_dimension1=4, cta_thread_dimension2=2, shared_memory_size=0x1400,
               register_count_v=40, constant_buffer_size_shifted4_0=0x40, constant_buffer_valid_0=1, release1_enable=1,
               release1_address_upper=0xff, release1_address_lower=0xa0000010, release1_payload_lower=7, release1_payload_upper=1,
               dependent_qmd0_pointer=0xff00000, dependent_qmd0_action=1, dependent_qmd0_enable=1)
  q.set_constant_buf_addr(0, 0xffffa01000)
  d = QMD(bytes(q.mv))
  assert (d.program_va, d.grid, d.block, d.shared_memory_size, d.register_count_v) == (0xfe12345600, (70000, 3, 2), (32, 4, 2), 0x1400, 40)
  assert d.cbuf(0) == (0xffffa01000, 0x400) and d.cbuf(1) is None and d.release(0) is None and d.dependent == (0xff0000000, 1)
  assert d.release(1)["va"] == 0xffa0000010 and d.release(1)["payload"] == 1 << 32 | 7

def test_launch_hands_contract_c_arguments(rig):
  q = rig.qmd(0, 0, [BUF, 100], grid=(2, 1, 1), block=(8, 1, 1))
  rig.mem.map(BUF, 0x1000)
  rig.launch(q)
  (c,) = rig.k.calls
  assert (c["name"], c["grid"], c["block"], c["shared_bytes"], c["program_va"]) == ("fill", (2, 1, 1), (8, 1, 1), 0x400, PROG)
  assert (c["shared_window"], c["local_window"], c["prog_len"]) == (SHARED_WIN, LOCAL_WIN, 0x2000)
  assert len(c["cbuf0"]) == (0x160 + 16) << 4 and c["cbuf0"][0x160:0x170] == np.array([BUF, 100], np.uint64).tobytes()
  assert list(rig.u(BUF, 16)) == list(range(100, 116)) and int(rig.u(SEM)[0]) == 0xdead and rig.gpu.counters["qmd_launch"] == 1

def test_release_semaphores_and_dependent_qmd(rig):
  rig.mem.map(BUF, 0x1000)
  b = rig.qmd(1, 1, [BUF, BUF + 0x100], release0_enable=1, release0_address_lower=SEM + 0x40, release0_payload_lower=5,
              release1_enable=1, release1_address_lower=SEM + 0x80, release1_payload_lower=6, release1_payload_upper=9, release1_payload64b=1,
              release1_structure_size=nv.NVC6C0_QMDV03_00_RELEASE1_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS)
  a = rig.qmd(0, 0, [BUF, 10], dependent_qmd0_pointer=b >> 8, dependent_qmd0_action=1, dependent_qmd0_prefetch=1, dependent_qmd0_enable=1)
  rig.mem.view(SEM + 0x40, 0x60)[:] = 0xAA
  rig.launch(a)
  assert [c["name"] for c in rig.k.calls] == ["fill", "double"] and rig.s.ch.error is None
  assert list(rig.u(BUF + 0x100, 4)) == [20, 22, 24, 26]
  assert int(rig.u(SEM + 0x40, 1, np.uint64)[0]) == 5 and 0 < int(rig.u(SEM + 0x48, 1, np.uint64)[0])   # four words: payload, 0, timestamp
  assert int(rig.u(SEM + 0x80, 1, np.uint64)[0]) == 9 << 32 | 6 and bytes(rig.mem.view(SEM + 0x88, 8)) == b"\xaa" * 8

def test_qmd_reuse_race_window():
  """the release payload is read back when the kernel completes: a host that patches a live QMD meanwhile changes what gets signalled"""
  rig, started = Rig(deterministic=False, qmd_race_s=0.3), threading.Event()
  rig.k.fns[b"fill\0\0\0\0"] = lambda k: (started.set(), fill(k))
  rig.mem.map(BUF, 0x1000)
  q = rig.qmd(0, 0, [BUF, 0], release0_enable=1, release0_address_lower=SEM + 0x40, release0_payload_lower=1)
  rig.launch(q)
  assert started.wait(10)
  off = nv.NVC6C0_QMDV03_00_RELEASE0_PAYLOAD_LOWER[1] // 8
  rig.mem.view(q + off, 1, np.uint32)[0] = 2        # the next submission's value, written while the GPU still owns the QMD
  assert rig.gpu.sync(10)
  assert int(rig.u(SEM + 0x40)[0]) == 2
  rig.gpu.close()

def fault_common(rig, code):
  assert rig.s.faults == [rig.s.ch.error] and int(rig.u(SEM)[0]) == 0   # the signal after the launch never comes
  assert int(np.frombuffer(rig.notifier.tobytes(), "<u8,<u4,<u2,<u2")[0][1]) == code

def test_buffer_inside_shared_window_is_sm_exception_and_elsewhere_works():
  for va, ok in [(0xFE00200000, False), (BUF, True)]:
    rig = Rig()
    rig.mem.map(va, 0x1000), rig.mem.map(va + 0x10000, 0x1000)
    rig.launch(rig.qmd(0, 1, [va, va + 0x10000]))
    if ok:
      assert rig.s.ch.error is None and int(rig.u(SEM)[0]) == 0xdead and not any("sm " in l for l in rig.log)
      continue
    fault_common(rig, 13)
    assert rig.gpu.sm_errors[0][:3] == (4, 0x10, PROG + 0x80)
    assert any(l.endswith(f"hww_global_esr 4,hww_warp_esr 16, hww_warp_esr_pc 0x{PROG + 0x80:x}") for l in rig.log)
    assert any(l.endswith("sm hww global 0x00000004 warp 0x00000010") for l in rig.log)
    assert rig.log[-4].endswith("Error reporting is not supported in this platform") and "sm machine check err" in rig.log[-3]

def test_trap_logs_no_machine_check():
  # a breakpoint-interrupt global ESR is not an error bit (no lock-down): nvgpu logs the state, not a machine check
  from orin_emu.gpu import log
  lines = log.sm_exception(SMException(0, pc=PROG, global_esr=0x10))
  assert not any("machine check" in l for l in lines) and lines[-1].endswith("sm hww global 0x00000010 warp 0x00000000")

def test_misaligned_vector_load_is_warp_error_0xf(rig):
  rig.mem.map(BUF, 0x1000)
  rig.launch(rig.qmd(0, 2, [BUF + 4]))
  fault_common(rig, 13)
  assert rig.gpu.sm_errors[0][1] == 0xF and any("hww_global_esr 4,hww_warp_esr 15," in l for l in rig.log)

def test_unmapped_global_load_is_mmu_fault(rig):
  rig.launch(rig.qmd(0, 1, [0x50_0000_0000, BUF]))
  fault_common(rig, 31)
  assert isinstance(rig.s.ch.error, MMUFault)
  mmu = [l for l in rig.log if "[MMU FAULT]" in l]
  assert mmu[0].endswith("mmu engine id:  64, ch id:  511, fault addr: 0x5000000000, fault addr aperture: 0, fault type: invalid pte, "
                         "access type: virt read, ")
  assert mmu[1].endswith("protected mode: 0, client type: gpc, client id:  t1_0, gpc id if client type is gpc: 0, ")
  assert all(re.match(r"nvgpu: 17000000\.gpu +\w+:\d+ +\[ERR\]  \S", l) for l in rig.log)

def test_unmapped_qmd_is_mmu_fault(rig):
  rig.launch(0x60_0000_0000)
  fault_common(rig, 31)
  assert "client type: hub, client id:  fe" in [l for l in rig.log if "[MMU FAULT]" in l][1]

def test_local_memory_must_stay_mapped(rig):
  """shader local memory freed while kernels still use it (OBSERVED.md; patch 0009) faults on the next launch that needs it"""
  rig.mem.map(BUF, 0x1000), rig.mem.map(0x70_0000_0000, 4 * 0x8000)
  rig.s.submit(PB().inc(1, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_A, 0x70, 0).inc(1, nv.NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, 0, 0x8000, 0xff))
  rig.launch(rig.qmd(0, 0, [BUF, 1], shader_local_memory_high_size=0x240))
  assert rig.s.ch.error is None and len(rig.k.calls) == 1
  rig.mem.unmap(0x70_0000_0000)
  rig.launch(rig.qmd(0, 0, [BUF, 1], shader_local_memory_high_size=0x240))
  assert rig.s.ch.error.va == 0x70_0000_0000 and rig.s.ch.error.access == "virt write" and len(rig.k.calls) == 1
  assert any("[MMU FAULT]" in l and "fault addr: 0x7000000000" in l for l in rig.log)

def test_default_executor_is_ptx_launch_imported_lazily(monkeypatch):
  gpu = Ga10bGPU(print, deterministic=True)
  launch = lambda *a, **kw: None
  monkeypatch.setitem(sys.modules, "orin_emu.ptx", types.SimpleNamespace(launch=launch))
  assert gpu.executor is launch

@pytest.mark.parametrize("bad", ["version", "windows", "block"])
def test_bad_launch_is_sked_exception(bad):
  rig = Rig()
  if bad == "windows": rig.s.ch.objs[0xc7c0].r.clear()
  rig.mem.map(BUF, 0x1000)
  rig.launch(rig.qmd(0, 0, [BUF, 1], **({"qmd_major_version": 2} if bad == "version" else {}), **({"block": (0, 1, 1)} if bad == "block" else {})))
  fault_common(rig, 13)
  assert any(l.endswith("sked exception: esr 0x01000000") for l in rig.log) and rig.k.calls == []

def test_unknown_program_is_channel_error(rig):
  rig.mem.view(PROG, 8)[:] = 0
  rig.mem.map(BUF, 0x1000)
  rig.launch(rig.qmd(0, 0, [BUF, 1]))
  fault_common(rig, 13)
  assert f"unknown program at 0x{PROG:x}" in rig.log[-1]

def test_async_gpu_pulls_doorbell_from_usermode_page():
  """tinygrad's submit: ring entry, GP_PUT, then the token stored to the usermode page at +0x90; the GPU thread notices the store"""
  rig = Rig(deterministic=False)
  rig.gpu.usermode = usermode = np.zeros(0x10000, np.uint8)
  copy = Submitter(rig.gpu, rig.mem, 510, classes=[0xc7b5])
  rig.mem.map(BUF, 0x1000)
  for i in range(12):                                       # fewer than the 16 ring entries: the host never laps
    rig.s.write_entry(PB().release(SEM + 0x100, i + 1))
    copy.write_entry(PB().release(SEM + 0x200, i + 1))
    usermode[0x90:0x94].view(np.uint32)[0] = rig.s.token   # two doorbells back to back: the first may be overwritten before a poll
    usermode[0x90:0x94].view(np.uint32)[0] = copy.token
  deadline = time.monotonic() + 10
  while int(rig.u(SEM + 0x200)[0]) != 12 or int(rig.u(SEM + 0x100)[0]) != 12: assert time.monotonic() < deadline, "GPU never caught up"
  assert rig.s.gp_get == (rig.s.put % 16) and copy.gp_get == copy.put % 16 and rig.gpu.errors == []
  rig.gpu.close()

def test_lapping_while_a_kernel_runs_is_flagged():
  """a slow kernel keeps the GPU from fetching; a host that submits a full ring meanwhile overwrites entries it never fetched"""
  rig, started, go = Rig(deterministic=False), threading.Event(), threading.Event()
  rig.k.fns[b"fill\0\0\0\0"] = lambda k: (started.set(), go.wait(10))
  rig.launch(rig.qmd(0, 0, [BUF, 0]))
  assert started.wait(10)
  for i in range(15): rig.s.submit(PB().release(SEM + 0x100, i + 1))
  assert rig.s.ch.deferred is None
  rig.s.submit(PB().release(SEM + 0x100, 99))
  go.set()
  assert rig.gpu.sync(10)
  assert "lapped: 16 entries outstanding in a ring of 16" in str(rig.s.ch.error) and int(rig.u(SEM + 0x100)[0]) == 0
  rig.gpu.close()

def test_describe_names_the_launch_being_executed(rig):
  """a host wait that times out is told which launch the SM room was still executing (slow interpreter, not a hang)"""
  seen = []
  rig.k.fns[b"fill\0\0\0\0"] = lambda k: (seen.append(rig.gpu.describe()), fill(k))
  rig.mem.map(BUF, 0x1000)
  rig.launch(q:=rig.qmd(0, 0, [BUF, 100], grid=(2, 1, 1), block=(8, 1, 1)))
  assert f"executing the QMD at 0x{q:x} (program 0x{PROG:x}, grid (2, 1, 1), block (8, 1, 1))" in seen[0], seen[0]
  assert "executing" not in rig.gpu.describe()
