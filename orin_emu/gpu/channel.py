# One GPFIFO channel: the host front end (GP_PUT/GP_GET in USERD, ring entries, lapping checks), pushbuffer method decoding and the
# subchannel -> class-object dispatch. Methods run in order; an acquire that does not hold parks the channel on that method.
import threading
import numpy as np
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import MMUFault, ChannelError
from orin_emu.gpu import mem as M
from orin_emu.gpu.sem import Stall, bits
from orin_emu.gpu.host import Host
from orin_emu.gpu.compute import Compute
from orin_emu.gpu.copy import Copy

CLASSES = {cls.CLASS: cls for cls in (Compute, Copy)}
GP_GET, GP_PUT = nv.AmpereAControlGPFifo.GPGet.offset, nv.AmpereAControlGPFifo.GPPut.offset   # USERD 0x88 / 0x8C
SEC_INC, SEC_NONINC, SEC_IMMD, SEC_ONEINC, SEC_ENDSEG = nv.NVC56F_DMA_SEC_OP_INC_METHOD, nv.NVC56F_DMA_SEC_OP_NON_INC_METHOD, \
  nv.NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD, nv.NVC56F_DMA_SEC_OP_ONE_INC, nv.NVC56F_DMA_SEC_OP_END_PB_SEGMENT

def gp_entry(e:int) -> dict:
  """ring entry fields (NVIDIA open-gpu-doc clc56f.h GP_ENTRY0/1): VA 39:2, FETCH bit 0, LEVEL bit 41, LENGTH 62:42 in words, SYNC bit 63;
  a zero length makes it a control entry whose OPCODE sits in bits 39:32"""
  return {"va": e & 0xfffffffffc, "fetch": e & 1, "level": bits(e, 41, 41), "length": bits(e, 62, 42), "sync": bits(e, 63, 63),
          "opcode": bits(e, 39, 32)}

def decode(words:np.ndarray) -> list[tuple[int, int, int]]:
  """pushbuffer words -> (subchannel, method byte address, data) in execution order"""
  out, i, n = [], 0, len(words)
  while i < n:
    h = int(words[i]); i += 1
    sec, cnt, subc, addr = h >> 29, bits(h, 28, 16), bits(h, 15, 13), bits(h, 11, 0) << 2
    if h == 0: continue   # DMA_NOP
    if sec == SEC_IMMD: out.append((subc, addr, cnt)); continue
    if sec == SEC_ENDSEG: break
    if sec not in (SEC_INC, SEC_NONINC, SEC_ONEINC): raise ChannelError(f"pushbuffer opcode 0x{h:08x} not supported (sec_op {sec})")
    if i + cnt > n: raise ChannelError(f"pushbuffer method 0x{addr:x} wants {cnt} words, segment has {n - i}")
    for k in range(cnt):
      out.append((subc, addr + 4 * (k if sec == SEC_INC else min(k, 1) if sec == SEC_ONEINC else 0), int(words[i + k])))
    i += cnt
  return out

