# The non-ioctl nodes a Jetson user-space backend and its log checker read: /dev/kmsg, devfreq sysfs, and directory listings.
from __future__ import annotations
import errno, os, time
from orin_emu.kernel.files import File, KernelError
from orin_emu.kernel.klog import kmsg_record

IGPU0 = "/dev/nvgpu/igpu0"
IGPU0_NODES = ["as", "channel", "ctrl", "ctxsw", "dbg", "nvsched", "power", "prof", "sched", "tsg"]
DEVFREQ = "/sys/class/devfreq/17000000.gpu"
DEVFREQ_LINK = "../../devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu"   # sysfs class entries are links (target unconfirmed)
# the Orin GPU's devfreq table: a ladder up to GET_CHARACTERISTICS' max_freq, an assumption (OBSERVED.md)
FREQS = [306000000, 408000000, 510000000, 612000000, 714000000, 816000000, 918000000, 1020000000, 1122000000, 1224000000, 1300000000]

class DevFreq:
  def __init__(self):
    self.min, self.max, self.cur, self.governor = FREQS[0], FREQS[-1], FREQS[0], "nvhost_podgov"
  def attrs(self) -> dict[str, str]:
    return {"available_frequencies": " ".join(map(str, FREQS)),
            "available_governors": "wmark_active nvhost_podgov userspace performance simple_ondemand",
            "cur_freq": str(self.cur), "target_freq": str(self.cur), "min_freq": str(self.min), "max_freq": str(self.max), "governor": self.governor,
            "polling_interval": "0"}
  WRITABLE = {"min_freq", "max_freq", "governor", "polling_interval"}

class SysfsFile(File):
  """A devfreq attribute: read gives the value and a newline; writes (root only, mode 0644) set it."""
  kind = "sysfs"
  def __init__(self, k, attr:str): super().__init__(k); self.attr, self.pos = attr, 0
  def read(self, n:int) -> bytes:
    data = (self.k.devfreq.attrs()[self.attr] + "\n").encode()[self.pos:self.pos + n]
    self.pos += len(data)
    return data
  def seek(self, off:int, whence:int) -> int: self.pos = off; return off
  def write(self, data:bytes) -> int:
    df, v = self.k.devfreq, data.decode().strip()
    if self.attr == "governor": df.governor = v
    elif self.attr in ("min_freq", "max_freq"):
      if not v.isdigit(): raise KernelError(errno.EINVAL)
      setattr(df, self.attr[:3], int(v)); df.cur = min(max(df.cur, df.min), df.max)
    return len(data)

class KmsgFile(File):
  """/dev/kmsg: each read() returns one record; EAGAIN at the end when opened O_NONBLOCK; seek only to 0 (start) or SEEK_END."""
  kind = "kmsg"
  def __init__(self, k, nonblock:bool): super().__init__(k); self.seq, self.off, self.nonblock = 0, 0, nonblock
  def read(self, n:int) -> bytes:
    while (got:=self.k.klog.read_at(self.off)) is None:
      if self.nonblock: raise KernelError(errno.EAGAIN)
      time.sleep(0.05)   # a blocking read waits for the next message, as on the device
    rec = kmsg_record(self.seq, *got[0])
    if len(rec) > n: raise KernelError(errno.EINVAL)
    self.seq, self.off = self.seq + 1, got[1]
    return rec
  def write(self, data:bytes) -> int:
    # devkmsg_write: '<N>' sets the level; the facility defaults to LOG_USER (1)
    text, prio = data.decode(errors="replace").rstrip("\n"), 8 + 4
    if text.startswith("<") and (end:=text.find(">")) > 1 and text[1:end].isdigit(): prio, text = int(text[1:end]), text[end + 1:]
    self.k.klog(text, prio)
    return len(data)
  def seek(self, off:int, whence:int) -> int:
    if off: raise KernelError(errno.ESPIPE)
    self.seq, self.off = self.k.klog.end() if whence == os.SEEK_END else (0, 0)
    return 0

class DirFile(File):
  """An open emulated directory: only its fd (FileIOInterface.listdir goes by path)."""
  kind = "dir"
