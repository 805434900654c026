# The emulated ga10b: channels, the GPU thread (or the deterministic inline mode), and what a fault does to the channel and the host.
#
# How host stores reach the GPU: like hardware, the GPU pulls. The usermode page (gpu.usermode, a uint8 view the kernel room maps for
# the ctrl fd) is watched by a front-end thread: a store of a channel's work-submit token at +0x90 rings that channel, which samples
# GP_PUT from its USERD (+0x8C) right then (so lapping is seen even while a long kernel runs); the engine thread fetches ring entries up
# to it and writes GP_GET (+0x88). The register is reset to an invalid token after each read; because two back-to-back rings of
# different channels can land between two polls, a poll also rings every channel whose GP_PUT moved. gpu.doorbell(token) is the same
# ring for callers that see the store (the kernel room's seam, tests). In deterministic mode there are no threads: doorbell() and
# sync() run all runnable work inline before returning.
import collections, threading, time, traceback
import numpy as np
from orin_emu.faults import GpuFault, MMUFault, SMException, ChannelError
from orin_emu.gpu import log
from orin_emu.gpu.channel import Channel, GP_PUT
from orin_emu.gpu.compute import SkedException

DOORBELL, NO_TOKEN = 0x90, 0xffffffff
_thread = threading.local()
def on_gpu_thread() -> bool:
  """the caller runs on one of the emulated GPU's threads (Python code of the host can land here: a garbage collection runs finalizers)"""
  return getattr(_thread, "gpu", False)
NOTIFIER = {"mmu": 31, "gr": 13, "pbdma": 32}   # error notifier info32 codes (nvgpu.h NVGPU_CHANNEL_*_ERROR*, uapi)
CLIENT_ID = {("gr", "gpc"): "t1_0", ("gr", "hub"): "fe", ("ce", "hub"): "ce0"}   # unconfirmed client names, gv11b style

