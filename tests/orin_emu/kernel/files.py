# Open files of the emulated kernel and the ioctl dispatchers (tegra-facts.md §2.2). Each open file is backed by a real fd (a tiny
# memfd), so fd numbers, close-on-exec and /proc/self/fd counts are the OS's own.
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
  """One nvgpu/nvmap file type: its magic, the dispatcher's limits and the handlers by ioctl name."""
  MAGIC: str
  LAST: int = 0
  MAX_ARG: int = 0
  HANDLERS: dict[str, str] = {}
  ENOTTY: tuple[str, ...] = ()   # in the header but without a case in this kernel's dispatcher

  def ioctl(self, req:int, arg:int) -> int:
    if ioc_type(req) != ord(self.MAGIC) or ioc_nr(req) == 0 or ioc_nr(req) > self.LAST or ioc_size(req) > self.MAX_ARG:
      raise KernelError(errno.EINVAL)
    buf = bytearray(self.k.umem.read(arg, ioc_size(req)) if ioc_dir(req) & IOC_WRITE else ioc_size(req))
    return self.call(req, buf, write_back=lambda: ioc_dir(req) & IOC_READ and self.k.umem.write(arg, bytes(buf)))

  def call(self, req:int, buf:bytearray, write_back) -> int:
    if (name:=self.handler_name(req)) is None: return self.unknown(req)
    self.k.faults.check_ioctl(name, req)
    st = _arg_type(name)
    getattr(self, self.HANDLERS[name])(st.from_buffer(buf) if st is not None and len(buf) == ctypes.sizeof(st) else buf)
    write_back()   # outputs reach the caller only when the ioctl succeeded
    return 0

  def handler_name(self, req:int) -> str|None:
    name = self.k.ioctl_names.get(req)
    if name is None or UAPI["ioctls"][name]["magic"] != self.MAGIC or name in self.ENOTTY: return None
    if name not in self.HANDLERS: raise NotEmulated(f"{name} (0x{req:08X}) is served by the real driver but not emulated")
    return name

  def unknown(self, req:int) -> int: raise KernelError(errno.ENOTTY)

def int_arg(buf:bytearray) -> int: return int.from_bytes(buf[:4], "little", signed=True)
