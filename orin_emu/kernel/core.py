# The emulated Jetson Orin's kernel: one ga10b, its device nodes and open files, nvmap buffers in emulated DRAM, the kernel log,
# fault injection and leak counts. One per process (kernel()); the seam (orin_emu.seam) routes FileIOInterface calls here.
from __future__ import annotations
import collections, ctypes, errno, os, threading
from orin_emu.kernel.files import File, KernelError, NotEmulated
from orin_emu.kernel.klog import KernelLog
from orin_emu.kernel.memory import Dram, SharedPages, UserMemory, file_mappings, PAGE
from orin_emu.kernel.nodes import DEVFREQ, DEVFREQ_LINK, IGPU0, IGPU0_NODES, DevFreq, DirFile, KmsgFile, SysfsFile
from orin_emu.kernel.nvgpu import SM_PER_TPC, Channel, ChannelFile, CtrlFile
from orin_emu.kernel.nvmap import Buffer, DmaBufFile, NvmapFile
from orin_emu.kernel.uapi import UAPI, ioctl_names, structs

# Values the first 128 bytes of the observed dump do not hold. From the sources (nvgpu include/nvgpu/hw/ga10b/): hw_proj_ga10b.h
# proj_scal_litter_num_gpcs_v and _num_pes_per_gpc_v, hw_gr_ga10b.h gr_pri_fe_chip_def_info_max_veid_count_init_v; the rest as printed
# by an Orin (OBSERVED.md "Characteristics"). The preemption fields are not emulated (README.md "Known differences").
FROM_SOURCE = {"max_gpc_count": 2, "num_ppc_per_gpc": 2, "max_veid_count_per_tsg": 64}
OBSERVED_REST = {"fbp_en_mask": 0x3, "max_ltc_per_fbp": 1, "max_lts_per_ltc": 4, "num_ltc": 2, "max_freq": 1300000000}

def ga10b_characteristics(**overrides):
  """GET_CHARACTERISTICS as an Orin answered it (tegra-uapi.json observed_ga10b_characteristics_decode, OBSERVED.md), with overrides.
  max_gpfifo_entries is os/linux/ioctl_ctrl.c's rounddown_pow_of_two(U32_MAX / 8)."""
  obs = UAPI["observed_ga10b_characteristics_decode"]
  c = structs.nvgpu_gpu_characteristics()
  for f in UAPI["structs"]["nvgpu_gpu_characteristics"]["fields"]:
    if (v:=obs.get(f["name"])) is not None and not isinstance(v, list): setattr(c, f["name"], int(v, 16) if isinstance(v, str) else v)
  vals = {**OBSERVED_REST, **FROM_SOURCE, "max_gpfifo_entries": 1 << 28,
          **({"gpc_mask": (1 << overrides["num_gpc"]) - 1} if "num_gpc" in overrides else {}), **overrides}
  for n, v in vals.items():
    if n == "chipname": continue
    setattr(c, n, v)
  c.chipname[:] = list(overrides.get("chipname", b"ga10b").ljust(8, b"\0"))
  return c

def _gpu_room():
  try: from orin_emu.gpu import Ga10bGPU
  except ModuleNotFoundError as e:
    if e.name != "orin_emu.gpu": raise
    return None   # the GPU room is not there: channels simply are not serviced
  return Ga10bGPU

class Faults:
  """Fault injection: the nth nvmap ALLOC fails (ENOMEM), the nth call of an ioctl fails with an errno, an open or an mmap of a file kind
  ('dmabuf', 'ctrl') fails."""
  def __init__(self): self.rules: list[list] = []
  def ioctl(self, which:str|int, err:int, nth:int=1): self.rules.append(["ioctl", which, err, nth])
  def alloc(self, nth:int=1, err:int=errno.ENOMEM): self.rules.append(["alloc", None, err, nth])
  def open(self, path:str, err:int, nth:int=1): self.rules.append(["open", path, err, nth])
  def mmap(self, kind:str, err:int, nth:int=1): self.rules.append(["mmap", kind, err, nth])
  def clear(self): self.rules.clear()
  def _hit(self, kind:str, key:set):
    for r in self.rules:
      if r[0] == kind and (r[1] is None or r[1] in key):
        r[3] -= 1
        if r[3] == 0: self.rules.remove(r); raise KernelError(r[2])
        return
  def check_ioctl(self, name:str, req:int): self._hit("ioctl", {name, req})
  def check_alloc(self): self._hit("alloc", {None})
  def check_open(self, path:str): self._hit("open", {path})
  def check_mmap(self, kind:str): self._hit("mmap", {kind})
  def load(self, spec:str):
    """ORIN_EMU_FAULTS for subprocesses: 'alloc:N' | 'ioctl:NAME:ERRNO[:N]' | 'open:PATH:ERRNO[:N]' | 'mmap:KIND:ERRNO[:N]', comma separated;
    ERRNO by name."""
    for item in filter(None, spec.split(",")):
      kind, *p = item.split(":")
      if kind == "alloc": self.alloc(int(p[0]) if p else 1)
      else: getattr(self, kind)(p[0], getattr(errno, p[1]), int(p[2]) if len(p) > 2 else 1)

