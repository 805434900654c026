# Copy class 0xC7B5 (AMPERE_DMA_COPY_B; methods are the C6B5 set): pitch-linear copies of any size and semaphore releases.
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import ChannelError
from orin_emu.gpu import mem as M
from orin_emu.gpu.sem import bits, release, reduce
from orin_emu.gpu.host import HOST_REDUCTION

B = lambda name: getattr(nv, "NVC6B5_" + name)
STORED = {B(n) for n in ["SET_SEMAPHORE_A", "SET_SEMAPHORE_B", "SET_SEMAPHORE_PAYLOAD", "SET_SRC_PHYS_MODE", "SET_DST_PHYS_MODE", "OFFSET_IN_UPPER",
  "OFFSET_IN_LOWER", "OFFSET_OUT_UPPER", "OFFSET_OUT_LOWER", "PITCH_IN", "PITCH_OUT", "LINE_LENGTH_IN", "LINE_COUNT", "SET_REMAP_CONST_A",
  "SET_REMAP_CONST_B", "SET_REMAP_COMPONENTS"]}
L = lambda name: getattr(nv, "NVC6B5_LAUNCH_DMA_" + name)
# LAUNCH_DMA fields (clc6b5.h ranges; the autogen keeps only values): DATA_TRANSFER_TYPE 1:0, FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3,
# INTERRUPT_TYPE 6:5, SRC_MEMORY_LAYOUT 7, DST_MEMORY_LAYOUT 8, MULTI_LINE_ENABLE 9, REMAP_ENABLE 10, SRC_TYPE 12, DST_TYPE 13,
# SEMAPHORE_REDUCTION 17:14, SEMAPHORE_REDUCTION_SIGN 18, SEMAPHORE_REDUCTION_ENABLE 19.

class Copy:
  CLASS, ENGINE = nv.AMPERE_DMA_COPY_B, "ce"
  def __init__(self, ch): self.ch, self.r = ch, {}

  def method(self, addr:int, data:int):
    if addr in STORED: self.r[addr] = data
    elif addr == B("NOP"): pass
    elif addr == B("LAUNCH_DMA"): self.launch(data)
    else: raise ChannelError(f"illegal method 0x{addr:04x} data 0x{data:08x} for class 0x{self.CLASS:x}")

  def launch(self, d:int):
    r, gpu, mem = self.r, self.ch.gpu, self.ch.mem
    if bits(d, 1, 0) != L("DATA_TRANSFER_TYPE_NONE"):
      if bits(d, 7, 7) != L("SRC_MEMORY_LAYOUT_PITCH") or bits(d, 8, 8) != L("DST_MEMORY_LAYOUT_PITCH"):
        raise ChannelError(f"copy LAUNCH_DMA 0x{d:08x}: block-linear layouts are not emulated")
      if bits(d, 10, 10) or bits(d, 12, 12) or bits(d, 13, 13): raise ChannelError(f"copy LAUNCH_DMA 0x{d:08x}: remap/physical not emulated")
      src = (r.get(B("OFFSET_IN_UPPER"), 0) & 0x1ffff) << 32 | r.get(B("OFFSET_IN_LOWER"), 0)
      dst = (r.get(B("OFFSET_OUT_UPPER"), 0) & 0x1ffff) << 32 | r.get(B("OFFSET_OUT_LOWER"), 0)
      n, lines = r.get(B("LINE_LENGTH_IN"), 0), r.get(B("LINE_COUNT"), 1) if bits(d, 9, 9) else 1
      for i in range(lines): M.copy(mem, dst + i * r.get(B("PITCH_OUT"), 0), src + i * r.get(B("PITCH_IN"), 0), n, "hub")
      gpu.count("copy_bytes", n * lines)
    if (sem:=bits(d, 4, 3)) != L("SEMAPHORE_TYPE_NONE"):
      va, payload = (r.get(B("SET_SEMAPHORE_A"), 0) & 0x1ffffff) << 32 | r.get(B("SET_SEMAPHORE_B"), 0), r.get(B("SET_SEMAPHORE_PAYLOAD"), 0)
      if sem == L("SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE"): raise ChannelError("conditional-interrupt semaphore not emulated")
      if bits(d, 19, 19): reduce(mem, va, HOST_REDUCTION[bits(d, 17, 14)], payload, 4, not bits(d, 18, 18), "hub")
      else: release(mem, va, payload, 4, gpu.clock() if sem == L("SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE") else None, "hub")
      gpu.count("sem_release")
