# Differential tests: the same address-space operations through the emulated kernel room and through the nvgpu oracle, NVIDIA's own
# L4T r36.4 nvgpu code (ga10b HAL) run in user space (../shared/tools/nvgpu-oracle, its README lists where it differs from the kernel).
# Compared: errno, GPU VA placement, kernel VMA bounds, BUG vs success. Where they differ the emulator is wrong, except the oracle
# artefacts listed in ORACLE_ARTEFACTS.
import errno, importlib.util, os, pathlib, random
import pytest
from orin_emu.kernel import KernelError, MachineFrozen
from orin_emu.kernel.grctx import GrCtx, check_header, check_ring
from orin_emu.kernel.vm import KernelBuffer
from orin_emu.kernel.uapi import structs as S, ioctls as I
from tegra_conformance.tegra import PAGE, F, Orin

ORACLE = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "nvgpu-oracle"
if not (ORACLE / "bin" / "oracle").exists(): pytest.skip(f"no nvgpu oracle at {ORACLE} (the steering repo's ../shared)", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("nvgpu_oracle", ORACLE / "nvgpu_oracle.py")
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)

# Where the oracle is not the kernel (its README): nvgpu_assert() is BUG_ON in its POSIX build and WARN_ON (plus the function's error
# return) in the kernel, so an ALLOC_AS past the 49-bit aperture is a "bug" there and ENOMEM on an Orin (vm.c
# nvgpu_vm_init_attributes), and an RTV buffer past 2^40 a "bug" there and the WARNING the Orin printed (tu104_gr_init_commit_rtv_cb).
# Big pages: the oracle's POSIX probe leaves mm.disable_bigpage false; the Orin reported available_big_page_sizes 0
# (os/linux/platform_ga10b_tegra.c ga10b_tegra_probe disables them without an IOMMU domain), so an ALLOC_AS asking for them is EINVAL
# there (common/mm/as.c gk20a_vm_alloc_share) and accepted by the oracle.
ORACLE_ARTEFACTS = {"alloc_as past 2^49 - 4 GiB": ("bug", -errno.ENOMEM), "rtv commit past 2^40": ("bug", "WARNING"),
                    "big pages": (0, -errno.EINVAL)}

def run_oracle(ops:list[dict]) -> list[dict]:
  out = oracle.run([{k: hex(v) if isinstance(v, int) and k in HEX else v for k, v in o.items()} for o in ops])
  assert out["rc"] == 0 and len(out["results"]) == len(ops) + 1, out
  return out["results"][1:]
HEX = {"va_range_start", "va_range_end", "va_range_split", "offset", "size", "buffer_offset", "mapping_size", "va"}

def frozen_by(f) -> bool:
  try: f()
  except MachineFrozen: return True
  return False

class Va:
  def __init__(self, va): self.va = va
def commit(k, **vas):
  maps = {n: Va(0x100000) for n in ("pagepool", "bundle circular buffer", "attribute buffer", "RTV circular buffer")}
  for n, va in vas.items(): maps[n.replace("_", " ")] = Va(va)
  GrCtx(k).commit_global(maps)

class Emulator:
  """The oracle's operations as ioctls on the emulated Orin (kmap: the kernel's own nvgpu_gmmu_map, as SETUP_BIND and ALLOC_OBJ_CTX
  call it), answered in the oracle's terms, one at a time."""
  def __init__(self, k): self.k, self.orin, self.ases, self.bufs = k, Orin(), [], {}
  def step(self, o:dict) -> dict:
    k, orin, r = self.k, self.orin, {"op": o["op"]}
    try:
      if o["op"] == "alloc_as":
        a = S.nvgpu_alloc_as_args(big_page_size=o["big_page_size"], flags=o["flags"], va_range_start=o["va_range_start"],
                                  va_range_end=o["va_range_end"], va_range_split=o["va_range_split"])
        orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_ALLOC_AS, a)
        self.ases.append(F(fd=a.as_fd))
        vm = k.files[self.ases[-1].fd].vm
        r["vm"] = {"user": [vm.user.base, vm.user.end], "kernel": [vm.kern.base, vm.kern.end]}
      elif o["op"] == "alloc_space":
        r["offset"] = orin.alloc_space(self.ases[o["as"]], o["pages"] * o["page_size"], o["offset"], o["flags"], o["page_size"])
      elif o["op"] == "free_space":
        self.ases[o["as"]].ioctl(I.NVGPU_AS_IOCTL_FREE_SPACE, S.nvgpu_as_free_space_args(offset=o["offset"], page_size=PAGE))
      elif o["op"] == "map_buffer_ex":
        if o["buf"] not in self.bufs: self.bufs[o["buf"]] = orin.buffer(o["size"])[1]
        r["offset"] = orin.map(self.ases[o["as"]], self.bufs[o["buf"]], o["flags"], o["offset"], o.get("buffer_offset", 0),
                               o.get("mapping_size", 0), o.get("compr_kind", -1), o.get("incompr_kind", 0))
      elif o["op"] == "unmap": orin.unmap(self.ases[o["as"]], o["offset"])
      elif o["op"] == "kmap": r["offset"] = k.files[self.ases[o["as"]].fd].vm.map_kernel(KernelBuffer(o["size"]), "kmap").va
      elif o["op"] == "pagepool": r["bug"] = int(frozen_by(lambda: commit(k, pagepool=o["va"])))
      r["err"] = 0
    except (OSError, KernelError) as e: r["err"] = -e.errno
    return r

