# The generated ctypes UAPI against tegra-uapi.json (computed from the real headers): every struct's size and field offsets, and
# every request number rebuilt from direction, magic, nr and the ctypes size.
import ctypes, json, pathlib, pytest
from orin_emu.kernel.uapi import UAPI, structs, ioctls, IOC

def test_struct_sizes_and_offsets():
  for name, js in UAPI["structs"].items():
    st = getattr(structs, name)
    assert ctypes.sizeof(st) == js["sizeof"], name
    for f in js["fields"]:
      if "bit" in f or f.get("count"): continue
      fname = f["name"].split(".")[-1]
      s = st.from_buffer(bytearray(js["sizeof"]))
      setattr(s, fname, 1)   # the field's lowest byte lands at its offset, and nowhere else
      assert bytes(s) == bytes(f["offset"]) + b"\x01" + bytes(js["sizeof"] - f["offset"] - 1), (name, fname)

def test_array_fields_and_bitfields():
  c = structs.nvgpu_gpu_characteristics()
  assert type(c).chipname.offset == 160 and type(c).chipname.size == 8
  l2 = structs.nvgpu_gpu_l2_fb_args(l2_flush=1, fb_flush=1, reserved=0x01020304)
  assert bytes(l2) == bytes([0b101, 4, 3, 2, 1])

def test_request_numbers():
  dirs = {"IO": 0, "IOW": 1, "IOR": 2, "IOWR": 3}
  for name, js in UAPI["ioctls"].items():
    assert getattr(ioctls, name) == int(js["request"], 16), name
    assert IOC(dirs[js["macro"]], ord(js["magic"]), js["nr"], js["size"]) == int(js["request"], 16), name
  assert ioctls.NVGPU_IOCTL_CHANNEL_SETUP_BIND == 0xC0684880 and ioctls.NVMAP_IOC_CACHE != ioctls.NVMAP_IOC_CACHE_64

def test_json_is_the_reference_facts():
  # the facts directory sits beside the clone in CI, not on a Jetson; the repository's copy must not drift from it
  ref = pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference" / "tegra-uapi.json"
  if not ref.exists(): pytest.skip(f"no reference facts at {ref}")
  assert json.loads(ref.read_text()) == UAPI
