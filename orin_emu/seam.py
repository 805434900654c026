# The seam: tinygrad's FileIOInterface (runtime/support/hcq.py) with emulated paths, and the fds they and their ioctls hand out,
# served by the emulated Orin's kernel; every other path and fd goes to the real OS through the base class untouched.
# Failures look exactly like the real calls': fcntl.ioctl's OSError(errno), the base _mmap's "Failed to mmap ..." OSError.
import ctypes, errno, os
from orin_emu.kernel import kernel, KernelError, NotEmulated

IOCTL_BUFSZ = 1024   # fcntl.ioctl copies buffer arguments through a buffer of this size
EXTRA_ENTRIES = {"/dev": ["kmsg", "nvgpu", "nvmap"], "/sys/class": ["devfreq"]}

def _oserror(e:KernelError, path:str|None=None) -> OSError:
  return OSError(e.errno, os.strerror(e.errno), path) if path is not None else OSError(e.errno, os.strerror(e.errno))

def ioctl(fd:int, request:int, arg) -> int|bytes:
  """fcntl.ioctl's argument handling over the emulated kernel: an int is passed by value (C int range), a buffer through a copy that
  is written back into a mutable buffer (return value: the ioctl's) or returned as bytes for an immutable one."""
  if isinstance(arg, int):
    if not -2**31 <= arg < 2**31: raise OverflowError("signed integer is greater than maximum" if arg > 0 else "signed integer is less than minimum")
    return _call(lambda: kernel().ioctl(fd, request, arg & 0xFFFFFFFFFFFFFFFF))
  mv = memoryview(arg.encode() if isinstance(arg, str) else arg).cast("B")
  if mv.readonly and mv.nbytes > IOCTL_BUFSZ: raise ValueError("ioctl string arg too long")
  tmp = ctypes.create_string_buffer(bytes(mv), max(mv.nbytes, IOCTL_BUFSZ))
  try: ret = _call(lambda: kernel().ioctl(fd, request, ctypes.addressof(tmp)))
  finally:
    if not mv.readonly: mv[:] = tmp.raw[:mv.nbytes]   # fcntl copies back before it checks the result: what the kernel wrote shows
  return tmp.raw[:mv.nbytes] if mv.readonly else ret

def _not_inherited(fd:int):
  if kernel().inherited_file(fd):
    raise NotEmulated(f"fd {fd} is an nvgpu/nvmap file opened before fork(): the real driver would serve it on the parent's objects")

def _call(fn):
  try: return fn()
  except KernelError as e: raise _oserror(e) from None

def _buffered_read(fd:int, size:int|None):
  # what open(fd, "rb").read(size) does on top of read(2): raw reads of 8 KiB until size is reached, EOF, or EAGAIN (None if nothing came)
  out, n = [], 0
  while size is None or n < size:
    try: chunk = kernel().read(fd, 8192)
    except KernelError as e:
      if e.errno == errno.EAGAIN: return b"".join(out) or None
      raise _oserror(e) from None
    if not chunk: break
    out.append(chunk); n += len(chunk)
  return b"".join(out) if size is None else b"".join(out)[:size]

def emulated(base:type) -> type:
  class EmuFileIOInterface(base):
    def __init__(self, path:str="", flags:int=os.O_RDONLY, fd:int|None=None):
      if fd is None and kernel().routes(path):
        self.path = path
        try: self.fd = kernel().open(path, flags)
        except KernelError as e: raise _oserror(e, path) from None
      else: super().__init__(path, flags, fd)
    def __del__(self):
      if hasattr(self, "fd") and kernel().owns(self.fd): kernel().close(self.fd)
      else: super().__del__()
    def ioctl(self, request, arg):
      if kernel().owns(self.fd): return ioctl(self.fd, request, arg)
      _not_inherited(self.fd)
      return super().ioctl(request, arg)
    def mmap(self, start, sz, prot, flags, offset): return EmuFileIOInterface._mmap(start, sz, prot, flags, self.fd, offset)
    @staticmethod
    def _mmap(start, sz, prot, flags, fd, offset):
      if not kernel().owns(fd):
        _not_inherited(fd)
        return base._mmap(start, sz, prot, flags, fd, offset)
      try: return kernel().mmap(fd, start, sz, prot, flags, offset)
      except KernelError as e: raise OSError(f"Failed to mmap {sz} bytes at {hex(start)}: {os.strerror(e.errno)}") from None
    def read(self, size=None, binary=False, offset=None):
      if not kernel().owns(self.fd): return super().read(size, binary, offset)
      if offset is not None: self.seek(offset)
      data = _buffered_read(self.fd, size)
      if binary: return data
      if data is None: raise TypeError("can't concat NoneType to bytes")   # what text mode does on an empty non-blocking file
      return data.decode()
    def write(self, content, binary=False, offset=None):
      if not kernel().owns(self.fd): return super().write(content, binary, offset)
      if offset is not None: self.seek(offset)
      _call(lambda: kernel().write(self.fd, content if binary else content.encode()))
    def listdir(self):
      if kernel().routes(self.path): return _call(lambda: kernel().listdir(self.path))
      return (real:=super().listdir()) + [e for e in EXTRA_ENTRIES.get(os.path.normpath(self.path), []) if e not in real]
    def seek(self, offset):
      if kernel().owns(self.fd): _call(lambda: kernel().seek(self.fd, offset))
      else: super().seek(offset)
    @staticmethod
    def munmap(buf, sz):
      ret = base.munmap(buf, sz)
      kernel().munmapped()   # buffers kept alive only by this CPU mapping are released now
      return ret
    @staticmethod
    def exists(path): return kernel().routes(path) or base.exists(path)
    @staticmethod
    def readlink(path): return _call(lambda: kernel().readlink(path)) if kernel().routes(path) else base.readlink(path)
  EmuFileIOInterface.__qualname__ = EmuFileIOInterface.__name__ = "FileIOInterface"
  return EmuFileIOInterface
