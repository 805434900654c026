# nvgpu's ctrl, TSG and channel files: the checks, errnos, side effects and log lines of the L4T r36.4 driver. Each handler names the
# function it mirrors, as a path under drivers/gpu/nvgpu/ of github.com/OE4T/linux-nvgpu, branch l4t/l4t-r36.4 (README.md).
from __future__ import annotations
import ctypes, errno, time
from orin_emu.faults import GpuFault, MMUFault, SMException
from orin_emu.kernel.files import IoctlFile, KernelError, int_arg
from orin_emu.kernel.grctx import GrCtx, check_ring
from orin_emu.kernel.memory import PAGE
from orin_emu.kernel.uapi import consts, limits, structs
from orin_emu.kernel.vm import AsFile, Vm

# hal/class/class_ga10b.c ga10b_class_is_valid, which falls back to the Turing, Volta, Pascal and Maxwell lists of the same folder
VALID_CLASSES = {0xC637, 0xC7C0, 0xC7B5, 0xC76F, 0xC797, 0xC46F, 0xC5C0, 0xC5B5, 0xC4B7, 0xC597, 0xC3C0, 0xC3B5, 0xC36F, 0xC397,
                 0xC0B5, 0xC06F, 0xC097, 0xC0C0, 0xA0B5, 0xA140, 0xB0B5, 0xB06F, 0xB1C0, 0xB197, 0x902D}
GFX_CLASSES = {0xC797, 0xC597, 0xC397, 0xC097, 0xB197}   # ga10b_class_is_valid_gfx and its fallbacks
SM_PER_TPC = 2                 # include/nvgpu/hw/ga10b/hw_proj_ga10b.h proj_scal_litter_num_sm_per_tpc_v
CHANNELS_PER_TSG = 128         # gv11b_runlist_get_max_channels_per_tsg: hw_ram_ga10b.h ram_rl_entry_tsg_length_max_v
NOTIFIER = {MMUFault: consts.NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, SMException: consts.NVGPU_CHANNEL_GR_EXCEPTION}

class CtrlFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "ctrl", "G", limits["NVGPU_GPU_IOCTL_LAST"], limits["NVGPU_GPU_IOCTL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_GPU_IOCTL_GET_CHARACTERISTICS": "get_characteristics", "NVGPU_GPU_IOCTL_ALLOC_AS": "alloc_as",
              "NVGPU_GPU_IOCTL_OPEN_TSG": "open_tsg", "NVGPU_GPU_IOCTL_GET_TPC_MASKS": "get_tpc_masks",
              "NVGPU_GPU_IOCTL_OPEN_CHANNEL": "open_channel", "NVGPU_GPU_IOCTL_FLUSH_L2": "flush_l2"}
  def __init__(self, k):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_dev_open: each open numbers its ctrl device (CONFIG_NVGPU_TSG_SHARING)
    super().__init__(k)
    self.usermode: tuple[int,int]|None = None
    k.ctrl_opens += 1
    self.device_instance_id = k.ctrl_opens

  def get_characteristics(self, a):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_ioctl_gpu_characteristics: up to buf_size bytes copied, the full size reported back
    self.k.characteristics.device_instance_id = self.device_instance_id
    c = bytes(self.k.characteristics)
    if a.gpu_characteristics_buf_size > 0 and (residue:=self.k.umem.copy_to_user(a.gpu_characteristics_buf_addr, c[:a.gpu_characteristics_buf_size])):
      return residue
    a.gpu_characteristics_buf_size = len(c)

  def alloc_as(self, a):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_alloc_as -> common/mm/as.c gk20a_vm_alloc_share; flags other than UNIFIED_VA and the reserved
    # field are ignored. PDE alignment: 2 MiB, from the default big-page size even with big pages off
    pde = 1 << 21
    if a.big_page_size != 0: raise KernelError(errno.EINVAL)   # not a size in available_big_page_sizes, which is 0 on ga10b
    if not a.va_range_start or not a.va_range_end or a.va_range_start % pde or a.va_range_end % pde: raise KernelError(errno.EINVAL)
    if a.va_range_start >= a.va_range_end: raise KernelError(errno.EINVAL)
    if a.va_range_split: raise KernelError(errno.EINVAL)   # unified VA or no big pages: no split
    if a.va_range_end + (4 << 30) > 1 << 49: raise KernelError(errno.ENOMEM)
    a.as_fd = self.k.install(AsFile(self.k, Vm(self.k, a.va_range_start, a.va_range_end)))

  def open_tsg(self, a):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_open_tsg (CONFIG_NVGPU_TSG_SHARING is on in Makefile.linux.configs): only the SHARE flag is
    # read; a share needs both the source ctrl device id and a token from GET_SHARE_TOKEN, which no emulated TSG hands out
    share = a.flags & consts.NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE
    if not share and (a.source_device_instance_id or a.share_token):
      raise self.k.fail("gk20a_ctrl_open_tsg", "Source device inst id/token specified")
    if share and not (a.source_device_instance_id and a.share_token):
      raise self.k.fail("gk20a_ctrl_open_tsg", "Source device inst id/token not specified")
    if share:   # nvgpu_gpu_open_tsg_with_share_token: no emulated TSG has tokens
      if not any(isinstance(f, CtrlFile) and f.device_instance_id == a.source_device_instance_id for f in self.k.files.values()):
        self.k.klog.nvgpu("nvgpu_gpu_open_tsg_with_share_token", 0, "ERR", "Invalid source device instance id")
      raise self.k.fail("nvgpu_ioctl_tsg_open", "TSG open with token failed")
    a.tsg_fd = self.k.install(TsgFile(self.k, Tsg(self.k)))

  def get_tpc_masks(self, a):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_get_tpc_masks: gpc_tpc_mask_physical, one u32 per GPC up to max_gpc_count
    masks = b"".join(m.to_bytes(4, "little") for m in self.k.tpc_masks)
    if a.mask_buf_size > 0 and (residue:=self.k.umem.copy_to_user(a.mask_buf_addr, masks[:a.mask_buf_size])): return residue
    a.mask_buf_size = len(masks)

  def open_channel(self, a):
    # os/linux/ioctl_channel.c gk20a_channel_open_ioctl -> __gk20a_channel_open: -1 is the GR runlist (0 here); another id must be a
    # runlist of this GPU instance (common/grmgr/grmgr.c nvgpu_grmgr_is_valid_runlist_id, which logs this misleading line)
    if a.channel_fd not in (-1, 0):
      raise self.k.fail("nvgpu_grmgr_is_valid_runlist_id", "gpu_instance_id[0] >= num_gpu_instances[1]")
    if not self.k.free_chids: raise self.k.fail("__gk20a_channel_open", "failed to get f", errno.ENOMEM)
    a.channel_fd = self.k.install(ChannelFile(self.k, Channel(self.k, self.k.free_chids.pop(0))))

  def flush_l2(self, a):
    # os/linux/ioctl_ctrl.c nvgpu_gpu_ioctl_l2_fb_ops
    if not (a.l2_flush or a.fb_flush) or (a.l2_invalidate and not a.l2_flush): raise KernelError(errno.EINVAL)
    self.k.stats["l2_flush"] += a.l2_flush; self.k.stats["l2_invalidate"] += a.l2_invalidate; self.k.stats["fb_flush"] += a.fb_flush
    if self.k.gpu is not None: self.k.gpu.flush_l2(bool(a.l2_flush), bool(a.l2_invalidate), bool(a.fb_flush))

  def mmap(self, addr, size, prot, flags, off):
    # os/linux/ioctl_ctrl.c gk20a_ctrl_dev_mmap: the usermode register page (doorbell at +0x90), once per ctrl fd while that mapping lives
    if self.usermode is not None and self.k.still_mapped(self.k.usermode, *self.usermode): raise KernelError(errno.EBUSY)
    if size > 0x10000 or off != 0: raise KernelError(errno.EINVAL)
    self.usermode = (self.k.usermode.map_into(addr, size, prot, flags, 0), size)
    return self.usermode[0]