def env_tpc_masks() -> list[int]|None:
  """ORIN_EMU_TPC_MASKS='0xf,0x7': the TPCs each GPC has (a subprocess's Orin with gated TPCs)."""
  return [int(m, 0) for m in v.split(",")] if (v:=os.environ.get("ORIN_EMU_TPC_MASKS")) else None

def env_characteristics() -> dict:
  """ORIN_EMU_CHARACTERISTICS='num_gpc=2,num_tpc_per_gpc=4': other GET_CHARACTERISTICS values for a subprocess's Orin."""
  return {n: int(v, 0) for n, v in (item.split("=") for item in filter(None, os.environ.get("ORIN_EMU_CHARACTERISTICS", "").split(",")))}

def env_tpc_masks() -> list[int]|None:
  """ORIN_EMU_TPC_MASKS='0x7' (one mask per physical GPC, comma separated): a floorswept board whose GPCs have only these TPCs."""
  return [int(m, 0) for m in v.split(",")] if (v:=os.environ.get("ORIN_EMU_TPC_MASKS")) else None

class Kernel:
  def __init__(self, dram_size:int=64 << 30, tpc_masks:list[int]|None=None, **characteristics):
    self.lock = threading.RLock()
    self.klog, self.umem = KernelLog(), UserMemory()
    self.dram, self.usermode = Dram(dram_size), SharedPages("orin-emu-usermode", 0x10000)
    self.characteristics = c = ga10b_characteristics(**{**env_characteristics(), **characteristics})
    # the TPCs each physical GPC has after floorsweeping (common/gr/gr_config.c nvgpu_gr_config_init: gpc_tpc_mask_physical, from the
    # fuses); every SM count the driver uses derives from them (hal/gr/config/gr_config_gv100_fusa.c gv100_gr_config_init_sm_id_table)
    full = [(1 << c.num_tpc_per_gpc) - 1 if c.gpc_mask >> g & 1 else 0 for g in range(c.max_gpc_count)]
    self.tpc_masks = list(tpc_masks or env_tpc_masks() or full)
    self.tpc_masks += [0] * (c.max_gpc_count - len(self.tpc_masks))
    self.sm_count = SM_PER_TPC * sum(bin(m).count("1") for m in self.tpc_masks)
    self.ioctl_names, self.faults, self.devfreq = ioctl_names, Faults(), DevFreq()
    self.files: dict[int, File] = {}
    self.buffers: dict[int, Buffer] = {}
    self.zombies: list[Buffer] = []   # released by everything but a CPU mapping that still exists
    self.vms, self.tsgs, self.channels = set(), set(), {}
    self.free_chids = list(range(511, -1, -1))   # hardware channel ids are handed out downward: tokens 511, 510, ...
    self.next_handle, self.next_tsgid, self.ctrl_opens, self.stats, self.tag_labels = 0x80000000, 0, 0, collections.Counter(), {}
    self.inherited = dict(_inherited)   # fd -> inode: files a parent process opened before it forked this one
    self.faults.load(os.environ.get("ORIN_EMU_FAULTS", ""))
    if not self.klog.records():   # a new machine's log starts with its boot messages
      self.klog.nvgpu("nvgpu_nvhost_syncpt_init", 122, "INFO", "syncpt_unit_base 60000000 syncpt_unit_size 4000000 size 10000")
      self.klog.nvgpu("tpc_pg_mask_store", 1116, "INFO", "no value change, same mask already set")
    self.gpu = None
    if (gpu:=_gpu_room()) is not None:
      self.gpu = gpu(self.klog)
      self.gpu.usermode = self.usermode.view(0, 0x10000)

  # ---- paths and fds
  def path_kind(self, path:str) -> str|None:
    p = os.path.normpath(path) if path else ""
    if p in ("/dev/nvmap", "/dev/kmsg", "/dev/nvgpu", IGPU0, "/sys/class/devfreq", DEVFREQ): return p
    if p.startswith(IGPU0 + "/") and p[len(IGPU0) + 1:] in IGPU0_NODES: return p
    if p.startswith(DEVFREQ + "/") and p[len(DEVFREQ) + 1:] in self.devfreq.attrs(): return p
    return None
  def routes(self, path:str) -> bool: return self.path_kind(path) is not None

  def listdir(self, path:str) -> list[str]:
    dirs = {"/dev/nvgpu": ["igpu0"], IGPU0: list(IGPU0_NODES), "/sys/class/devfreq": ["17000000.gpu"], DEVFREQ: sorted(self.devfreq.attrs())}
    if (entries:=dirs.get(os.path.normpath(path))) is None: raise KernelError(errno.ENOTDIR)
    return entries
  def readlink(self, path:str) -> str:
    if os.path.normpath(path) == DEVFREQ: return DEVFREQ_LINK
    raise KernelError(errno.EINVAL)

  def open(self, path:str, flags:int) -> int:
    with self.lock:
      p = self.path_kind(path)
      self.faults.check_open(p)
      if p == "/dev/nvmap": f: File = NvmapFile(self)
      elif p == IGPU0 + "/ctrl": f = CtrlFile(self)
      elif p == IGPU0 + "/as": raise KernelError(errno.EINVAL)   # observed: an AS comes from ALLOC_AS, not from the node
      elif p.startswith(IGPU0 + "/"): raise NotEmulated(f"opening {p} is not emulated")
      elif p == "/dev/kmsg": f = KmsgFile(self, bool(flags & os.O_NONBLOCK))
      elif p.startswith(DEVFREQ + "/"):
        attr = p[len(DEVFREQ) + 1:]
        if flags & os.O_ACCMODE != os.O_RDONLY and (os.geteuid() != 0 or attr not in DevFreq.WRITABLE): raise KernelError(errno.EACCES)
        f = SysfsFile(self, attr)
      else: f = DirFile(self)
      return self.install(f, cloexec=bool(flags & os.O_CLOEXEC))

  def install(self, f:File, cloexec:bool=True, same_file_as:int|None=None) -> int:
    """Give an open file a real fd number (anon-inode and dma-buf fds from ioctls are close-on-exec); same_file_as: an open fd whose
    file this one shares (one inode), as every GET_FD of a buffer hands out the same dma-buf file."""
    if same_file_as is None: fd = os.memfd_create(f"orin-emu-{f.kind}", os.MFD_CLOEXEC if cloexec else 0)
    else: fd = os.open(f"/proc/self/fd/{same_file_as}", os.O_RDWR | (os.O_CLOEXEC if cloexec else 0))
    if (stale:=self.files.pop(fd, None)) is not None: stale.release()   # that number was closed behind the seam's back
    f.fd, f.ino = fd, os.fstat(fd).st_ino
    self.files[fd] = f
    return fd

  def inherited_file(self, fd:int) -> bool:
    """fd is an emulated file the parent opened before fork(): the real driver serves it on the parent's objects, which live in the
    parent's emulator, so every request on it raises NotEmulated."""
    try: return self.inherited.get(fd) == os.fstat(fd).st_ino
    except OSError: return False

  def owns(self, fd:int) -> bool:
    """fd is an open emulated file. A record whose fd was closed directly (os.close) is released here, as close() would have."""
    if (f:=self.files.get(fd)) is None: return False
    try:
      if os.fstat(fd).st_ino == f.ino: return True
    except OSError: pass
    with self.lock:
      if self.files.get(fd) is f: del self.files[fd]; f.release()
    return False

  def file(self, fd:int) -> File:
    if not self.owns(fd): raise KernelError(errno.EBADF)
    return self.files[fd]
  def dmabuf(self, fd:int) -> DmaBufFile:
    """dma_buf_get: EBADF for no open file, EINVAL for a file that is not a dma-buf."""
    if (fd:=ctypes.c_int32(fd).value) < 0: raise KernelError(errno.EBADF)   # an fd field is an int to the kernel
    if not self.owns(fd):
      try: os.fstat(fd)
      except OSError: raise KernelError(errno.EBADF) from None
      raise KernelError(errno.EINVAL)
    if not isinstance(f:=self.files[fd], DmaBufFile): raise KernelError(errno.EINVAL)
    return f
  def dmabuf_fd_of(self, b:Buffer) -> int|None:
    return next((fd for fd, f in list(self.files.items()) if isinstance(f, DmaBufFile) and f.buf is b and self.owns(fd)), None)
  def channel(self, fd:int) -> Channel:
    if not self.owns(fd) or not isinstance(f:=self.files[fd], ChannelFile): raise KernelError(errno.EINVAL)
    return f.ch

  def close(self, fd:int):
    with self.lock:
      f = self.files.pop(fd, None)
      os.close(fd)
      if f is not None: f.release()

  # ---- syscalls on emulated fds
  def ioctl(self, fd:int, req:int, arg:int) -> int:
    with self.lock: return self.file(fd).ioctl(req & 0xFFFFFFFF, arg)
  def mmap(self, fd:int, addr, size:int, prot:int, flags:int, off:int) -> int:
    with self.lock:
      if size == 0 or off % PAGE: raise KernelError(errno.EINVAL)
      self.faults.check_mmap((f:=self.file(fd)).kind)
      return f.mmap(addr, size, prot, flags, off)
  def munmapped(self):
    with self.lock: self.reap()
  def read(self, fd:int, n:int) -> bytes:
    with self.lock: f = self.file(fd)
    return f.read(n)   # outside the lock: a blocking kmsg read must not stall the GPU room's log lines
  def write(self, fd:int, data:bytes) -> int:
    with self.lock: return self.file(fd).write(data)
  def seek(self, fd:int, off:int, whence:int=os.SEEK_SET) -> int:
    with self.lock: return self.file(fd).seek(off, whence)

  # ---- nvmap memory
  def new_buffer(self, size:int, ro:bool=False) -> Buffer:
    b = Buffer(self, self.next_handle, size, ro)
    self.buffers[b.id], self.next_handle = b, self.next_handle + 1
    return b
  def alloc_dram(self, size:int, align:int) -> int:
    if (phys:=self.dram.alloc(size, align)) is None:
      self.reap()
      if (phys:=self.dram.alloc(size, align)) is None: raise KernelError(errno.ENOMEM)
    return phys
  def _cpu_mapped(self, b:Buffer, maps) -> bool:
    return any(s != self.dram.base and off < b.phys + b.size and b.phys < off + (e - s) for s, e, off in maps)
  def release_buffer(self, b:Buffer):
    del self.buffers[b.id]
    if b.phys is None: return
    if b.cpu_mapped and self._cpu_mapped(b, file_mappings(self.dram.ino)): self.zombies.append(b)
    else: self.dram.free(b.phys, b.size)
  def reap(self):
    if not self.zombies: return
    maps = file_mappings(self.dram.ino)
    for b in [z for z in self.zombies if not self._cpu_mapped(z, maps)]: self.zombies.remove(b); self.dram.free(b.phys, b.size)
  def cpu_mapping_owner(self, addr:int) -> tuple[Buffer|None, int]:
    """The buffer whose CPU mapping contains addr (nvmap's 'nvmap VMA' check) and where that mapping ends; None for any other address."""
    for s, e, off in file_mappings(self.dram.ino):
      if s != self.dram.base and s <= addr < e:
        phys = off + addr - s
        return next((b for b in self.buffers.values() if b.phys is not None and b.phys <= phys < b.phys + b.size), None), e
    return None, 0
  def still_mapped(self, pages:SharedPages, addr:int, size:int) -> bool:
    return any(s < addr + size and addr < e for s, e, _ in file_mappings(pages.ino))

  def pin(self, b:Buffer, func:str, level:str) -> Buffer:
    """nvgpu_mm_pin of an nvmap dma-buf (nvmap_dmabuf.c nvmap_dmabuf_map_dma_buf): an unallocated handle has no pages to pin"""
    if not b.allocated: raise self.fail(func, "Failed to pin dma_buf!", level=level)
    return b

  def fail(self, func:str, msg:str, err:int=errno.EINVAL, level:str="ERR") -> KernelError:
    """The driver's error line for a failing check, and the errno to raise"""
    self.klog.nvgpu(func, 0, level, msg)
    return KernelError(err)

  # ---- GPU events
  def channel_error(self, chid:int, fault):
    """Fault injection: put a channel in error state as a GPU fault would (error notifier, GET_TIMEDOUT, SM error record)."""
    self.channels[chid].fault(fault)
  def gr_init_warning(self):
    # hal/gr/init/gr_init_tu104.c tu104_gr_init_commit_rtv_cb's nvgpu_assert(u64_hi32(addr) == 0U), WARN_ON in the kernel, for an RTV
    # buffer past 2^40 (kernel/grctx.py); an Orin printed it at GR context init (OBSERVED.md "GR context init")
    for ln in ["------------[ cut here ]------------",
               f"WARNING: CPU: 0 PID: {os.getpid()} at drivers/gpu/nvgpu/hal/gr/init/gr_init_tu104.c:191 "
               "tu104_gr_init_commit_rtv_cb+0x68/0x78 [nvgpu]",
               "Call trace:", " tu104_gr_init_commit_rtv_cb+0x68/0x78 [nvgpu]", " nvgpu_gr_obj_ctx_commit_global_ctx_buffers+0x1f4/0x2b0 [nvgpu]",
               " nvgpu_gr_obj_ctx_alloc+0x2c8/0x4f0 [nvgpu]", " nvgpu_gr_setup_alloc_obj_ctx+0x4e8/0x7f0 [nvgpu]",
               " gk20a_channel_ioctl+0x6a4/0x1430 [nvgpu]",
               "---[ end trace 0000000000000000 ]---"]: self.klog(ln, 4)

  # ---- leaks
  def counts(self) -> dict:
    """What is alive now, for leak tests: open emulated fds by kind, the process's fds, handles, buffers, DRAM, GPU mappings, channels."""
    with self.lock:
      for fd in list(self.files): self.owns(fd)
      self.reap()
      return {"fds": dict(collections.Counter(f.kind for f in self.files.values())), "proc_fds": len(os.listdir("/proc/self/fd")),
              "handles": sum(len(f.handles) for f in self.files.values() if isinstance(f, NvmapFile)), "buffers": len(self.buffers),
              "zombies": len(self.zombies), "dram_bytes": self.dram.used, "gpu_mappings": sum(len(v.maps) for v in self.vms),
              "vm_areas": sum(len(v.areas) for v in self.vms), "vms": len(self.vms), "tsgs": len(self.tsgs), "channels": len(self.channels)}

