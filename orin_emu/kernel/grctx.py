# What nvgpu maps into a channel's address space for itself when the first object of a TSG is created (ALLOC_OBJ_CTX, any valid
# class), at ga10b sizes and in the kernel's order, and the consumers of those VAs that keep only 40 bits. Sizes and their sources:
# docs/tegra-address-space.md.
from __future__ import annotations
from orin_emu.kernel.vm import KernelBuffer, Mapping, Vm

BIT40 = 1 << 40
CTX_HEADER = 0x300        # ctxsw_prog_fecs_header_size_in_bytes_v (hw_ctxsw_prog_ga10b.h), nvgpu_gr_subctx_setup_header
GOLDEN_IMAGE = 0x60000    # the FECS-reported context image size: not in the sources, chosen (docs/tegra-address-space.md)
PATCH = 0x1000            # gv11b_gr_init_get_patch_slots() * PATCH_CTX_SLOTS_REQUIRED_PER_ENTRY for any Orin TPC count

class MachineFrozen(RuntimeError):
  """What the real board did instead of returning an error: raised so the software bug shows, not a hang."""

# common/gr/obj_ctx.c nvgpu_gr_obj_ctx_alloc_buffers: the TSG's GR context image and patch buffer (no PM or GFXP preemption buffers
# without debugger or GFXP flags), mapped in common/gr/ctx_mappings.c nvgpu_gr_ctx_mappings_map_ctx_buffers' index order
CTX_BUFFERS = [("GR context image", GOLDEN_IMAGE), ("patch buffer", PATCH)]