class Tsg:
  """common/fifo/tsg.c nvgpu_tsg: its channels, the VM of each subcontext (a plain pointer: a subcontext holds no VM reference),
  the SYNC VEID 0 and ASYNC VEIDs reserved, and the SM error states."""
  def __init__(self, k):
    self.k, self.refs, self.channels, self.gr = k, 1, [], GrCtx(k)
    self.tsgid, k.next_tsgid = k.next_tsgid, k.next_tsgid + 1
    self.sync_veid, self.async_veids, self.subctx_vms = False, set(), {}
    self.sm_errors: dict[int, tuple[int,int,int]] = {}
    k.tsgs.add(self)
  def put(self):
    self.refs -= 1
    if self.refs == 0: self.k.tsgs.discard(self)

class TsgFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "tsg", "T", limits["NVGPU_TSG_IOCTL_LAST"], limits["NVGPU_TSG_IOCTL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_TSG_IOCTL_BIND_CHANNEL": "bind_channel", "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX": "bind_channel_ex",
              "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT": "create_subcontext", "NVGPU_TSG_IOCTL_DELETE_SUBCONTEXT": "delete_subcontext",
              "NVGPU_TSG_IOCTL_READ_SINGLE_SM_ERROR_STATE": "read_sm_error", "NVGPU_IOCTL_TSG_ENABLE": "nop", "NVGPU_IOCTL_TSG_DISABLE": "nop"}
  ENOTTY = ("NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES",)
  def __init__(self, k, tsg:Tsg): super().__init__(k); self.tsg = tsg
  def release(self): self.tsg.put()
  def nop(self, a): pass   # os/linux/ioctl_tsg.c: g->ops.tsg.enable / disable, nothing user space can observe here

  def unknown(self, req:int) -> int:
    self.k.klog.nvgpu("nvgpu_ioctl_tsg_dev_ioctl", 0, "ERR", f"unrecognized tsg gpu ioctl cmd: 0x{req:x}")
    raise KernelError(errno.ENOTTY)

  def _reserve_sync(self) -> int:
    # common/fifo/tsg.c nvgpu_tsg_create_sync_subcontext
    if self.tsg.sync_veid: raise self.k.fail("nvgpu_tsg_create_sync_subcontext", "SYNC VEID not available", errno.ENOSPC)
    self.tsg.sync_veid = True
    return 0

  def _bind(self, ch:Channel, caller:str):
    # common/fifo/tsg.c nvgpu_tsg_create_sync_subcontext_internal: a channel on VEID 0 creates the SYNC subcontext with its own VM
    # (none, if it has no AS yet) when that has no VM; no other VEID is created implicitly
    t = self.tsg
    if ch.veid == 0 and t.subctx_vms.get(0) is None:
      try: self._reserve_sync()
      except KernelError as e: self.k.klog.nvgpu(caller, 0, "ERR", f"sync subctx created failed {-e.errno}"); raise
      t.subctx_vms[0] = ch.vm
    # nvgpu_tsg_validate_ch_subctx_vm
    if ch.vm is not t.subctx_vms.get(ch.veid):
      self.k.klog.nvgpu("nvgpu_tsg_validate_ch_subctx_vm", 0, "ERR", "channel VM does not match with subcontext VM")
      raise self.k.fail(caller, "channel/subctx VM mismatch")
    # nvgpu_tsg_bind_channel
    if ch.tsg is not None: raise KernelError(errno.EINVAL)
    if len(t.channels) >= CHANNELS_PER_TSG:
      raise self.k.fail("nvgpu_tsg_bind_channel", f"TSG {t.tsgid} trying to bind more than supported channels ({CHANNELS_PER_TSG})", level="WRN")
    ch.tsg = t
    t.refs += 1; t.channels.append(ch)

  def bind_channel(self, buf):
    # os/linux/ioctl_tsg.c nvgpu_tsg_bind_channel_fd: the channel's current subcontext id (0, or what a BIND_CHANNEL_EX left)
    if (fd:=int_arg(buf)) < 0: raise KernelError(errno.EINVAL)
    self._bind(self.k.channel(fd), "nvgpu_tsg_bind_channel_fd")

  def bind_channel_ex(self, a):
    # os/linux/ioctl_tsg.c gk20a_tsg_ioctl_bind_channel_ex: the id is the channel's from here on, even if the bind then fails
    ch = self.k.channel(a.channel_fd)
    if a.subcontext_id >= self.k.characteristics.max_veid_count_per_tsg: raise KernelError(errno.EINVAL)
    ch.veid = a.subcontext_id
    ch.runq |= ch.veid > 0
    self._bind(ch, "gk20a_tsg_ioctl_bind_channel_ex")

  def create_subcontext(self, a):
    # os/linux/ioctl_tsg.c nvgpu_tsg_ioctl_create_subcontext -> common/fifo/tsg.c nvgpu_tsg_create_subcontext: ASYNC takes the
    # lowest free VEID from 1 and falls back to the SYNC VEID 0 when all are taken
    fn = "nvgpu_tsg_ioctl_create_subcontext"
    if a.type not in (consts.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC, consts.NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC):
      raise self.k.fail(fn, f"Invalid subcontext type {a.type}")
    f = self.k.files.get(a.as_fd)
    if not isinstance(f, AsFile) or not self.k.owns(a.as_fd): raise self.k.fail(fn, f"Invalid VM (fd = {a.as_fd}) specified for subcontext")
    t, free = self.tsg, [v for v in range(1, self.k.characteristics.max_veid_count_per_tsg) if v not in self.tsg.async_veids]
    try:
      if a.type == consts.NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC and free: t.async_veids.add(veid:=free[0])
      else:
        try: veid = self._reserve_sync()
        except KernelError:
          what = "Sync VEID" if a.type == consts.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC else "Async/Sync VEID"
          self.k.klog.nvgpu("nvgpu_tsg_create_subcontext", 0, "ERR", f"{what} not available"); raise
    except KernelError as e: raise self.k.fail(fn, f"Create subcontext failed {-e.errno}", e.errno) from None
    if t.subctx_vms.get(veid) is None: t.subctx_vms[veid] = f.vm
    a.veid = veid

  def delete_subcontext(self, a):
    # os/linux/ioctl_tsg.c nvgpu_tsg_ioctl_delete_subcontext -> common/fifo/tsg.c nvgpu_tsg_user_delete_subcontext,
    # nvgpu_tsg_delete_subcontext: a VEID that is not reserved is not an error
    t, fn = self.tsg, "nvgpu_tsg_ioctl_delete_subcontext"
    if a.veid >= self.k.characteristics.max_veid_count_per_tsg:
      self.k.klog.nvgpu("nvgpu_tsg_user_delete_subcontext", 0, "ERR", f"Invalid VEID specified {a.veid}")
      raise self.k.fail(fn, f"Delete subcontext failed {-errno.EINVAL}")
    if any(ch.veid == a.veid for ch in t.channels):
      self.k.klog.nvgpu("nvgpu_tsg_user_delete_subcontext", 0, "ERR", "Channels should be unbound before freeing the subcontext")
      raise self.k.fail(fn, f"Delete subcontext failed {-errno.EINVAL}")
    if a.veid == 0 and t.sync_veid: t.sync_veid = False
    elif a.veid in t.async_veids: t.async_veids.discard(a.veid)
    else: return
    t.subctx_vms.pop(a.veid, None)

  def read_sm_error(self, a):
    # os/linux/ioctl_tsg.c gk20a_tsg_ioctl_read_single_sm_error_state, common/fifo/tsg.c nvgpu_tsg_get_sm_error_state: sm_id is
    # bounded by the SMs the GPU really has (g->ops.gr.init.get_no_of_sm), and at most sizeof(record) bytes are copied and reported
    if a.sm_id >= self.k.sm_count: raise self.k.fail("nvgpu_tsg_get_sm_error_state", "Invalid number of SMs")
    g, w, pc = self.tsg.sm_errors.get(a.sm_id, (0, 0, 0))
    rec = bytes(structs.nvgpu_tsg_sm_error_state_record(global_esr=g, warp_esr=w, warp_esr_pc=pc))
    if a.record_size > 0:
      if residue:=self.k.umem.copy_to_user(a.record_mem, rec[:min(a.record_size, len(rec))]):
        self.k.klog.nvgpu("gk20a_tsg_ioctl_read_single_sm_error_state", 0, "ERR", "copy_to_user failed!")
        return residue
      a.record_size = min(a.record_size, len(rec))

