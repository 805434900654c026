# Test rig for hand-built command streams: a dict-backed GpuMemory (the memory interface, README.md), a pushbuffer assembler in the C56F method-header
# format, and a host-side submitter that writes ring entries, GP_PUT and the doorbell the way tinygrad's _submit_to_gpfifo does.
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import MMUFault
from orin_emu.gpu.channel import GP_GET, GP_PUT

class FlatMemory:
  def __init__(self): self.maps: dict[int, np.ndarray] = {}
  def map(self, va:int, size:int) -> np.ndarray:
    assert all(va + size <= b or b + len(m) <= va for b, m in self.maps.items()), f"overlapping map at 0x{va:x}"
    self.maps[va] = np.zeros(size, np.uint8)
    return self.maps[va]
  def unmap(self, va:int): del self.maps[va]
  def lookup(self, va:int) -> tuple[int, np.ndarray]:
    for base, buf in self.maps.items():
      if base <= va < base + len(buf): return base, buf
    raise MMUFault(va)
  def view(self, va:int, n:int, dtype=np.uint8) -> np.ndarray:
    base, buf = self.lookup(va)
    return buf[va - base:va - base + n * np.dtype(dtype).itemsize].view(dtype)

class PB:
  """method headers: SEC_OP 31:29, count/immediate 28:16, subchannel 15:13, method dword address 11:0"""
  def __init__(self): self.words: list[int] = []
  def _hdr(self, sec, n, subc, addr): self.words.append(sec << 29 | n << 16 | subc << 13 | addr >> 2)
  def inc(self, subc, addr, *data): self._hdr(nv.NVC56F_DMA_SEC_OP_INC_METHOD, len(data), subc, addr); self.words += data; return self
  def noninc(self, subc, addr, *data): self._hdr(nv.NVC56F_DMA_SEC_OP_NON_INC_METHOD, len(data), subc, addr); self.words += data; return self
  def oneinc(self, subc, addr, *data): self._hdr(nv.NVC56F_DMA_SEC_OP_ONE_INC, len(data), subc, addr); self.words += data; return self
  def imm(self, subc, addr, value): self._hdr(nv.NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD, value, subc, addr); return self
  def endseg(self): self.words.append(nv.NVC56F_DMA_SEC_OP_END_PB_SEGMENT << 29); return self
  # host class helpers in tinygrad's encodings
  def acquire(self, va, value, op=3):
    return self.inc(0, nv.NVC56F_SEM_ADDR_LO, va & 0xffffffff, va >> 32, value & 0xffffffff, value >> 32, op | 1 << 24)
  def release(self, va, value, wfi=True, ts=True, b64=True):
    return self.inc(0, nv.NVC56F_SEM_ADDR_LO, va & 0xffffffff, va >> 32, value & 0xffffffff, value >> 32, 1 | wfi << 20 | b64 << 24 | ts << 25)

class Submitter:
  def __init__(self, gpu, mem:FlatMemory, chid:int, classes=(), entries:int=16, pb_va:int|None=None, pb_size:int=1 << 20, on_error=None):
    self.gpu, self.mem, self.entries, self.chid, self.token = gpu, mem, entries, chid, chid
    self.ring, self.userd = np.zeros(entries * 8, np.uint8), np.zeros(0x1000, np.uint8)
    self.pb_va, self.pb_size, self.pb_off, self.put = pb_va or (0x100000000 + chid * pb_size), pb_size, 0, 0
    self.pb = mem.map(self.pb_va, pb_size)
    self.faults: list = []
    self.ch = gpu.add_channel(chid, self.token, mem, self.ring, entries, self.userd, on_error or self.faults.append)
    for c in classes: gpu.alloc_obj(chid, c)
  @property
  def gp_get(self) -> int: return int(self.userd[GP_GET:GP_GET+4].view(np.uint32)[0])
  def entry(self, va:int, nwords:int) -> int: return (va // 4) << 2 | nwords << 42 | 1 << 41
  def place(self, pb:PB) -> int:
    data = np.array(pb.words, np.uint32).view(np.uint8)
    if self.pb_off + len(data) > self.pb_size: self.pb_off = 0
    va, self.pb_off = self.pb_va + self.pb_off, self.pb_off + (len(data) + 15) // 16 * 16
    self.pb[va - self.pb_va:va - self.pb_va + len(data)] = data
    return va
  def write_entry(self, pb:PB):
    self.ring.view(np.uint64)[self.put % self.entries] = self.entry(self.place(pb), len(pb.words))
    self.userd[GP_PUT:GP_PUT+4].view(np.uint32)[0] = (self.put + 1) % self.entries
    self.put += 1
  def submit(self, pb:PB, doorbell:bool=True):
    self.write_entry(pb)
    if doorbell: self.gpu.doorbell(self.token)
    return self
