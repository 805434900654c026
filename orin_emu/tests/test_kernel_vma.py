# The kernel VMA [va_range_end, va_range_end + 4 GiB): what nvgpu maps there for itself at SETUP_BIND and ALLOC_OBJ_CTX, and the
# emulated machine freezing where the kernel would truncate one of those VAs past 40 bits or BUG() (docs/tegra-address-space.md).
import errno, pytest
from orin_emu.kernel import MachineFrozen
from orin_emu.kernel.grctx import GrCtx, check_header
from tegra_conformance.tegra import PAGE, WC, SEED_END, USER_END as END, errno_of, kernel_log
# END: TegraIface's va_range_end, the largest whose kernel VMA stays below 2^40; SEED_END: the seed's, whose kernel VMA crosses it

def bring_up(orin, end, ring=None):
  """Two channels on one subcontext, a compute and a copy object: TegraIface's bring-up order."""
  as_ = orin.alloc_as(end=end, windows=end > 0xFE40000000)
  tsg = orin.open_tsg()
  veid = orin.subcontext(tsg, as_)
  compute, _, _, userd = orin.channel(as_, tsg, veid, setup=ring is None)
  if ring is not None: orin.setup_bind(compute, userd, ring)
  copy, *_ = orin.channel(as_, tsg, veid)
  orin.alloc_obj(compute, 0xC7C0); orin.alloc_obj(copy, 0xC7B5)
  return as_, tsg, compute, copy

def kernel_maps(k, as_): return {n: (va, size) for n, va, size in k.files[as_.fd].vm.kernel_maps()}
def warnings(lines): return sum("tu104_gr_init_commit_rtv_cb" in t and t.startswith("WARNING: CPU:") for _, t in lines)

def test_the_seed_layout_gives_what_its_orin_showed(k, orin):
  # va_range_end 0xFFFFE00000 on the Orin: every GR context init printed the RTV WARNING, and nothing worse happened
  new = kernel_log()
  as_, *_ = bring_up(orin, SEED_END)
  assert kernel_maps(k, as_) == {
    "GPFIFO ring": (0xFFFFE02000, 0x2000), "subcontext header": (0xFFFFE04000, PAGE), "GR context image": (0xFFFFE80000, 0x60000),
    "patch buffer": (0xFFFFE05000, PAGE), "bundle circular buffer": (0xFFFFE08000, 0x3000), "attribute buffer": (0xFFFFF00000, 1 << 20),
    "pagepool": (0xFFFFE20000, 0x20000), "RTV circular buffer": (1 << 40, 0x80000), "priv access map": ((1 << 40) + 0x80000, 0x80000),
    "FECS trace buffer": (0xFFFFE40000, 0x20000)}   # the first ring, at 0xFFFFE00000, is shadowed by the second one's name
  assert warnings(new()) == 1

def test_below_2_40_nothing_warns(k, orin):
  new = kernel_log()
  as_, *_ = bring_up(orin, END)
  maps = k.files[as_.fd].vm.kernel_maps()
  assert len(maps) == 11 and all(END <= va and va + size <= 1 << 40 for _, va, size in maps) and warnings(new()) == 0

def test_an_oversized_gpfifo_buffer_freezes_the_next_alloc_obj_ctx(k, orin):
  # the seed's "3 MiB GPFIFO froze the board" (SETUP_BIND succeeded, ALLOC_OBJ_CTX never returned): the ring takes a 4 MiB block at
  # 2 MiB below 2^40 and pushes every GR buffer past it, so the pagepool commit BUG()s
  as_, tsg = orin.alloc_as(end=SEED_END, windows=True), orin.open_tsg()
  ch, _, _, userd = orin.channel(as_, tsg, orin.subcontext(tsg, as_), setup=False)
  orin.setup_bind(ch, userd, orin.buffer(0x300000, WC)[1])
  with pytest.raises(MachineFrozen, match=r"pagepool at GPU VA 0x10000220000: gp10b_gr_init_commit_global_pagepool"): orin.alloc_obj(ch, 0xC7C0)

def test_an_oversized_gpfifo_buffer_is_fine_when_the_kernel_vma_is_below_2_40(k, orin):
  as_, *_ = bring_up(orin, END, ring=orin.buffer(0x300000, WC)[1])
  assert kernel_maps(k, as_)["pagepool"][0] < 1 << 40