class Channel:
  def __init__(self, k, chid:int):
    self.k, self.chid = k, chid
    self.token = (0 & 0x7F) << 16 | (chid & 0xFFF)   # hal/fifo/usermode_tu104.c tu104_usermode_doorbell_token: runlist 0 (GR), chid
    self.vm: Vm|None = None
    self.tsg: Tsg|None = None
    self.veid, self.runq, self.wdt, self.wdt_timeout_ms, self.timeout_ms, self.deterministic, self.bound = 0, False, True, 0, 0, False, False
    self.gpfifo = self.userd = self.notifier = self.ring_map = self.gpu_ch = None
    self.entries, self.error, self.classes = 0, None, []
    k.channels[chid] = self

  def gpu_fault(self, fault:GpuFault):
    """The GPU-room interface's on_error. A GPU channel that took the notifier view (orin_emu.gpu's error_notifier) has written it already,
    with the code of the engine that faulted."""
    self.fault(fault, notify=not hasattr(self.gpu_ch, "error_notifier"))

  def fault(self, fault:GpuFault, notify:bool=True):
    """A GPU-side error on this channel: error state, SM error record, error notifier. Takes no kernel lock: the GPU thread calls
    it while a host thread may hold the lock waiting in remove_channel."""
    self.error = fault
    if isinstance(fault, SMException) and (tsg:=self.tsg) is not None: tsg.sm_errors[0] = (fault.global_esr, fault.warp_esr, fault.pc)
    if (note:=self.notifier) is not None and notify:
      code = getattr(fault, "notifier_code", NOTIFIER.get(type(fault), consts.NVGPU_CHANNEL_PBDMA_ERROR))
      ns = time.time_ns()
      n = structs.nvgpu_notification(info32=code, status=0xFFFF)
      n.nanoseconds[0], n.nanoseconds[1] = ns & 0xFFFFFFFF, ns >> 32
      note[0].view(note[1], 16)[:] = memoryview(bytes(n)).cast("B")

  def share_notifier(self):
    if self.notifier is not None and hasattr(self.gpu_ch, "error_notifier"): self.gpu_ch.error_notifier = self.notifier[0].view(self.notifier[1], 16)

  def drop_notifier(self):
    if self.notifier is not None: self.notifier[0].put()
    self.notifier = None
    if hasattr(self.gpu_ch, "error_notifier"): self.gpu_ch.error_notifier = None

  def close(self):
    if self.k.gpu is not None and self.bound: self.k.gpu.remove_channel(self.chid)
    if self.tsg is not None:   # common/fifo/tsg.c nvgpu_tsg_unbind_channel
      self.tsg.channels.remove(self)
      self.tsg.gr.unbind(self, any(c.veid == self.veid for c in self.tsg.channels))
      self.tsg.put()
    if self.ring_map is not None: self.vm.unmap_kernel(self.ring_map)
    self.drop_notifier()
    for b in (self.gpfifo, self.userd):
      if b is not None: b.put()
    if self.vm is not None: self.vm.put()
    del self.k.channels[self.chid]
    self.k.free_chids.append(self.chid)   # freed channels go to the tail of the free list

class ChannelFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "channel", "H", limits["NVGPU_IOCTL_CHANNEL_LAST"], limits["NVGPU_IOCTL_CHANNEL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_IOCTL_CHANNEL_SETUP_BIND": "setup_bind", "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX": "alloc_obj_ctx", "NVGPU_IOCTL_CHANNEL_WDT": "wdt",
              "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER": "set_error_notifier", "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT": "set_timeout",
              "NVGPU_IOCTL_CHANNEL_SET_TIMEOUT_EX": "set_timeout", "NVGPU_IOCTL_CHANNEL_GET_TIMEDOUT": "get_timedout"}
  def __init__(self, k, ch:Channel): super().__init__(k); self.ch = ch
  def release(self): self.ch.close()

  def setup_bind(self, a):
    # os/linux/ioctl_channel.c gk20a_channel_ioctl (entry count checks, no log), then common/fifo/channel.c nvgpu_channel_setup_bind:
    # channel_setup_bind_prechecks, the usermode buffers (os/linux/linux-channel.c nvgpu_channel_alloc_usermode_buffers: the ring's
    # dma-buf is looked up, checked and mapped before the USERD's); every failure there ends with the line "fail"
    ch, f, n = self.ch, a.flags, a.num_gpfifo_entries
    usermode = f & consts.NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT
    if n & (n - 1) or n < (2 if usermode else 4) or n > self.k.characteristics.max_gpfifo_entries: raise KernelError(errno.EINVAL)
    det = f & consts.NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC
    def fail(msg:str|None, err:int=errno.EINVAL) -> KernelError:
      if msg is not None: self.k.klog.nvgpu("channel_setup_bind_prechecks", 0, "ERR", msg)
      return self.k.fail("nvgpu_channel_setup_bind", "fail", err)
    if ch.vm is None: raise fail("not bound to an address space at time of setup_bind")
    if ch.tsg is None: raise fail("not bound to tsg at time of setup_bind")
    if ch.bound: raise fail(f"channel {ch.chid} : usermode buffers allocated", errno.EEXIST)
    if det and ch.wdt: raise fail("deterministic is not compatible with watchdog")
    if usermode and not det: raise fail("need deterministic for usermode submit")
    if not usermode: raise NotImplementedError("kernel-mode submit (SETUP_BIND without USERMODE_SUPPORT) is not emulated")
    try:
      if a.userd_dmabuf_fd == 0 or a.gpfifo_dmabuf_fd == 0 or a.userd_dmabuf_offset or a.gpfifo_dmabuf_offset: raise KernelError(errno.EINVAL)
      gpfifo = self.k.pin(self.k.dmabuf(a.gpfifo_dmabuf_fd).buf, "nvgpu_usermode_buf_from_dmabuf", "ERR")
      if gpfifo.size < max(PAGE, n * 8): raise KernelError(errno.EINVAL)
      ring = ch.vm.map_kernel(gpfifo, "GPFIFO ring", read_only=True)   # the whole dma-buf, read-only, in the kernel VMA
      try: userd = self.k.pin(self.k.dmabuf(a.userd_dmabuf_fd).buf, "nvgpu_usermode_buf_from_dmabuf", "ERR")
      except KernelError: ch.vm.unmap_kernel(ring); raise
    except KernelError as e:
      self.k.klog.nvgpu("nvgpu_channel_setup_usermode", 0, "ERR", "Usermode buffer alloc failed")
      raise fail(None, e.errno) from None
    ch.gpfifo, ch.userd, ch.entries, ch.deterministic, ch.bound, ch.ring_map = gpfifo.get(), userd.get(), n, bool(det), True, ring
    a.work_submit_token, a.gpfifo_gpu_va, a.userd_gpu_va, a.usermode_mmio_gpu_va = ch.token, 0, 0, 0   # no GPU_MMIO on ga10b: VAs stay 0
    if self.k.gpu is not None:
      ch.gpu_ch = self.k.gpu.add_channel(ch.chid, ch.token, ch.vm.mem, gpfifo.view(), n, userd.view(0, PAGE), ch.gpu_fault)
      ch.share_notifier()
    check_ring(ch, ch.ring_map)   # the kernel returns success: the truncated ring address is the hardware's problem

  def alloc_obj_ctx(self, a):
    # common/gr/gr_setup.c nvgpu_gr_setup_alloc_obj_ctx (CONFIG_NVGPU_NON_FUSA: every valid class builds the TSG's GR context,
    # kernel/grctx.py) and common/fifo/tsg.c nvgpu_tsg_validate_class_veid_pbdma; flags and obj_id are not written: they come back as
    # they went in
    ch, fn = self.ch, "nvgpu_gr_setup_alloc_obj_ctx"
    if ch.vm is None:
      self.k.klog.nvgpu("nvgpu_gr_setup_validate_channel_and_class", 0, "ERR", "not bound to address space at time of grctx allocation")
      raise self.k.fail(fn, "fail")
    if a.class_num not in VALID_CLASSES:
      self.k.klog.nvgpu("nvgpu_gr_setup_validate_channel_and_class", 0, "ERR", f"invalid obj class 0x{a.class_num:x}")
      raise self.k.fail(fn, "fail")
    if ch.tsg is None: raise KernelError(errno.EINVAL)
    if msg:=self._class_veid_conflict(a.class_num):
      self.k.klog.nvgpu("nvgpu_tsg_validate_class_veid_pbdma", 0, "ERR", msg)
      self.k.klog.nvgpu(fn, 0, "ERR", "Invalid class/veid/pbdma config")
      raise self.k.fail(fn, "fail")
    ch.tsg.gr.alloc(ch)
    c = self.k.characteristics
    if self.k.gpu is not None and a.class_num in (c.compute_class, c.dma_copy_class): self.k.gpu.alloc_obj(ch.chid, a.class_num)
    ch.classes.append(a.class_num)

  def _class_veid_conflict(self, cls:int) -> str|None:
    # common/fifo/tsg.c nvgpu_tsg_validate_class_veid_pbdma: graphics only on VEID 0 and PBDMA 0. A channel bound with a VEID above 0
    # uses run-queue (PBDMA) 1 from then on (os/linux/ioctl_tsg.c gk20a_tsg_ioctl_bind_channel_ex), so the mixing rules there, which
    # need a VEID 0 channel on PBDMA 1 or a VEID>0 one on PBDMA 0, cannot be met through these ioctls
    if cls in GFX_CLASSES and self.ch.runq: return "Can't have Graphics in non-zero'th PBDMA"
    if cls in GFX_CLASSES and self.ch.veid: return "Can't have Graphics in non-zero'th VEID"
    return None

  def wdt(self, a):
    # os/linux/ioctl_channel.c gk20a_channel_set_wdt_status
    en, dis = a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_ENABLE_WDT, a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_DISABLE_WDT
    if self.ch.deterministic and not (dis and not en): raise KernelError(errno.EINVAL)
    if bool(en) == bool(dis): raise KernelError(errno.EINVAL)
    self.ch.wdt = bool(en)
    if a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_WDT_FLAG_SET_TIMEOUT: self.ch.wdt_timeout_ms = a.timeout_ms

  def set_error_notifier(self, a):
    # os/linux/ioctl_channel.c gk20a_init_error_notifier: the old notifier is dropped before the new one is checked, so a failing call
    # leaves the channel with none. Two of its lines are plain pr_err, not nvgpu's format
    if a.mem == 0:
      self.k.klog("gk20a_init_error_notifier: invalid memory handle", 3)
      raise KernelError(errno.EINVAL)
    try: buf = self.k.dmabuf(a.mem).buf
    except KernelError: buf = None
    self.ch.drop_notifier()
    if buf is None:
      self.k.klog(f"Invalid handle: {a.mem}", 3)
      raise KernelError(errno.EINVAL)
    if (a.offset + 16) & 0xFFFFFFFFFFFFFFFF > buf.size or (a.offset + 16) & 0xFFFFFFFFFFFFFFFF < 16:
      raise self.k.fail("gk20a_init_error_notifier", "gk20a_init_error_notifier: invalid offset")
    if not buf.allocated or buf.ro:   # nvmap_dmabuf.c: no vmap of an unallocated or read-only buffer
      self.k.klog("Cannot map notifier handle", 3)
      raise KernelError(errno.ENOMEM)
    self.ch.notifier = (buf.get(), a.offset)
    buf.view(a.offset, 16)[:] = 0
    self.ch.share_notifier()

  # os/linux/ioctl_channel.c gk20a_channel_ioctl SET_TIMEOUT(_EX): stored, never checked
  def set_timeout(self, a): self.ch.timeout_ms = a.timeout
  # os/linux/ioctl_channel.c gk20a_channel_ioctl GET_TIMEDOUT: common/fifo/channel.c nvgpu_channel_check_unserviceable; a channel is
  # unserviceable from its open until it is bound to a TSG, and after an error
  def get_timedout(self, a): a.value = int(self.ch.tsg is None or self.ch.error is not None)