class Channel:
  def __init__(self, gpu, chid:int, token:int, mem, gpfifo:np.ndarray, entries:int, userd:np.ndarray, on_error):
    assert entries & (entries - 1) == 0 and len(gpfifo) >= entries * 8 and len(userd) >= 0x200, (entries, len(gpfifo), len(userd))
    self.gpu, self.chid, self.token, self.mem, self.entries, self.on_error = gpu, chid, token, mem, entries, on_error
    self.ring, self.userd32 = gpfifo[:entries*8].view(np.uint64), userd[:0x200].view(np.uint32)
    self.objs: dict[int, object] = {}          # class id -> engine object state (ALLOC_OBJ_CTX)
    self.subch: dict[int, object] = {}         # subchannel -> bound object (SET_OBJECT)
    self.host = Host(self)
    self.gp_get = self.put_seen = self.outstanding = 0
    self.shadow: dict[int, int] = {}           # ring slot -> entry value seen when GP_PUT covered it, until fetched
    self.bells = self.bells_served = 0
    self.methods: list[tuple[int, int, int]] = []
    self.pos = 0
    self.error = None
    self.error_notifier: np.ndarray|None = None   # 16-byte view the kernel room sets at SET_ERROR_NOTIFIER
    self.removed, self.deferred, self.lock = False, None, threading.Lock()   # deferred: a front-end error seen at doorbell time
    self.userd32[GP_GET // 4] = 0

  # memory helpers naming this channel's address space
  def lookup(self, va:int, client:str, access:str="virt read"):
    try: return self.mem.lookup(va)
    except MMUFault as e: raise MMUFault(e.va, access, e.fault_type, client) from None
  def span(self, va:int) -> int: return (lambda b: b[0] + len(b[1]) - va)(self.lookup(va, "hub"))
  def read(self, va:int, n:int, client:str) -> np.ndarray: return M.read(self.mem, va, n, client)

  def alloc_obj(self, class_id:int):
    if class_id not in CLASSES: raise ChannelError(f"invalid obj class 0x{class_id:x}")
    self.objs.setdefault(class_id, CLASSES[class_id](self))

  def doorbell(self):
    """doorbell: GP_PUT is sampled now (the host wrote it before ringing) and the channel becomes runnable"""
    with self.lock:
      try: self.observe()
      except ChannelError as e: self.deferred = self.deferred or e
      self.bells += 1

  def observe(self):
    """sample GP_PUT; every newly covered slot is remembered so that an overwrite before its fetch (lapping) is caught"""
    put = int(self.userd32[GP_PUT // 4])
    if put >= self.entries: raise ChannelError(f"GP_PUT {put} outside a ring of {self.entries} entries")
    delta = (put - self.put_seen) % self.entries
    for k in range(delta): self.shadow[(self.put_seen + k) % self.entries] = int(self.ring[(self.put_seen + k) % self.entries])
    self.outstanding += delta
    if self.outstanding > self.entries - 1:
      raise ChannelError(f"GPFIFO lapped: {self.outstanding} entries outstanding in a ring of {self.entries} (host overwrote unfetched entries)")
    self.put_seen = put

  def step(self) -> bool:
    """run until this channel stalls or has nothing left; True when anything happened"""
    progressed = False
    while self.error is None and not self.removed:
      if self.deferred is not None: raise self.deferred
      if self.pos < len(self.methods):
        subc, addr, data = self.methods[self.pos]
        try: self.method(subc, addr, data)
        except Stall: return progressed
        self.pos, progressed = self.pos + 1, True
        if self.pos == len(self.methods): self.gpu.released()
        continue
      if self.gp_get == self.put_seen:
        if self.bells == self.bells_served: return progressed
        with self.lock: self.bells_served, _ = self.bells, self.observe()
        if self.gp_get == self.put_seen: return progressed
      self.fetch()
      progressed = True
    return progressed

  def fetch(self):
    with self.lock:
      slot = self.gp_get
      e = int(self.ring[slot])
      if self.shadow.pop(slot, e) != e: raise ChannelError(f"GPFIFO lapped: entry {slot} was rewritten before the GPU fetched it")
      self.gp_get, self.outstanding = (slot + 1) % self.entries, self.outstanding - 1
    self.userd32[GP_GET // 4] = self.gp_get
    f = gp_entry(e)
    if f["length"] == 0:
      if f["opcode"] != nv.NVC56F_GP_ENTRY1_OPCODE_NOP: raise ChannelError(f"GP entry {slot} control opcode {f['opcode']} not supported")
      return
    if f["fetch"] != nv.NVC56F_GP_ENTRY0_FETCH_UNCONDITIONAL: raise ChannelError(f"GP entry {slot}: conditional fetch not supported")
    self.methods, self.pos = decode(self.read(f["va"], f["length"] * 4, "hub").view(np.uint32)), 0
    self.gpu.count("gp_entries")

  def method(self, subc:int, addr:int, data:int):
    if addr == nv.NVC56F_SET_OBJECT:
      if (obj:=self.objs.get(data & 0xffff)) is None: raise ChannelError(f"SET_OBJECT class 0x{data & 0xffff:x} on subchannel {subc} not allocated")
      self.subch[subc] = obj
    elif addr < 0x100: self.host.method(addr, data)
    elif (obj:=self.subch.get(subc)) is None: raise ChannelError(f"method 0x{addr:04x} on subchannel {subc} without SET_OBJECT")
    else: obj.method(addr, data)

  def describe(self) -> str:
    state = f"error: {self.error}" if self.error is not None else "removed" if self.removed else \
            f"at method {self.pos} of {len(self.methods)} of the last fetched entry" if self.pos < len(self.methods) else "idle"
    line = f"channel {self.chid}: GP_GET {self.gp_get}, GP_PUT {int(self.userd32[GP_PUT // 4])} (seen {self.put_seen}), {state}"
    if self.error is None and self.pos < len(self.methods):
      subc, addr, data = self.methods[self.pos]
      line += f"; next: subchannel {subc} method 0x{addr:x} data 0x{data:x}" + (self.host.describe(addr, data) if addr < 0x100 else "")
    return line

  @property
  def engine(self) -> str:
    """which unit the current method belongs to: faults are attributed to it"""
    if self.pos >= len(self.methods): return "host"
    subc, addr, _ = self.methods[self.pos]
    return "host" if addr < 0x100 or subc not in self.subch else self.subch[subc].ENGINE
