# tinygrad's generated nvgpu/nvmap bindings (runtime/autogen/nvgpu.py, from the L4T r36.4 headers) against tegra-uapi.json, the description
# the emulated kernel is built from (a C program compiled against the same headers): a wrong header and a wrong emulator cannot agree silently.
import ctypes, functools, json, keyword, pathlib, pytest
from tinygrad.runtime.autogen import nvgpu

# the repository's one copy of the reference facts, beside the emulated kernel generated from it: a clone on a Jetson has it too
UAPI = json.loads((pathlib.Path(__file__).resolve().parents[2] / "orin_emu" / "kernel" / "tegra-uapi.json").read_text())
# macros the generator skips, ((__u32)~0U) and ((__u32)1 << 0): it does not translate C casts. TegraIface uses neither
UNTRANSLATED = {"NVGPU_NO_TIMEOUT", "NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE"}

def request(p:functools.partial) -> int:
  idir, base, nr, typ = p.args
  return (idir << 30) | ((ctypes.sizeof(typ) if typ is not None else 0) << 16) | (base << 8) | nr

def field_bytes(typ:type, path:str, bits:int|None=None) -> bytes:
  """A zeroed `typ` with the field at `path` (dotted as the JSON names it: through named nested structs and unions) set to all ones."""
  buf = bytearray(ctypes.sizeof(typ))
  obj = typ.from_buffer(buf)
  *outer, last = [f"_{p}" if keyword.iskeyword(p) else p for p in path.split(".")]   # the generator renames C's `in` to `_in`
  for p in outer: obj = getattr(obj, p)  # a named nested struct or union: a view into buf
  if isinstance(v:=getattr(obj, last), ctypes.Array): v[:] = [-1] * len(v)
  elif isinstance(v, ctypes._Pointer): setattr(obj, last, ctypes.cast(ctypes.c_void_p(-1), type(v)))
  else: setattr(obj, last, -1 if bits is None else (1 << bits) - 1)   # bitfields take their unsigned value
  return bytes(buf)

@pytest.mark.parametrize("name", sorted(UAPI["structs"]))
def test_struct_layout(name):
  typ, ref = getattr(nvgpu, f"struct_{name}"), UAPI["structs"][name]
  # the records place every field at its C offset, packed: their alignment is in the offsets, ctypes.alignment is 1
  assert ctypes.sizeof(typ) == ref["sizeof"]
  for f in ref["fields"]:
    want = ((1 << f["bits"]) - 1) << f["bit"] if "bits" in f else (1 << 8 * f["size"]) - 1
    assert field_bytes(typ, f["name"], f.get("bits")) == (want << 8 * f["offset"]).to_bytes(ref["sizeof"], "little"), f"{name}.{f['name']}"

@pytest.mark.parametrize("name", sorted(UAPI["ioctls"]))
def test_ioctl_request(name): assert request(getattr(nvgpu, name)) == int(UAPI["ioctls"][name]["request"], 16)

@pytest.mark.parametrize("name", sorted(set(UAPI["constants"]) - UNTRANSLATED))
def test_constant(name):
  v, want = getattr(nvgpu, name), UAPI["constants"][name]["dec"]
  if isinstance(v, str): v = ord(v)  # ioctl magics are C character constants
  # NVMAP_ELEM_SIZE_U64 is (1 << 31): INT_MIN in C, 2**31 in Python
  assert v == want or (name == "NVMAP_ELEM_SIZE_U64" and ctypes.c_int32(v).value == want)

def test_untranslated_constants_are_absent(): assert not [n for n in UNTRANSLATED if hasattr(nvgpu, n)], "drop them from UNTRANSLATED"

def test_characteristics_flags():
  for name, f in UAPI["gpu_characteristics_flags"].items(): assert getattr(nvgpu, name) == int(f["hex"], 16), name

def test_packed_l2_fb_args():
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(l2_flush=1)) == b"\x01\0\0\0\0"
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(l2_invalidate=1, fb_flush=1)) == b"\x06\0\0\0\0"
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(reserved=0x11223344)) == b"\0\x44\x33\x22\x11"

def test_nvmap_create_handle_union():
  # CREATE puts the handle at +4, GET_FD answers the dma-buf fd in the size slot at +0, CREATE_64 answers the handle at +0
  h = nvgpu.struct_nvmap_create_handle(size=0x1000)
  h.handle = 0x80000001
  assert bytes(h) == (0x1000).to_bytes(4, "little") + (0x80000001).to_bytes(4, "little") and h.fd == 0x1000 and h.handle64 == 0x1000
