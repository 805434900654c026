# nvgpu ctrl, TSG and channel files (tegra-facts.md §2.4, §2.6, §2.7, §3): the checks, errnos and log lines of the L4T r36.4 driver.
from __future__ import annotations
import ctypes, errno, time
from orin_emu.faults import GpuFault, MMUFault, SMException
from orin_emu.kernel.files import IoctlFile, KernelError, int_arg
from orin_emu.kernel.memory import PAGE
from orin_emu.kernel.uapi import consts, limits, structs
from orin_emu.kernel.vm import AsFile, Vm

GR_CLASSES = {0x902D, 0xC797, 0xC7C0, 0xA140}   # 2D, 3D, compute, inline-to-memory: the ga10b classes with a GR context
VALID_CLASSES = GR_CLASSES | {0xC7B5, 0xC76F}    # plus copy and gpfifo (class list beyond the characteristics classes unconfirmed)
CHANNELS_PER_TSG = 128                           # ram_rl_entry_tsg_length_max on ga10b (unconfirmed)
NOTIFIER = {MMUFault: consts.NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, SMException: consts.NVGPU_CHANNEL_GR_EXCEPTION}

class CtrlFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "ctrl", "G", limits["NVGPU_GPU_IOCTL_LAST"], limits["NVGPU_GPU_IOCTL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_GPU_IOCTL_GET_CHARACTERISTICS": "get_characteristics", "NVGPU_GPU_IOCTL_ALLOC_AS": "alloc_as",
              "NVGPU_GPU_IOCTL_OPEN_TSG": "open_tsg", "NVGPU_GPU_IOCTL_GET_TPC_MASKS": "get_tpc_masks",
              "NVGPU_GPU_IOCTL_OPEN_CHANNEL": "open_channel", "NVGPU_GPU_IOCTL_FLUSH_L2": "flush_l2"}
  def __init__(self, k): super().__init__(k); self.usermode: tuple[int,int]|None = None

  def get_characteristics(self, a):
    c = bytes(self.k.characteristics)
    if a.gpu_characteristics_buf_size > 0: self.k.umem.write(a.gpu_characteristics_buf_addr, c[:min(len(c), a.gpu_characteristics_buf_size)])
    a.gpu_characteristics_buf_size = len(c)

  def alloc_as(self, a):
    pde = 1 << 21   # derived from the default big-page size even with big pages off; ALLOC_AS needs 2 MiB alignment on ga10b
    if a.big_page_size != 0: raise KernelError(errno.EINVAL)   # available_big_page_sizes is 0 on ga10b
    if a.reserved: raise KernelError(errno.EINVAL)
    if not a.va_range_start or not a.va_range_end or a.va_range_start % pde or a.va_range_end % pde: raise KernelError(errno.EINVAL)
    if a.va_range_start >= a.va_range_end: raise KernelError(errno.EINVAL)
    if a.va_range_split and (a.flags & consts.NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA or a.big_page_size == 0): raise KernelError(errno.EINVAL)
    if a.va_range_end + (4 << 30) > 1 << 49: raise KernelError(errno.ENOMEM)
    a.as_fd = self.k.install(AsFile(self.k, Vm(self.k, a.va_range_start, a.va_range_end)))

  def open_tsg(self, a):
    if a.flags & ~consts.NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE: raise KernelError(errno.EINVAL)
    # sharing needs a share token from another process's TSG: none exists here, so every SHARE request fails the token check
    if a.flags & consts.NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE or a.source_device_instance_id or a.share_token: raise KernelError(errno.EINVAL)
    a.tsg_fd = self.k.install(TsgFile(self.k, Tsg(self.k)))

  def get_tpc_masks(self, a):
    masks = b"".join(m.to_bytes(4, "little") for m in self.k.tpc_masks)
    if a.mask_buf_size > 0: self.k.umem.write(a.mask_buf_addr, masks[:a.mask_buf_size])
    a.mask_buf_size = len(masks)

  def open_channel(self, a):
    if a.channel_fd not in (-1, 0): raise KernelError(errno.EINVAL)   # -1: the GR runlist, which is runlist 0
    if not self.k.free_chids:
      raise self.k.fail("__gk20a_channel_open", "failed to get f", errno.ENOMEM)
    a.channel_fd = self.k.install(ChannelFile(self.k, Channel(self.k, self.k.free_chids.pop(0))))

  def flush_l2(self, a):
    if not (a.l2_flush or a.fb_flush) or (a.l2_invalidate and not a.l2_flush): raise KernelError(errno.EINVAL)
    self.k.stats["l2_flush"] += a.l2_flush; self.k.stats["l2_invalidate"] += a.l2_invalidate; self.k.stats["fb_flush"] += a.fb_flush
    if self.k.gpu is not None: self.k.gpu.flush_l2(bool(a.l2_flush), bool(a.l2_invalidate), bool(a.fb_flush))

  def mmap(self, addr, size, prot, flags, off):
    # gk20a_ctrl_dev_mmap: the usermode register page (doorbell at +0x90), once per ctrl fd while that mapping lives
    if self.usermode is not None and self.k.still_mapped(self.k.usermode, *self.usermode): raise KernelError(errno.EBUSY)
    if size > 0x10000 or off != 0: raise KernelError(errno.EINVAL)
    self.usermode = (self.k.usermode.map_into(addr, size, prot, flags, 0), size)
    return self.usermode[0]

