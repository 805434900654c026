# The hand-written nvgpu/nvmap ctypes layouts and ioctl numbers against tegra-uapi.json, which was computed by compiling the real L4T headers.
import ctypes, functools, json, pathlib, pytest
from tinygrad.runtime.autogen import nvgpu

# the repository's one copy of the reference facts, beside the emulated kernel generated from it: a clone on a Jetson has it too
UAPI = json.loads((pathlib.Path(__file__).resolve().parents[1] / "orin_emu" / "kernel" / "tegra-uapi.json").read_text())
STRUCTS = {n[len("struct_"):]: v for n, v in vars(nvgpu).items() if n.startswith("struct_") and n[len("struct_"):] in UAPI["structs"]}
IOCTLS = {n: v for n, v in vars(nvgpu).items() if isinstance(v, functools.partial) or n in UAPI["ioctls"]}
UNUSED_UNION_MEMBERS = {"ivm_id", "ivm_handle"}  # nvmap_create_handle's inter-VM members: TegraIface never shares handles across VMs

def request(p:functools.partial|int) -> int:
  if isinstance(p, int): return p
  idir, base, nr, typ = p.args
  return (idir << 30) | ((ctypes.sizeof(typ) if typ is not None else 0) << 16) | (base << 8) | nr

def test_every_json_struct_used_is_defined(): assert len(STRUCTS) >= 20

@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_struct_layout(name):
  typ, ref = STRUCTS[name], UAPI["structs"][name]
  assert ctypes.sizeof(typ) == ref["sizeof"]
  if getattr(typ, "_packed_", False): return  # bitfield struct, checked byte by byte below
  for f in ref["fields"]:
    fname = f["name"].split(".")[-1] if f["name"] not in ("in.runlist_id", "out.channel_fd") else "channel_fd"
    if fname == "nanoseconds": fname = "time_stamp"
    if fname in UNUSED_UNION_MEMBERS: continue
    desc = getattr(typ, fname)
    assert (desc.offset, desc.size) == (f["offset"], f["size"]), f"{name}.{fname}"

def test_packed_l2_fb_args():
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(l2_flush=1)) == b"\x01\0\0\0\0"
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(l2_invalidate=1, fb_flush=1)) == b"\x06\0\0\0\0"
  assert bytes(nvgpu.struct_nvgpu_gpu_l2_fb_args(reserved=0x11223344)) == b"\0\x44\x33\x22\x11"

@pytest.mark.parametrize("name", sorted(IOCTLS))
def test_ioctl_request(name):
  assert name in UAPI["ioctls"], name
  assert request(IOCTLS[name]) == int(UAPI["ioctls"][name]["request"], 16)

def test_constants():
  consts = {n: v for n, v in vars(nvgpu).items() if n.isupper() and isinstance(v, int) and n not in IOCTLS}
  assert consts and all(n in UAPI["constants"] for n in consts), [n for n in consts if n not in UAPI["constants"]]
  for n, v in consts.items(): assert v == UAPI["constants"][n]["dec"], n

def test_nvmap_create_handle_union():
  # CREATE puts the handle at +4, GET_FD answers the dma-buf fd in the size slot at +0, CREATE_64 answers the handle at +0
  h = nvgpu.struct_nvmap_create_handle(size=0x1000)
  h.handle = 0x80000001
  assert bytes(h) == (0x1000).to_bytes(4, "little") + (0x80000001).to_bytes(4, "little") and h.fd == 0x1000 and h.handle64 == 0x1000