def run_emulator(k, ops:list[dict]) -> list[dict]:
  emu = Emulator(k)
  return [emu.step(o) for o in ops]

def norm_oracle(o:dict, r:dict) -> dict:
  out = {"op": o["op"], "err": r.get("err", 0)}
  if o["op"] == "pagepool": out["bug"] = r["bug"]
  elif r.get("bug"): out["err"] = "bug"
  elif out["err"] == 0:
    if o["op"] == "alloc_as": out["vm"] = {"user": [int(x, 16) for x in r["vm"]["user"]], "kernel": [int(x, 16) for x in r["vm"]["kernel"]]}
    elif "offset" in r and o["op"] in ("alloc_space", "map_buffer_ex", "kmap"): out["offset"] = int(r["offset"], 16)
  return out

def norm_emulator(o:dict, r:dict) -> dict:
  out = {"op": o["op"], "err": r["err"]}
  if o["op"] == "pagepool": out["bug"] = r["bug"]
  elif out["err"] == 0:
    if "vm" in r: out["vm"] = r["vm"]
    elif "offset" in r: out["offset"] = r["offset"]
  return out

def compare(k, ops:list[dict], artefacts:dict|None=None, got:list[dict]|None=None):
  want = [norm_oracle(o, r) for o, r in zip(ops, run_oracle(ops))]
  got = [norm_emulator(o, r) for o, r in zip(ops, got or run_emulator(k, ops))]
  for i, (w, g) in enumerate(zip(want, got)):
    if artefacts and i in artefacts:
      assert (w["err"], g["err"]) == artefacts[i], (i, ops[i], w, g)
      continue
    assert g == w, f"op {i} {ops[i]}: emulator {g}, nvgpu {w}\n" + "\n".join(f"  {j} {o} -> {x}" for j, (o, x) in enumerate(zip(ops, want)))

def alloc_as(end, start=0x200000, big_page_size=0, flags=2, split=0):
  return {"op": "alloc_as", "big_page_size": big_page_size, "flags": flags, "va_range_start": start, "va_range_end": end, "va_range_split": split}
def space(pages, offset=0, flags=1, as_=0, page_size=PAGE): return {"op": "alloc_space", "as": as_, "pages": pages, "page_size": page_size,
                                                                     "offset": offset, "flags": flags}
def mapb(buf, size, flags=0, offset=0, as_=0, **kw): return {"op": "map_buffer_ex", "as": as_, "buf": buf, "size": size, "flags": flags,
                                                             "offset": offset, **kw}
FIXED, SPARSE, MiB, GiB = 1, 2, 1 << 20, 1 << 30

# ---- fixed cases, one per rule
def test_alloc_as_bounds(k):
  ops = [alloc_as(0xFF00000000), alloc_as(0xFFFFE00000), alloc_as(1 << 48), alloc_as((1 << 49) - (4 << 30)),
         alloc_as(0xFF00000000, start=0x201000), alloc_as(0xFF00001000), alloc_as(0x200000), alloc_as(0x400000, start=0x400000),
         alloc_as(0xFF00000000, start=0), alloc_as(0), alloc_as(0xFF00000000, flags=0), alloc_as(0xFF00000000, split=0x100000000),
         alloc_as(0xFF00000000, flags=0, split=0x100000000), alloc_as(0xFF00000000, big_page_size=3 << 16)]
  compare(k, ops)