class Tsg:
  def __init__(self, k):
    self.k, self.refs, self.channels, self.gr_ctx = k, 1, [], False
    self.subctx: dict[int, Vm] = {}
    self.sm_errors: dict[int, tuple[int,int,int]] = {}
    k.tsgs.add(self)
  def put(self):
    self.refs -= 1
    if self.refs == 0:
      for vm in self.subctx.values(): vm.put()
      self.k.tsgs.discard(self)

class TsgFile(IoctlFile):
  kind, MAGIC, LAST, MAX_ARG = "tsg", "T", limits["NVGPU_TSG_IOCTL_LAST"], limits["NVGPU_TSG_IOCTL_MAX_ARG_SIZE"]
  HANDLERS = {"NVGPU_TSG_IOCTL_BIND_CHANNEL": "bind_channel", "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX": "bind_channel_ex",
              "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT": "create_subcontext", "NVGPU_TSG_IOCTL_DELETE_SUBCONTEXT": "delete_subcontext",
              "NVGPU_TSG_IOCTL_READ_SINGLE_SM_ERROR_STATE": "read_sm_error", "NVGPU_IOCTL_TSG_ENABLE": "nop", "NVGPU_IOCTL_TSG_DISABLE": "nop"}
  ENOTTY = ("NVGPU_TSG_IOCTL_READ_ALL_SM_ERROR_STATES",)
  def __init__(self, k, tsg:Tsg): super().__init__(k); self.tsg = tsg
  def release(self): self.tsg.put()
  def nop(self, a): pass

  def unknown(self, req:int) -> int:
    self.k.klog.nvgpu("nvgpu_ioctl_tsg_dev_ioctl", 0, "ERR", f"unrecognized tsg gpu ioctl cmd: 0x{req:x}")
    raise KernelError(errno.ENOTTY)

  def _bind(self, fd:int, veid:int):
    ch = self.k.channel(fd)
    if veid >= self.k.characteristics.max_veid_count_per_tsg: raise KernelError(errno.EINVAL)
    if ch.vm is None or (veid in self.tsg.subctx and self.tsg.subctx[veid] is not ch.vm):
      raise self.k.fail("nvgpu_tsg_subctx_bind_channel", "channel VM does not match with subcontext VM")
    if ch.tsg is not None: raise KernelError(errno.EINVAL)
    if len(self.tsg.channels) >= CHANNELS_PER_TSG:
      raise self.k.fail("nvgpu_tsg_bind_channel", "TSG is full", level="WRN")
    if veid not in self.tsg.subctx: self.tsg.subctx[veid] = ch.vm.get()   # implicit subcontext on first bind (L4T semantics)
    ch.tsg, ch.veid = self.tsg, veid
    self.tsg.refs += 1; self.tsg.channels.append(ch)
  def bind_channel(self, buf): self._bind(int_arg(buf), 0)
  def bind_channel_ex(self, a): self._bind(a.channel_fd, a.subcontext_id)

  def create_subcontext(self, a):
    if a.type not in (consts.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC, consts.NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC):
      raise self.k.fail("nvgpu_tsg_ioctl_create_subcontext", "Invalid subcontext type")
    f = self.k.files.get(a.as_fd)
    if not isinstance(f, AsFile) or not self.k.owns(a.as_fd):
      raise self.k.fail("nvgpu_tsg_ioctl_create_subcontext", f"Invalid VM (fd = {a.as_fd}) specified for subcontext")
    veids = [0] if a.type == consts.NVGPU_TSG_SUBCONTEXT_TYPE_SYNC else range(1, self.k.characteristics.max_veid_count_per_tsg)
    if (veid:=next((v for v in veids if v not in self.tsg.subctx), None)) is None: raise KernelError(errno.ENOSPC)
    self.tsg.subctx[veid] = f.vm.get()
    a.veid = veid

  def delete_subcontext(self, a):
    if (vm:=self.tsg.subctx.pop(a.veid, None)) is None: raise KernelError(errno.EINVAL)
    vm.put()

  def read_sm_error(self, a):
    if a.sm_id >= self.k.num_sm: raise self.k.fail("nvgpu_tsg_get_sm_error_state", "Invalid number of SMs")   # sm_id < get_no_of_sm()
    g, w, pc = self.tsg.sm_errors.get(a.sm_id, (0, 0, 0))
    rec = structs.nvgpu_tsg_sm_error_state_record(global_esr=g, warp_esr=w, warp_esr_pc=pc)
    self.k.umem.write(a.record_mem, bytes(rec)[:min(a.record_size, ctypes.sizeof(rec))])