_kernel: Kernel|None = None
_kernel_lock = threading.Lock()
_inherited: dict[int, int] = {}
def kernel() -> Kernel:
  """The process-wide emulated Orin, created on first use."""
  global _kernel
  if _kernel is not None: return _kernel
  with _kernel_lock:
    if _kernel is None: _kernel = Kernel()
    return _kernel
def reset(**kw) -> Kernel:
  """A fresh Orin for a test. The old one's open files stay with whoever holds them (their fds close as plain fds), so no fd number
  is ever closed twice."""
  global _kernel
  with _kernel_lock:
    if _kernel is not None:
      for fd in (_kernel.dram.fd, _kernel.usermode.fd): os.close(fd)   # its mappings stay valid for views still held
      if hasattr(_kernel.gpu, "close"): _kernel.gpu.close()   # the GPU room's threads would otherwise poll the old machine forever
    _kernel = Kernel(**kw)
    return _kernel
def _forked():
  """In a forked child: the parent's Orin (its GPU threads did not survive the fork, its mappings are VM_DONTCOPY) is not the child's; the
  child boots its own on first use. It keeps the fds of the parent's open files, as fork does, and they stay the parent's."""
  global _kernel, _kernel_lock
  if _kernel is not None:
    _inherited.update({fd: f.ino for fd, f in _kernel.files.items()})
    for fd in (_kernel.dram.fd, _kernel.usermode.fd): os.close(fd)   # the GPU's memory is not the child's
  _kernel, _kernel_lock = None, threading.Lock()   # another thread may have held the lock at fork()
os.register_at_fork(after_in_child=_forked)