def test_big_pages_are_an_oracle_artefact(k):
  # the oracle runs with big pages available; the Orin reports available_big_page_sizes 0 and answers EINVAL
  compare(k, [alloc_as(0xFF00000000, big_page_size=64 << 10), alloc_as(0xFF00000000, big_page_size=64 << 10, flags=0)],
          artefacts={0: ORACLE_ARTEFACTS["big pages"]})   # without UNIFIED_VA both want a split VA range: EINVAL

def test_alloc_as_past_the_aperture_is_an_oracle_artefact(k):
  # ALLOC_AS with end + 4 GiB past 2^49: the kernel's nvgpu_assert warns and returns ENOMEM, the oracle's BUG()s
  compare(k, [alloc_as(1 << 49)], artefacts={0: ORACLE_ARTEFACTS["alloc_as past 2^49 - 4 GiB"]})

def test_non_fixed_maps_come_from_the_top(k):
  compare(k, [alloc_as(0xFF00000000), mapb(1, PAGE), mapb(2, PAGE), mapb(3, 64 << 10), mapb(4, 512 * MiB), mapb(5, 3 * MiB),
              mapb(1, PAGE), {"op": "unmap", "as": 0, "offset": 0xFEFFE00000}, mapb(6, PAGE)])

def test_fixed_maps_need_an_area(k):
  compare(k, [alloc_as(0xFF00000000), mapb(1, PAGE, FIXED, 0x100000000), space(256, 0x100000000),
              mapb(1, PAGE, FIXED, 0x100000000), mapb(2, PAGE, FIXED, 0x100000000), mapb(3, 2 * MiB, FIXED, 0x1000FF000),
              mapb(4, PAGE, FIXED, 0x100001001), mapb(5, PAGE, FIXED, 0x1000FF000), mapb(6, PAGE), mapb(1, PAGE, FIXED, 0x100000000)])

def test_a_buffer_mapped_again_reuses_only_its_lowest_mapping(k):
  # os/linux/vm.c nvgpu_vm_find_mapping takes the lowest-VA mapping of the dma-buf and kind, reused only if its flags match
  compare(k, [alloc_as(0xFF00000000), mapb(1, PAGE), space(16, 0x100000000), mapb(1, PAGE, FIXED, 0x100000000), mapb(1, PAGE),
              mapb(2, PAGE, 4), mapb(2, PAGE), mapb(2, PAGE, 4), mapb(3, PAGE, compr_kind=0x11), mapb(3, PAGE), mapb(3, PAGE, compr_kind=0x11)])

def test_map_argument_checks(k):
  compare(k, [alloc_as(0xFF00000000), mapb(1, 2 * PAGE, 0, 0x100000000), mapb(1, 2 * PAGE, buffer_offset=PAGE),
              mapb(1, 2 * PAGE, mapping_size=PAGE), space(16, 0x100000000), mapb(1, 2 * PAGE, FIXED, 0x100000000, mapping_size=3 * PAGE),
              mapb(1, 2 * PAGE, FIXED, 0x100000000, buffer_offset=PAGE, mapping_size=2 * PAGE),
              mapb(1, 2 * PAGE, FIXED, 0x100000000, buffer_offset=PAGE, mapping_size=PAGE), mapb(1, 2 * PAGE, 1 << 3),
              mapb(4, 2 * PAGE, FIXED, 0x100004000, buffer_offset=PAGE), mapb(4, 2 * PAGE, FIXED, 0x100004000, buffer_offset=2 * PAGE),
              mapb(1, 2 * PAGE, 3 << 10), mapb(1, 2 * PAGE, 2 << 10), mapb(1, 2 * PAGE, compr_kind=-1, incompr_kind=-1)])

def test_areas(k):
  compare(k, [alloc_as(0xFF00000000), space(1 << 18, 0xFE00000000), space(1 << 18, 0xFD00000000), space(16), space(16, flags=SPARSE),
              space(16, 0xFE00000000), space(1 << 18, 0xFEFFF00000), space(16, 0x123), space(0, 0x100000000), space(4, 0x100000000,
              page_size=64 << 10), mapb(1, GiB >> 2), {"op": "free_space", "as": 0, "offset": 0xFE00001000},
              {"op": "free_space", "as": 0, "offset": 0x300000}, mapb(2, GiB >> 2), space(1 << 18, 0xFE00000000)])

def test_free_space_drops_the_maps_inside(k):
  compare(k, [alloc_as(0xFF00000000), space(256, 0x100000000), mapb(1, PAGE, FIXED, 0x100000000), mapb(2, PAGE, FIXED, 0x100002000),
              {"op": "free_space", "as": 0, "offset": 0x100000000}, mapb(3, PAGE, FIXED, 0x100000000), space(256, 0x100000000),
              mapb(3, PAGE, FIXED, 0x100000000), mapb(4, PAGE)])