class Ga10bGPU:
  def __init__(self, klog, executor=None, deterministic:bool=False, qmd_race_s:float=0.0, num_tpcs:int=4, poll_s:float=0.0002):
    """qmd_race_s: seconds between a kernel finishing and SKED reading its QMD's releases and dependent QMD back from memory, the window
    in which a host that rewrites a live QMD (OBSERVED.md, "QMD reuse race") loses the race"""
    self.klog, self._executor, self.deterministic = klog, executor, deterministic
    self.qmd_race_s, self.num_tpcs, self.poll_s = qmd_race_s, num_tpcs, poll_s
    self.usermode: np.ndarray|None = None
    self.channels: dict[int, Channel] = {}
    self.counters: collections.Counter = collections.Counter()   # cache maintenance and work accounting, for tests to inspect
    self.errors: list[tuple[int, GpuFault]] = []
    self.sm_errors: dict[int, tuple[int, int, int, int, int]] = {}   # sm_id -> (global_esr, warp_esr, warp_esr_pc, global mask, warp mask)
    self._ts, self._lock, self._wake, self._idle = 0, threading.Lock(), threading.Event(), threading.Condition()
    self._sync_req = self._idle_seen = self._releases = 0
    self._released = threading.Condition()
    self._threads: list[threading.Thread] = []
    self._stop = False
    self.running: tuple|None = None   # (qmd va, program va, grid, block, monotonic start) of the launch an engine is executing

  @property
  def executor(self):
    if self._executor is None:
      from orin_emu.ptx import launch
      self._executor = launch
    return self._executor

  # the GPU-room interface (README.md)
  def add_channel(self, chid:int, token:int, mem, gpfifo:np.ndarray, gpfifo_entries:int, userd:np.ndarray, on_error=None) -> Channel:
    ch = Channel(self, chid, token, mem, gpfifo, gpfifo_entries, userd, on_error)
    with self._lock: self.channels[chid] = ch
    if not self.deterministic and not self._threads:
      self._threads = [threading.Thread(target=self._gpu_thread, args=(fn,), name=f"ga10b-{fn.__name__[1:]}", daemon=True)
                       for fn in (self._frontend, self._engines)]
      for t in self._threads: t.start()
    return ch

  def alloc_obj(self, chid:int, class_id:int): self.channels[chid].alloc_obj(class_id)

  def remove_channel(self, chid:int):
    with self._lock: ch = self.channels.pop(chid)
    ch.removed = True

  def doorbell(self, token:int):
    if (ch:=next((c for c in list(self.channels.values()) if c.token == token), None)) is None: return   # no such channel: nothing runs
    ch.doorbell()
    if self.deterministic: self._run()
    else: self._wake.set()

  def sync(self, timeout:float|None=None) -> bool:
    """wait until no channel can make progress (drained, failed, or parked on an acquire that does not hold)"""
    self._poll_usermode()
    if self.deterministic: return self._run() or True
    with self._idle:
      self._sync_req += 1
      req = self._sync_req
      self._wake.set()
      return self._idle.wait_for(lambda: self._idle_seen >= req, timeout)

  def flush_l2(self, l2_flush:bool, l2_invalidate:bool, fb_flush:bool):
    """the FLUSH_L2 ioctl's effect: nothing to do on an IO-coherent unified memory, but counted so tests see it was issued"""
    for name, on in (("l2_flush", l2_flush), ("l2_invalidate", l2_invalidate), ("fb_flush", fb_flush)):
      if on: self.count(name)

  def close(self):
    self._stop = True
    self._wake.set()
    for t in self._threads: t.join()

  def describe(self) -> str:
    """what the GPU is doing right now, for a host wait that timed out: its threads, the launch it executes, where each channel is"""
    out = [f"{t.name}: {'running' if t.is_alive() else 'DEAD'}" for t in self._threads]
    if (r:=self.running) is not None:
      out.append(f"executing the QMD at 0x{r[0]:x} (program 0x{r[1]:x}, grid {r[2]}, block {r[3]}) for {time.monotonic() - r[4]:.1f} s")
    return "\n".join(out + [ch.describe() for ch in list(self.channels.values())])

  def wait_released(self, seen:int|None, timeout:float) -> int:
    """for a host thread polling GPU-written memory: block without the GIL until released() counts past seen (at once if seen is None
    or the GPU runs inline), at most timeout seconds; returns the count to pass next time"""
    with self._released:
      if seen is not None and self._threads: self._released.wait_for(lambda: self._releases != seen, timeout)
      return self._releases

  # services for the engines
  def released(self):
    """memory a host may poll changed: a pushbuffer segment ran (its semaphore releases) or a channel faulted"""
    with self._released:
      self._releases += 1
      self._released.notify_all()
  def count(self, name:str, n:int=1): self.counters[name] += n
  def clock(self) -> int:
    """GPU timestamp in ns, strictly increasing"""
    with self._lock:
      self._ts = max(self._ts + 1, time.monotonic_ns())
      return self._ts

  # execution
  def _poll_usermode(self) -> bool:
    if self.usermode is None: return False
    reg = self.usermode[DOORBELL:DOORBELL+4].view(np.uint32)
    if (token:=int(reg[0])) == NO_TOKEN: return False
    reg[0] = NO_TOKEN
    for ch in list(self.channels.values()):
      if ch.token == token or int(ch.userd32[GP_PUT // 4]) != ch.put_seen: ch.doorbell()
    self._wake.set()
    return True

  @staticmethod
  def _gpu_thread(fn):
    _thread.gpu = True
    fn()

  def _frontend(self):
    idle_polls = 0
    while not self._stop:
      idle_polls = 0 if self._poll_usermode() else idle_polls + 1
      time.sleep(min(self.poll_s * (1 << min(idle_polls, 4)), 0.002))

  def _run(self) -> bool:
    progressed, any_progress = True, False
    while progressed:
      progressed = False
      for ch in list(self.channels.values()): progressed |= self._step(ch)
      any_progress |= progressed
    return any_progress

  def _step(self, ch:Channel) -> bool:
    try: return ch.step()
    except GpuFault as e: self._fault(ch, e, ch.engine)
    except Exception as e:
      self._fault(ch, ChannelError(f"emulator internal error: {e!r}\n{traceback.format_exc()}"), ch.engine)
      if self.deterministic: raise
    return True

  def _engines(self):
    while not self._stop:
      self._wake.clear()
      req, progressed = self._sync_req, False
      for ch in list(self.channels.values()): progressed |= self._step(ch)
      if progressed: continue
      with self._idle:
        self._idle_seen = req
        self._idle.notify_all()
      self._wake.wait(0.002)   # also the retry period of a parked acquire

  # faults: log lines like nvgpu's, the channel stops, the SM error state and the error notifier record it, the owner is told
  def _fault(self, ch:Channel, e:GpuFault, engine:str):
    if isinstance(e, MMUFault): lines, code = log.mmu_fault(e, ch.chid, engine, CLIENT_ID.get((engine, e.client), "host")), NOTIFIER["mmu"]
    elif isinstance(e, SMException):
      self.sm_errors[0] = (e.global_esr, e.warp_esr, e.pc, 0, 0)
      lines, code = log.sm_exception(e), NOTIFIER["gr"]
    elif isinstance(e, SkedException): lines, code = log.sked_exception(e.esr), NOTIFIER["gr"]
    else: lines, code = log.channel_error(ch.chid, str(e).split("\n")[0]), NOTIFIER["pbdma" if engine == "host" else "gr"]
    for line in lines: self.klog(line)
    ch.error = e
    self.errors.append((ch.chid, e))
    if ch.error_notifier is not None:
      ch.error_notifier[:16] = np.frombuffer(np.array([(self.clock(), code, 0, 0xffff)], dtype="<u8,<u4,<u2,<u2").tobytes(), np.uint8)
    if ch.on_error is not None: ch.on_error(e)
    self.released()
