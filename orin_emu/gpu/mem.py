# GPU-side access to a channel's GpuMemory (the memory interface, README.md): spans that cross mappings are split, faults carry the
# real access type and client.
import numpy as np
from orin_emu.faults import MMUFault

def spans(mem, va:int, n:int, access:str, client:str):
  """(buf, off, take) pieces covering [va, va+n); an unmapped piece raises MMUFault with this access and client"""
  while n > 0:
    try: base, buf = mem.lookup(va)
    except MMUFault as e: raise MMUFault(e.va, access, e.fault_type, client) from None
    take = min(n, len(buf) - (off:=va - base))
    yield buf, off, take
    va, n = va + take, n - take

def read(mem, va:int, n:int, client:str="hub") -> np.ndarray:
  parts = [buf[off:off+take] for buf, off, take in spans(mem, va, n, "virt read", client)]
  return parts[0].copy() if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, np.uint8)

def write(mem, va:int, data, client:str="hub"):
  src = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) else data.view(np.uint8).reshape(-1)
  pos = 0
  for buf, off, take in spans(mem, va, len(src), "virt write", client): buf[off:off+take], pos = src[pos:pos+take], pos + take

def read_int(mem, va:int, size:int, client:str="hub") -> int: return int.from_bytes(read(mem, va, size, client).tobytes(), "little")
def write_int(mem, va:int, size:int, value:int, client:str="hub"): write(mem, va, (value & ((1 << (8*size)) - 1)).to_bytes(size, "little"), client)

def copy(mem, dst:int, src:int, n:int, client:str="hub"):
  """pitch-linear copy of n bytes, mapping piece by mapping piece (numpy slices, so 256 MiB stays cheap); reads fault before writes"""
  while n > 0:
    sbuf, soff, stake = next(spans(mem, src, n, "virt read", client))
    dbuf, doff, dtake = next(spans(mem, dst, min(n, stake), "virt write", client))
    dbuf[doff:doff+dtake] = sbuf[soff:soff+dtake]
    src, dst, n = src + dtake, dst + dtake, n - dtake