class Channel:
  def __init__(self, k, chid:int):
    self.k, self.chid = k, chid
    self.token = (0 & 0x7F) << 16 | (chid & 0xFFF)   # runlist 0 (GR), hardware channel id: 511, 510, ...
    self.vm: Vm|None = None
    self.tsg: Tsg|None = None
    self.veid, self.wdt, self.wdt_timeout_ms, self.timeout_ms, self.deterministic, self.bound = 0, True, 0, 0, False, False
    self.gpfifo = self.userd = self.notifier = self.ring_map = self.gpu_ch = None
    self.entries, self.error, self.classes = 0, None, []
    k.channels[chid] = self

  def gpu_fault(self, fault:GpuFault):
    """Contract B's on_error. A GPU channel that took the notifier view (orin_emu.gpu's error_notifier) has written it already,
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

  def close(self):
    if self.k.gpu is not None and self.bound: self.k.gpu.remove_channel(self.chid)
    if self.tsg is not None: self.tsg.channels.remove(self); self.tsg.put()
    if self.ring_map is not None: self.vm.unmap_kernel(self.ring_map)
    for b in (self.gpfifo, self.userd, self.notifier[0] if self.notifier else None):
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
    ch, f, n = self.ch, a.flags, a.num_gpfifo_entries
    usermode = f & consts.NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT
    if n & (n - 1) or n < (2 if usermode else 4) or n > self.k.characteristics.max_gpfifo_entries: raise KernelError(errno.EINVAL)
    if ch.vm is None: raise self.k.fail("nvgpu_channel_setup_bind", "not bound to an address space at time of setup_bind")
    if ch.tsg is None: raise self.k.fail("nvgpu_channel_setup_bind", "not bound to tsg at time of setup_bind")
    if ch.bound: raise KernelError(errno.EEXIST)
    det = f & consts.NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC
    if det and ch.wdt: raise self.k.fail("nvgpu_channel_setup_bind", "deterministic is not compatible with watchdog")
    if usermode and not det: raise self.k.fail("nvgpu_channel_setup_bind", "need deterministic for usermode submit")
    if not usermode: raise NotImplementedError("kernel-mode submit (SETUP_BIND without USERMODE_SUPPORT) is not emulated")
    try:
      if a.userd_dmabuf_fd == 0 or a.gpfifo_dmabuf_fd == 0 or a.userd_dmabuf_offset or a.gpfifo_dmabuf_offset: raise KernelError(errno.EINVAL)
      userd, gpfifo = self.k.dmabuf(a.userd_dmabuf_fd).buf, self.k.dmabuf(a.gpfifo_dmabuf_fd).buf
      if gpfifo.size < max(PAGE, n * 8) or not userd.allocated or not gpfifo.allocated: raise KernelError(errno.EINVAL)
    except KernelError:
      self.k.klog.nvgpu("nvgpu_channel_setup_usermode", 0, "ERR", "Usermode buffer alloc failed")
      self.k.klog.nvgpu("nvgpu_channel_setup_bind", 0, "ERR", "fail"); raise
    if gpfifo.size > (max(PAGE, n * 8) + PAGE - 1) & ~(PAGE - 1):
      raise MachineFrozen(f"SETUP_BIND with a {gpfifo.size:#x}-byte GPFIFO dma-buf for {n} entries: on the Orin this succeeds and the next "
                          "ALLOC_OBJ_CTX freezes the board (tegra-facts.md §3.2); give the ring its own buffer of exactly entries*8 bytes")
    ch.gpfifo, ch.userd, ch.entries, ch.deterministic, ch.bound = gpfifo.get(), userd.get(), n, bool(det), True
    ch.ring_map = ch.vm.map_kernel(gpfifo)
    a.work_submit_token, a.gpfifo_gpu_va, a.userd_gpu_va, a.usermode_mmio_gpu_va = ch.token, 0, 0, 0   # no GPU_MMIO on ga10b: VAs stay 0
    if self.k.gpu is not None:
      ch.gpu_ch = self.k.gpu.add_channel(ch.chid, ch.token, ch.vm.mem, gpfifo.view(), n, userd.view(0, PAGE), ch.gpu_fault)
      ch.share_notifier()

  def alloc_obj_ctx(self, a):
    ch = self.ch
    if ch.vm is None: raise self.k.fail("nvgpu_gr_setup_alloc_obj_ctx", "not bound to address space at time of grctx allocation")
    if a.class_num not in VALID_CLASSES: raise self.k.fail("nvgpu_gr_setup_alloc_obj_ctx", f"invalid obj class 0x{a.class_num:x}")
    if ch.tsg is None: raise KernelError(errno.EINVAL)
    if a.class_num in GR_CLASSES and not ch.tsg.gr_ctx:
      ch.tsg.gr_ctx = True
      self.k.gr_init_warning()
    if self.k.gpu is not None: self.k.gpu.alloc_obj(ch.chid, a.class_num)
    ch.classes.append(a.class_num)
    a.obj_id = 0

  def wdt(self, a):
    en, dis = a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_ENABLE_WDT, a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_DISABLE_WDT
    if bool(en) == bool(dis): raise KernelError(errno.EINVAL)
    if self.ch.deterministic and not dis: raise KernelError(errno.EINVAL)
    self.ch.wdt = bool(en)
    if a.wdt_status & consts.NVGPU_IOCTL_CHANNEL_WDT_FLAG_SET_TIMEOUT: self.ch.wdt_timeout_ms = a.timeout_ms

  def set_error_notifier(self, a):
    if a.mem == 0: raise self.k.fail("gk20a_init_error_notifier", "invalid memory handle")
    try: buf = self.k.dmabuf(a.mem).buf
    except KernelError: raise KernelError(errno.EINVAL) from None
    if a.offset + 16 > buf.size or not buf.allocated: raise KernelError(errno.EINVAL)
    if self.ch.notifier is not None: self.ch.notifier[0].put()
    self.ch.notifier = (buf.get(), a.offset)
    buf.view(a.offset, 16)[:] = 0
    self.ch.share_notifier()

  def set_timeout(self, a): self.ch.timeout_ms = a.timeout
  def get_timedout(self, a): a.value = int(self.ch.error is not None)

class MachineFrozen(RuntimeError):
  """What the real board did instead of returning an error: raised so the software bug shows, not a hang."""