def test_free_space_drops_one_reference_of_each_map(k):
  # common/mm/vm_area.c nvgpu_vm_area_free: a mapping made twice survives its area, still at its VA
  X = 0x100000000
  compare(k, [alloc_as(0xFF00000000), space(16, X), mapb(1, PAGE, FIXED, X), mapb(1, PAGE, FIXED, X), {"op": "free_space", "as": 0, "offset": X},
              mapb(1, PAGE, FIXED, X), space(16, X), mapb(1, PAGE, FIXED, X), mapb(2, PAGE, FIXED, X + PAGE),
              {"op": "unmap", "as": 0, "offset": X}, mapb(3, PAGE, FIXED, X), {"op": "unmap", "as": 0, "offset": X},
              {"op": "unmap", "as": 0, "offset": X}, mapb(3, PAGE, FIXED, X)])

def test_kernel_vma_placement(k):
  # what SETUP_BIND and the first ALLOC_OBJ_CTX map, in their order and sizes, in the address spaces TegraIface has used
  sizes = [0x2000, 0x2000, 0x1000, 0x60000, 0x1000, 0x3000, 0x100000, 0x20000, 0x80000, 0x80000, 0x20000]
  for end in (0xFF00000000, 0xFFFFE00000, 1 << 48):
    compare(k, [alloc_as(end), mapb(1, PAGE), *({"op": "kmap", "as": 0, "size": s} for s in sizes), mapb(2, 4 * MiB)])

def test_pagepool_commit_bugs_past_40_bits(k):
  compare(k, [{"op": "pagepool", "va": va} for va in (0xFF00000000, 0xFFFFFFFF00, (1 << 40) - 0x100, 1 << 40, 0x10000220000, 1 << 48)])

# ---- the 40-bit consumers of the kernel's own VAs, each run through its ga10b HAL function (oracle ops added 2026-11-24)
def oracle_ops(op:str, vas:list[int], **kw) -> list[dict]:
  try: res = run_oracle([{"op": op, "va": va, **kw} for va in vas])
  except ValueError: res = [{"err": "unknown op"}]   # nvgpu_oracle.py itself predates the op
  if res[0].get("err") == "unknown op": pytest.skip(f"the nvgpu oracle at {ORACLE} predates its '{op}' op (README: ops after pagepool)")
  return res
VAS = [0xFF00000000, 0xFFFFFFF000, 1 << 40, 0x10000220000, (1 << 44) - PAGE, 1 << 44, 1 << 48]

def test_bundle_commit_bugs_past_40_bits(k):
  want = [r["bug"] for r in oracle_ops("bundle", VAS)]
  assert [int(frozen_by(lambda: commit(k, **{"bundle_circular_buffer": va}))) for va in VAS] == want

def test_attribute_commit_truncates_past_40_bits_and_bugs_past_44(k):
  # frozen where the base field no longer holds VA bits 39:12 (truncation) or the cast BUG()s
  want = [int(r["bug"] or int(r["base_39_12"], 16) != va >> 12) for va, r in zip(VAS, oracle_ops("attrib", VAS, tpc=8, max_tpc=8))]
  assert [int(frozen_by(lambda: commit(k, attribute_buffer=va))) for va in VAS] == want and want == [0, 0, 1, 1, 1, 1, 1]

def test_rtv_commit_warns_past_40_bits(k):
  # ORACLE_ARTEFACTS["rtv commit past 2^40"]: where the oracle BUG()s, the emulator prints the kernel's WARNING
  want = [r["bug"] for r in oracle_ops("rtv", VAS)]
  got = []
  for va in VAS:
    before = len(k.klog.lines())
    commit(k, RTV_circular_buffer=va)
    got.append(int(any("tu104_gr_init_commit_rtv_cb" in ln for ln in k.klog.lines()[before:])))
  assert got == want

def test_ring_base_keeps_40_bits(k):
  ch = type("Ch", (), {"chid": 511})()
  want = [int(int(r["value"], 16) & 0xFF != va >> 32) for va, r in zip(VAS, oracle_ops("gp_base_hi", VAS, entries=1024))]
  assert [int(frozen_by(lambda: check_ring(ch, Va(va)))) for va in VAS] == want