def global_buffers(ch) -> list[tuple[str, int]]:
  """common/gr/gr.c gr_alloc_global_ctx_buffers sizes (ga10b HAL), in common/gr/ctx_mappings.c
  nvgpu_gr_ctx_mappings_map_global_ctx_buffers' order: support_gfx holds on ga10b (nvgpu_gr_obj_ctx_is_gfx_engine without MIG)."""
  c = ch.k.characteristics
  tpc, max_tpc = c.num_gpc * c.num_tpc_per_gpc, c.max_gpc_count * c.num_tpc_per_gpc
  # gv11b_gr_init_get_global_attr_cb_size: beta and alpha CB per TPC (ga10b defaults 0x800, granularity 32), for max_tpc, 128-aligned
  attr = ((min(0x800, 0x3fffff // tpc) * 0x20 + min(0x800, 0xffff // tpc) * 0x20) * max_tpc + 127) & ~127
  return [("bundle circular buffer", 0x30 * 0x100),   # gm20b_gr_init_get_global_ctx_cb_buffer_size: bundle_cb__prod x 256
          ("attribute buffer", attr),
          ("pagepool", 0x200 * 0x100),                # gm20b_gr_init_get_global_ctx_pagepool_buffer_size: hwmax pages x 256
          ("RTV circular buffer", 0x800 * 0x100),     # tu104_gr_init_get_rtv_cb_size
          ("priv access map", 512 * 1024),            # NVGPU_GR_GLOBAL_CTX_PRIV_ACCESS_MAP_SIZE
          ("FECS trace buffer", 1024 * 0x80)]         # nvgpu_gr_fecs_trace_buffer_size (NVGPU_FECS_TRACE_VA on ga10b)

def frozen(what:str, va:int, func:str, why:str) -> MachineFrozen:
  return MachineFrozen(f"{what} at GPU VA {va:#x}: {func} {why}. On an Orin this hangs or oopses the board; keep the address space's "
                       f"va_range_end + 4 GiB <= 2^40 so the kernel's own mappings stay below 2^40 (docs/tegra-address-space.md)")

def check_ring(ch, m:Mapping):
  """common/fifo/channel.c nvgpu_channel_setup_usermode -> hal/fifo/ramfc_ga10b_fusa.c ga10b_ramfc_setup: the ring's VA goes to RAMFC
  through gm20b_pbdma_get_gp_base_hi, whose pbdma_gp_base_hi_offset_f keeps VA bits 39:32 (hw_pbdma_ga10b.h)."""
  if m.va >= BIT40:
    raise frozen(f"GPFIFO ring of channel {ch.chid}", m.va, "ga10b_ramfc_setup (hal/fifo/ramfc_ga10b_fusa.c)",
                 f"programs it through pbdma_gp_base_hi_offset_f, which keeps VA bits 39:32: the PBDMA would fetch the ring at {m.va % BIT40:#x}")

def check_header(veid:int, m:Mapping):
  """common/gr/obj_ctx.c nvgpu_gr_obj_ctx_commit_inst -> hal/fifo/ramin_gv11b_fusa.c gv11b_ramin_set_gr_ptr: with subcontexts the
  instance block points at the header, through ram_in_engine_wfi_ptr_hi_f, which keeps VA bits 39:32 (hw_ram_ga10b.h)."""
  if m.va >= BIT40:
    raise frozen(f"subcontext header of VEID {veid}", m.va, "gv11b_ramin_set_gr_ptr (hal/fifo/ramin_gv11b_fusa.c)",
                 f"writes it to the instance block through ram_in_engine_wfi_ptr_hi_f, which keeps VA bits 39:32: FECS would load the "
                 f"context from {m.va % BIT40:#x}")

class GrCtx:
  """A TSG's GR context as nvgpu keeps it: one subcontext header per VEID, one set of context and global buffer mappings per VM
  (common/gr/ctx_mappings.c nvgpu_gr_ctx_mappings_create_subctx_mappings), and whether the global buffers are committed yet."""
  def __init__(self, k):
    self.k, self.patched = k, False
    self.headers: dict[int, tuple[Vm, Mapping]] = {}
    self.maps: dict[Vm, dict[str, Mapping]] = {}

  def _map(self, vm:Vm, name:str, size:int) -> Mapping: return vm.map_kernel(KernelBuffer(size), name)

  def alloc(self, ch):
    """common/gr/gr_setup.c nvgpu_gr_setup_alloc_obj_ctx (any valid class with CONFIG_NVGPU_NON_FUSA): subcontext header
    (nvgpu_tsg_subctx_setup_subctx_header), then common/gr/obj_ctx.c nvgpu_gr_obj_ctx_alloc: map the context and global buffers,
    commit the global buffers (once per context: nvgpu_gr_obj_ctx_commit_global_ctx_buffers), point the channel's instance block at
    the header (nvgpu_gr_obj_ctx_commit_inst)."""
    vm = ch.vm
    if ch.veid not in self.headers: self.headers[ch.veid] = (vm, self._map(vm, "subcontext header", CTX_HEADER))
    if vm not in self.maps: self.maps[vm] = {n: self._map(vm, n, sz) for n, sz in CTX_BUFFERS + global_buffers(ch)}
    if not self.patched:
      self.commit_global(self.maps[vm])
      self.patched = True
    check_header(ch.veid, self.headers[ch.veid][1])

  def commit_global(self, maps:dict[str, Mapping]):
    """common/gr/obj_ctx.c nvgpu_gr_obj_ctx_commit_global_ctx_buffers' order: pagepool, bundle CB, attribute CB, RTV CB."""
    bug = "calls nvgpu_safe_cast_u64_to_u32(va >> {}), which BUG()s past 32 bits: the kernel oopses inside ALLOC_OBJ_CTX"
    if (va:=maps["pagepool"].va) >= BIT40:
      raise frozen("pagepool", va, "gp10b_gr_init_commit_global_pagepool (hal/gr/init/gr_init_gp10b_fusa.c)", bug.format(8))
    if (va:=maps["bundle circular buffer"].va) >= BIT40:
      raise frozen("bundle circular buffer", va, "ga10b_gr_init_commit_global_bundle_cb (hal/gr/init/gr_init_ga10b_fusa.c)", bug.format(8))
    if (va:=maps["attribute buffer"].va) >= BIT40:
      raise frozen("attribute buffer", va, "gm20b_gr_init_commit_global_attrib_cb (hal/gr/init/gr_init_gm20b_fusa.c)",
                   "writes it through gr_gpcs_setup_attrib_cb_base_addr_39_12_f, which keeps VA bits 39:12 (past 2^44 its "
                   "nvgpu_safe_cast_u64_to_u32(va >> 12) BUG()s)")
    # tu104_gr_init_commit_rtv_cb: nvgpu_assert(u64_hi32(va >> 8) == 0) is WARN_ON in the kernel; the buffer serves graphics only
    if maps["RTV circular buffer"].va >= BIT40: self.k.gr_init_warning()

  def unbind(self, ch, veid_in_use:bool):
    """common/fifo/tsg_subctx.c nvgpu_tsg_subctx_unbind_channel: the last channel of a subcontext frees its header
    (nvgpu_gr_subctx_free), and the VM's buffer mappings go with the last subcontext using them
    (common/gr/ctx_mappings.c nvgpu_gr_ctx_mappings_free_subctx_mappings, which also forgets the commit when VEID 0 goes)."""
    if veid_in_use or (hdr:=self.headers.pop(ch.veid, None)) is None: return
    vm = hdr[0]
    vm.unmap_kernel(hdr[1])
    if ch.veid == 0: self.patched = False
    if all(v is not vm for v, _ in self.headers.values()):
      for m in self.maps.pop(vm, {}).values(): vm.unmap_kernel(m)