def test_a_48_bit_address_space_freezes_at_setup_bind(k, orin):
  # ALLOC_AS takes it, but the ring lands at 2^48 and the PBDMA's GP_BASE_HI keeps 8 bits of its upper word
  as_, tsg = orin.alloc_as(end=1 << 48), orin.open_tsg()
  with pytest.raises(MachineFrozen, match=r"GPFIFO ring of channel \d+ at GPU VA 0x1000000000000: ga10b_ramfc_setup"):
    orin.channel(as_, tsg, orin.subcontext(tsg, as_))

def test_an_attribute_buffer_past_2_40_freezes(k, orin):
  # a 512 KiB ring leaves no 1 MiB block below 2^40: pagepool and bundle still fit, the attribute buffer does not
  with pytest.raises(MachineFrozen, match=r"attribute buffer at GPU VA 0x10000000000: gm20b_gr_init_commit_global_attrib_cb"):
    bring_up(orin, SEED_END, ring=orin.buffer(0x80000, WC)[1])

@pytest.mark.parametrize("name, func", [("pagepool", "gp10b_gr_init_commit_global_pagepool"),
  ("bundle circular buffer", "ga10b_gr_init_commit_global_bundle_cb"), ("attribute buffer", "gm20b_gr_init_commit_global_attrib_cb")])
def test_each_global_buffer_commit_checks_its_own_va(k, name, func):
  class M:
    def __init__(self, va): self.va = va
  maps = {n: M(0xFF00000000) for n in ("pagepool", "bundle circular buffer", "attribute buffer", "RTV circular buffer")}
  GrCtx(k).commit_global(maps)
  maps[name] = M(1 << 44)
  with pytest.raises(MachineFrozen, match=f"{name} at GPU VA 0x100000000000: {func}"): GrCtx(k).commit_global(maps)

def test_a_header_past_2_40_freezes(k):
  class M: va = (1 << 40) + 0x4000
  check_header(0, type("ok", (), {"va": (1 << 40) - PAGE})())
  with pytest.raises(MachineFrozen, match=r"subcontext header of VEID 1 at GPU VA 0x10000004000: gv11b_ramin_set_gr_ptr"): check_header(1, M())

def test_gr_buffers_go_with_the_last_channel_of_their_subcontext(k, orin):
  as_, tsg, compute, copy = bring_up(orin, END)
  assert len(k.files[as_.fd].vm.kernel_maps()) == 11
  del compute
  assert set(kernel_maps(k, as_)) == {"GPFIFO ring", "subcontext header", "GR context image", "patch buffer", "bundle circular buffer",
    "attribute buffer", "pagepool", "RTV circular buffer", "priv access map", "FECS trace buffer"}   # the copy channel keeps VEID 1
  del copy
  assert kernel_maps(k, as_) == {} and k.counts()["gpu_mappings"] == 0

def test_a_second_tsg_maps_its_own_buffers_in_the_same_vm(k, orin):
  as_, *first = bring_up(orin, END)
  tsg = orin.open_tsg()
  ch, *_ = orin.channel(as_, tsg, orin.subcontext(tsg, as_))
  orin.alloc_obj(ch, 0xC7C0)
  assert len(k.files[as_.fd].vm.kernel_maps()) == 11 + 1 + 1 + 8   # a ring, a header, its own context and global buffer mappings

def test_any_valid_class_builds_the_gr_context(k, orin):
  # drivers/gpu/nvgpu/Makefile defines CONFIG_NVGPU_NON_FUSA, so nvgpu_gr_setup_alloc_obj_ctx builds the context for the copy class too
  as_, tsg = orin.alloc_as(end=END, windows=True), orin.open_tsg()
  ch, *_ = orin.channel(as_, tsg, orin.subcontext(tsg, as_))
  orin.alloc_obj(ch, 0xC7B5)
  assert len(k.files[as_.fd].vm.kernel_maps()) == 1 + 1 + 8   # the ring, a header, the context and global buffers

def test_a_setup_bind_failing_at_the_userd_unmaps_the_ring(k, orin):
  # os/linux/linux-channel.c nvgpu_channel_alloc_usermode_buffers maps the ring before it pins the USERD, and unmaps it when that fails
  as_, tsg = orin.alloc_as(end=END), orin.open_tsg()
  ch, _, ring, _ = orin.channel(as_, tsg, orin.subcontext(tsg, as_), setup=False)
  assert errno_of(lambda: orin.setup_bind(ch, orin.get_fd(orin.create(PAGE)), ring)) == errno.EINVAL   # an unallocated USERD
  assert kernel_maps(k, as_) == {}
