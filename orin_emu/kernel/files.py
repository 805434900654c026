# Open files of the emulated kernel and the nvgpu ioctl dispatchers. Each open file is backed by a real fd (a tiny memfd), so fd
# numbers, close-on-exec and /proc/self/fd counts are the OS's own.
from __future__ import annotations
import ctypes, errno
from typing import TYPE_CHECKING
from orin_emu.kernel.memory import KernelError
from orin_emu.kernel.uapi import UAPI, structs, ioc_dir, ioc_nr, ioc_size, ioc_type, IOC_READ, IOC_WRITE
if TYPE_CHECKING: from orin_emu.kernel.core import Kernel

class NotEmulated(RuntimeError):
  """A request the real driver serves that this emulator does not: fail loudly rather than answer wrongly."""

class File:
  kind = "file"
  def __init__(self, k:Kernel): self.k, self.fd, self.ino = k, -1, 0
  def ioctl(self, req:int, arg:int) -> int: raise KernelError(errno.ENOTTY)   # no unlocked_ioctl
  def mmap(self, addr, size, prot, flags, off) -> int: raise KernelError(errno.ENODEV)   # no f_op->mmap
  def read(self, n:int) -> bytes: raise KernelError(errno.EINVAL)
  def write(self, data:bytes) -> int: raise KernelError(errno.EINVAL)
  def seek(self, off:int, whence:int) -> int: raise KernelError(errno.ESPIPE)
  def release(self): pass

def _arg_type(name:str):
  return getattr(structs, UAPI["ioctls"][name]["arg"], None)

class IoctlFile(File):
  """One nvgpu file type: its magic, the dispatcher's limits and the handlers by ioctl name. The nvgpu dispatchers (ioctl_ctrl.c
  gk20a_ctrl_dev_ioctl, ioctl_as.c gk20a_as_dev_ioctl, ioctl_tsg.c nvgpu_ioctl_tsg_dev_ioctl, ioctl_channel.c gk20a_channel_ioctl) all
  refuse a wrong magic, nr 0, nr above LAST or a size above the argument buffer with EINVAL, copy the argument in (EFAULT), run the
  case (ENOTTY without one) and copy the argument back only when it succeeded and the request has a read direction.
  A handler returns nothing, or the count of bytes its own copy_to_user could not write: the kernel returns that positive count as
  the ioctl's result (no errno), and copies nothing back."""
  MAGIC: str
  LAST: int = 0
  MAX_ARG: int = 0
  HANDLERS: dict[str, str] = {}
  ENOTTY: tuple[str, ...] = ()   # in the header but without a case in this kernel's dispatcher

  def ioctl(self, req:int, arg:int) -> int:
    if ioc_type(req) != ord(self.MAGIC) or ioc_nr(req) == 0 or ioc_nr(req) > self.LAST or ioc_size(req) > self.MAX_ARG:
      raise KernelError(errno.EINVAL)
    buf = bytearray(self.k.umem.read(arg, ioc_size(req)) if ioc_dir(req) & IOC_WRITE else ioc_size(req))
    return self.call(req, buf, arg)

  def call(self, req:int, buf:bytearray, arg:int) -> int:
    if (name:=self.handler_name(req)) is None: return self.unknown(req)
    self.k.faults.check_ioctl(name, req)
    st = _arg_type(name)
    if residue:=getattr(self, self.HANDLERS[name])(st.from_buffer(buf) if st is not None and len(buf) == ctypes.sizeof(st) else buf): return residue
    return self.copy_back(arg, bytes(buf)) if ioc_dir(req) & IOC_READ else 0

  def copy_back(self, arg:int, data:bytes) -> int:
    # ctrl, TSG and channel dispatchers: err = copy_to_user(...), so a fault returns the uncopied byte count, not an errno
    return self.k.umem.copy_to_user(arg, data)

  def handler_name(self, req:int) -> str|None:
    name = self.k.ioctl_names.get(req)
    if name is None or UAPI["ioctls"][name]["magic"] != self.MAGIC or name in self.ENOTTY: return None
    if name not in self.HANDLERS: raise NotEmulated(f"{name} (0x{req:08X}) is served by the real driver but not emulated")
    return name

  def unknown(self, req:int) -> int: raise KernelError(errno.ENOTTY)

def int_arg(buf:bytearray) -> int: return int.from_bytes(buf[:4], "little", signed=True)