def test_context_pointer_keeps_40_bits(k):
  want = [int((int(r["hi"], 16) << 32 | int(r["lo"], 16) & 0xFFFFF000) != va) for va, r in zip(VAS, oracle_ops("gr_ptr", VAS))]
  assert [int(frozen_by(lambda: check_header(1, Va(va)))) for va in VAS] == want

def test_bring_up_kernel_mappings_match_nvgpu_placement(k, orin):
  # the emulator's own SETUP_BIND + ALLOC_OBJ_CTX sequence, replayed as kmaps of the same sizes in the same order through nvgpu
  as_, *_ = orin.bring_up(end=0xFF00000000)
  got = k.files[as_.fd].vm.kernel_maps()
  assert [n for n, _, _ in got] == ["GPFIFO ring", "GPFIFO ring", "subcontext header", "GR context image", "patch buffer",
    "bundle circular buffer", "attribute buffer", "pagepool", "RTV circular buffer", "priv access map", "FECS trace buffer"]
  ops = [alloc_as(0xFF00000000), space(1 << 18, 0xFE00000000), space(1 << 18, 0xFD00000000), *({"op": "kmap", "as": 0, "size": s} for _, _, s in got)]
  want = [int(r["offset"], 16) for r in run_oracle(ops)[3:]]
  assert [va for _, va, _ in got] == want and all(0xFF00000000 <= va and va + s <= 1 << 40 for _, va, s in got)

# ---- seeded random sequences: generated against the emulator (later operations use the VAs it answered), then replayed on nvgpu
def random_sequence(k, rng:random.Random, n:int) -> tuple[list[dict], list[dict]]:
  emu, ops, got, areas, maps, fixed_maps, bufs = Emulator(k), [], [], [], [], [], {}
  def do(o):
    ops.append(o); got.append(r:=emu.step(o))
    return r
  end = rng.choice([0xFF00000000, 0xFFFFE00000, 1 << 48, 0x4000000000, 0x100000000])
  do(alloc_as(end, rng.choice([0x200000, 0x400000, 0x10000000])))
  for _ in range(n):
    x = rng.random()
    if x < 0.2:
      pages, fixed = rng.choice([1, 3, 16, 256, 513, 4096, 1 << 18]), rng.random() < 0.6
      off = rng.randrange(0, end + GiB, 1 << rng.choice([12, 16, 21, 30])) if fixed else 0
      o = space(pages, off, (FIXED if fixed else 0) | rng.choice([0, SPARSE]), page_size=rng.choice([PAGE] * 9 + [64 << 10]))
      if (r:=do(o))["err"] == 0: areas.append((r["offset"], pages * PAGE))
    elif x < 0.3 and areas:
      a = rng.choice(areas)
      if rng.random() < 0.7: areas.remove(a)
      do({"op": "free_space", "as": 0, "offset": a[0] + rng.choice([0, PAGE, a[1] - PAGE, a[1]])})
    elif x < 0.4 and fixed_maps: do(rng.choice(fixed_maps))   # the same fixed map again: one more reference
    elif x < 0.7:
      buf = rng.choice(list(bufs)) if bufs and rng.random() < 0.35 else len(bufs) + 1
      size = bufs.setdefault(buf, rng.choice([1, 2, 3, 5, 16, 512, 2048]) * PAGE)
      if areas and rng.random() < 0.6:
        a, kw = rng.choice(areas), {}
        if rng.random() < 0.3: kw = {"buffer_offset": rng.choice([0, PAGE, size]), "mapping_size": rng.choice([0, PAGE, size])}
        o = mapb(buf, size, FIXED | rng.choice([0, 0, 4, 1 << 10, 2 << 10]), a[0] + rng.randrange(0, 64) * PAGE + rng.choice([0] * 9 + [0x800]), **kw)
      else: o = mapb(buf, size, rng.choice([0, 0, 4, 1 << 10]), **rng.choice([{}, {}, {"compr_kind": 0x11}, {"incompr_kind": 6}]))
      if (r:=do(o))["err"] == 0:
        maps.append(r["offset"])
        if o["flags"] & FIXED: fixed_maps.append(o)
    elif x < 0.85 and maps: do({"op": "unmap", "as": 0, "offset": rng.choice(maps) + rng.choice([0] * 5 + [PAGE])})
    else: do({"op": "kmap", "as": 0, "size": rng.choice([1, 2, 3, 96, 256, 768]) * PAGE})
  return ops, got

@pytest.mark.parametrize("seed", range(int(os.environ.get("ORACLE_SEEDS", 40))))
def test_random_sequences(k, seed):
  ops, got = random_sequence(k, random.Random(seed), 50)
  compare(k, ops, got=got)
