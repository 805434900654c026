# nvgpu/nvmap UAPI as ctypes, generated from tegra-uapi.json (sizes/offsets/requests computed from the real L4T r36.4 headers):
# one source for the emulator's handlers and for raw-ioctl tests.
import ctypes, json, pathlib
from types import SimpleNamespace

UAPI = json.loads((pathlib.Path(__file__).parent/"tegra-uapi.json").read_text())
_CT = {("u8",1): ctypes.c_uint8, ("u16",2): ctypes.c_uint16, ("s16",2): ctypes.c_int16, ("u32",4): ctypes.c_uint32, ("s32",4): ctypes.c_int32,
       ("u64",8): ctypes.c_uint64, ("unsigned long (LP64: 8 bytes)",8): ctypes.c_uint64, ("u32 * (pointer)",8): ctypes.c_uint64}

def _alias(off:int, ct, bit:int|None=None, bits:int=0):
  # a union member or bitfield that overlaps the primary field at its offset: a property over the same bytes
  if bit is None: return property(lambda s: ct.from_buffer(s, off).value, lambda s, v: setattr(ct.from_buffer(s, off), "value", v))
  mask = ((1 << bits) - 1) << bit
  def set_bits(s, v):
    b = ctypes.c_uint8.from_buffer(s, off)
    b.value = (b.value & ~mask) | ((v << bit) & mask)
  return property(lambda s: (ctypes.c_uint8.from_buffer(s, off).value & mask) >> bit, set_bits)

def _make(name:str, js:dict) -> type:
  fields, props, pos, seen = [], {}, 0, set()
  for f in sorted(js["fields"], key=lambda f: f["offset"]):
    fname, off = f["name"].split(".")[-1], f["offset"]
    if fname in seen: continue
    seen.add(fname)
    if "bit" in f:
      props[fname] = _alias(off, None, f["bit"], f["bits"])
      continue
    base = _CT[(f["type"], f["size"] // f.get("count", 1))]
    if off < pos: props[fname] = _alias(off, base); continue
    if off > pos: fields.append((f"_pad{pos}", ctypes.c_uint8 * (off - pos)))
    if off % ctypes.sizeof(base): fields.append((f"_{fname}", ctypes.c_uint8 * f["size"])); props[fname] = _alias(off, base)  # unaligned (packed)
    else: fields.append((fname, base * f["count"] if "count" in f else base))
    pos = off + f["size"]
  if js["sizeof"] > pos: fields.append((f"_pad{pos}", ctypes.c_uint8 * (js["sizeof"] - pos)))
  return type(name, (ctypes.Structure,), {"_pack_": 1, "_fields_": fields, **props})

structs = SimpleNamespace(**{n: _make(n, js) for n, js in UAPI["structs"].items()})
consts = SimpleNamespace(**{n: v["dec"] for n, v in UAPI["constants"].items()})
gpu_flags = {n: v["bit"] for n, v in UAPI["gpu_characteristics_flags"].items()}
limits = {n: v["dec"] for n, v in UAPI["dispatcher_limits"].items()}

_DIR = {"IO": 0, "IOW": 1, "IOR": 2, "IOWR": 3}
def IOC(d:int, magic:int, nr:int, size:int) -> int: return (d << 30) | (size << 16) | (magic << 8) | nr
def ioc_dir(req:int) -> int: return (req >> 30) & 3
def ioc_size(req:int) -> int: return (req >> 16) & 0x3FFF
def ioc_type(req:int) -> int: return (req >> 8) & 0xFF
def ioc_nr(req:int) -> int: return req & 0xFF
IOC_WRITE, IOC_READ = 1, 2

def _req(n:str, js:dict) -> int:
  # the request from the ctypes size, so a wrong generated layout shows up as a wrong request number
  size = ctypes.sizeof(getattr(structs, js["arg"])) if js["arg"] in UAPI["structs"] else js["size"]
  return IOC(_DIR[js["macro"]], int(js["magic_hex"], 16), js["nr"], size)
ioctls = SimpleNamespace(**{n: _req(n, js) for n, js in UAPI["ioctls"].items()})
ioctl_names = {v: n for n, v in vars(ioctls).items()}
