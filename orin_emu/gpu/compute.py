# Compute class 0xC7C0 (AMPERE_COMPUTE_B; methods are the C6C0 set): windows, shader local memory, inline-to-memory and QMD launches.
import time
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import GpuFault, ChannelError
from orin_emu.gpu import mem as M
from orin_emu.gpu.qmd import QMD, QMD_BYTES
from orin_emu.gpu.sem import bits, release, reduce

class SkedException(GpuFault):
  """a launch SKED rejects (bad QMD version, no windows, unsupported chaining): the driver logs a sked exception and recovers"""
  def __init__(self, msg:str, esr:int=0x01000000): super().__init__(msg); self.esr, self.msg = esr, msg
  def __str__(self): return f"sked exception: esr 0x{self.esr:08x} ({self.msg})"

C = lambda name: getattr(nv, "NVC6C0_" + name)
STORED = {C(n) for n in ["SET_SHADER_SHARED_MEMORY_WINDOW_A", "SET_SHADER_SHARED_MEMORY_WINDOW_B", "SET_SHADER_LOCAL_MEMORY_WINDOW_A",
  "SET_SHADER_LOCAL_MEMORY_WINDOW_B", "SET_SHADER_LOCAL_MEMORY_A", "SET_SHADER_LOCAL_MEMORY_B", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A",
  "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C", "SEND_PCAS_A", "LINE_LENGTH_IN", "LINE_COUNT",
  "OFFSET_OUT_UPPER", "OFFSET_OUT", "PITCH_OUT", "SET_I2M_SEMAPHORE_A", "SET_I2M_SEMAPHORE_B", "SET_I2M_SEMAPHORE_C"]}
INVALIDATES = {C(n): n.lower() for n in ["INVALIDATE_SHADER_CACHES", "INVALIDATE_SHADER_CACHES_NO_WFI", "INVALIDATE_SKED_CACHES",
  "INVALIDATE_TEXTURE_HEADER_CACHE_NO_WFI", "INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI", "INVALIDATE_SAMPLER_CACHE_NO_WFI",
  "INVALIDATE_TEXTURE_HEADER_CACHE", "INVALIDATE_TEXTURE_DATA_CACHE", "INVALIDATE_SAMPLER_CACHE"]}
PCAS2 = lambda n: getattr(nv, "NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_" + n)
PCAS2_SCHEDULE = {PCAS2(n) for n in ["SCHEDULE", "INVALIDATE_COPY_SCHEDULE", "PREFETCH_SCHEDULE", "INVALIDATE_PREFETCH_COPY_SCHEDULE",
                                     "INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING"]}
PCAS2_NOLAUNCH = {PCAS2(n) for n in ["NOP", "INVALIDATE", "PREFETCH"]}
DEP_SCHEDULE = {nv.NVC6C0_QMDV03_00_DEPENDENT_QMD0_ACTION_QMD_SCHEDULE, nv.NVC6C0_QMDV03_00_DEPENDENT_QMD0_ACTION_QMD_INVALIDATE_COPY_SCHEDULE}
QMD_REDUCTION = ["add", "min", "max", "inc", "dec", "and", "or", "xor"]   # RED_ADD..RED_XOR numbering of QMD releases and I2M
STRUCT_FOUR = nv.NVC6C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS
STRUCT_ONE = nv.NVC6C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD

class Compute:
  CLASS, ENGINE = nv.AMPERE_COMPUTE_B, "gr"
  def __init__(self, ch): self.ch, self.r, self.inline = ch, {}, None

  def addr64(self, hi:str, lo:str) -> int|None:
    return ((self.r.get(C(hi), 0) & 0x1ffff) << 32 | self.r[C(lo)]) if C(lo) in self.r else None
  @property
  def shared_window(self): return self.addr64("SET_SHADER_SHARED_MEMORY_WINDOW_A", "SET_SHADER_SHARED_MEMORY_WINDOW_B")
  @property
  def local_window(self): return self.addr64("SET_SHADER_LOCAL_MEMORY_WINDOW_A", "SET_SHADER_LOCAL_MEMORY_WINDOW_B")

  def method(self, addr:int, data:int):
    gpu = self.ch.gpu
    if self.inline is not None and addr != C("LOAD_INLINE_DATA"): raise ChannelError(f"method 0x{addr:04x} during an inline transfer")
    if addr in STORED: self.r[addr] = data
    elif addr in (C("NO_OPERATION"), C("WAIT_FOR_IDLE")): pass
    elif addr in INVALIDATES: gpu.count(INVALIDATES[addr])
    elif addr == C("SEND_SIGNALING_PCAS2_B"):
      if (action:=bits(data, 3, 0)) in PCAS2_SCHEDULE: self.launch(self.r.get(C("SEND_PCAS_A"), 0) << 8)
      elif action not in PCAS2_NOLAUNCH: raise SkedException(f"PCAS action {action} not supported")
    elif addr == C("SEND_SIGNALING_PCAS_B"):
      if bits(data, 1, 1): self.launch(self.r.get(C("SEND_PCAS_A"), 0) << 8)
    elif addr == C("LAUNCH_DMA"): self.inline_start(data)
    elif addr == C("LOAD_INLINE_DATA"): self.inline_data(data)
    else: raise ChannelError(f"illegal method 0x{addr:04x} data 0x{data:08x} for class 0x{self.CLASS:x}")

  # inline-to-memory: LINE_COUNT lines of LINE_LENGTH_IN bytes at OFFSET_OUT (PITCH_OUT apart), fed by LOAD_INLINE_DATA words
  def inline_start(self, launch:int):
    if bits(launch, 0, 0) != nv.NVC6C0_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: raise ChannelError("inline-to-memory block-linear layout not emulated")
    n = self.r.get(C("LINE_LENGTH_IN"), 0) * self.r.get(C("LINE_COUNT"), 1)
    self.inline = (launch, bytearray(), (n + 3) // 4 * 4)
    if n == 0: self.inline_done()
  def inline_data(self, word:int):
    if self.inline is None: raise ChannelError("LOAD_INLINE_DATA without LAUNCH_DMA")
    self.inline[1].extend(word.to_bytes(4, "little"))
    if len(self.inline[1]) >= self.inline[2]: self.inline_done()
  def inline_done(self):
    (launch, data, _), self.inline, r = self.inline, None, self.r
    dst, ll = (r.get(C("OFFSET_OUT_UPPER"), 0) & 0x1ffff) << 32 | r.get(C("OFFSET_OUT"), 0), r.get(C("LINE_LENGTH_IN"), 0)
    pitch = r.get(C("PITCH_OUT"), 0)
    for i in range(r.get(C("LINE_COUNT"), 1) if ll else 0): M.write(self.ch.mem, dst + i*pitch, data[i*ll:(i+1)*ll], "hub")
    self.ch.gpu.count("inline_to_memory")
    if bits(launch, 5, 4) == nv.NVC6C0_LAUNCH_DMA_COMPLETION_TYPE_RELEASE_SEMAPHORE:
      va, payload = (r.get(C("SET_I2M_SEMAPHORE_A"), 0) & 0xff) << 32 | r.get(C("SET_I2M_SEMAPHORE_B"), 0), r.get(C("SET_I2M_SEMAPHORE_C"), 0)
      if bits(launch, 1, 1): reduce(self.ch.mem, va, QMD_REDUCTION[bits(launch, 15, 13)], payload, 4, bits(launch, 3, 2) == 1, "hub")
      else: release(self.ch.mem, va, payload, 4, None if bits(launch, 12, 12) else self.ch.gpu.clock(), "hub")

  # QMD launch: read at launch for the grid, re-read at completion for releases and the dependent QMD (like SKED's writeback)
  def read_qmd(self, va:int) -> QMD: return QMD(self.ch.read(va, QMD_BYTES, "hub").tobytes())

  def launch(self, qmd_va:int):
    gpu = self.ch.gpu
    while True:
      q = self.read_qmd(qmd_va)
      if (q.qmd_major_version, q.qmd_version) != (3, 0): raise SkedException(f"QMD version {q.qmd_major_version}.{q.qmd_version} at 0x{qmd_va:x}")
      if self.shared_window is None or self.local_window is None: raise SkedException("launch before SET_SHADER_*_MEMORY_WINDOW")
      if not 0 < q.block[0]*q.block[1]*q.block[2] <= 1024: raise SkedException(f"block {q.block}")
      if q.dependent_qmd1_enable: raise SkedException("dependent QMD 1 not emulated")
      self.check_local_memory(q)
      base, buf = self.ch.lookup(q.program_va, "gpc")
      cb0 = q.cbuf(0)
      cbuf0 = b"" if cb0 is None else self.ch.read(cb0[0], min(cb0[1], self.ch.span(cb0[0])), "gpc").tobytes()
      gpu.count("qmd_launch")
      gpu.running = (qmd_va, q.program_va, q.grid, q.block, time.monotonic())
      try:
        if all(q.grid): gpu.executor(bytes(buf[q.program_va - base:]), grid=q.grid, block=q.block, cbuf0=cbuf0, shared_bytes=q.shared_memory_size,
                                     mem=self.ch.mem, shared_window=self.shared_window, local_window=self.local_window, program_va=q.program_va)
      finally: gpu.running = None
      if gpu.qmd_race_s: time.sleep(gpu.qmd_race_s)
      q = self.read_qmd(qmd_va)
      for i in range(3):
        if (rel:=q.release(i)) is not None: self.qmd_release(rel)
      if (dep:=q.dependent) is None: return
      if dep[1] not in DEP_SCHEDULE: raise SkedException(f"dependent QMD action {dep[1]} not emulated")
      qmd_va = dep[0]

  def qmd_release(self, rel:dict):
    size = 8 if rel["payload64"] else 4
    if rel["reduction"]: reduce(self.ch.mem, rel["va"], QMD_REDUCTION[rel["op"]], rel["payload"], size, rel["format"] & 1 == 1, "gpc")
    elif rel["structure"] == STRUCT_ONE: release(self.ch.mem, rel["va"], rel["payload"] & 0xffffffff, 4, None, "gpc")
    else: release(self.ch.mem, rel["va"], rel["payload"] & ((1 << 8*size) - 1), size,
                  self.ch.gpu.clock() if rel["structure"] == STRUCT_FOUR else None, "gpc")

  def check_local_memory(self, q:QMD):
    """a kernel with per-thread local memory needs the SET_SHADER_LOCAL_MEMORY buffer mapped for every TPC's share"""
    if not q.shader_local_memory_high_size: return
    if (base:=self.addr64("SET_SHADER_LOCAL_MEMORY_A", "SET_SHADER_LOCAL_MEMORY_B")) is None: raise SkedException("local memory size without buffer")
    per_tpc = self.addr64("SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B") or 0
    for va in (base, base + max(per_tpc * self.ch.gpu.num_tpcs, 1) - 1): self.ch.lookup(va, "gpc", "virt write")
