# Emulated DRAM and the process's user memory. DRAM is one sparse memfd: a buffer is a page range of it, so the GPU's view
# (numpy over the emulator's own mapping) and every CPU mmap of a dma-buf (the same memfd range mapped again) are the same pages,
# and the emulator holds one fd in all instead of one per buffer (RLIMIT_NOFILE pressure stays what the real kernel gives).
import ctypes, ctypes.util, errno, mmap, os, numpy as np

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64]
libc.munmap.restype, libc.munmap.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
libc.fallocate.restype, libc.fallocate.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
libc.madvise.restype, libc.madvise.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
MAP_FAILED, MAP_NORESERVE, FALLOC_PUNCH, MADV_DONTFORK = 0xFFFFFFFFFFFFFFFF, 0x4000, 0x3, 10   # FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE
PAGE = 0x1000

class KernelError(Exception):
  """A syscall failing with an errno, as the kernel returns it; the seam turns it into OSError."""
  def __init__(self, err:int, why:str=""): super().__init__(err, why or os.strerror(err)); self.errno = err

def sys_mmap(addr, size, prot, flags, fd, off) -> int:
  if (x:=libc.mmap(addr, size, prot, flags, fd, off)) in (None, MAP_FAILED): raise KernelError(ctypes.get_errno())
  # VM_DONTCOPY, as gk20a_ctrl_dev_mmap (usermode page) and __nvmap_map (dma-buf) set it: a forked child does not get the mapping
  if libc.madvise(x, size, MADV_DONTFORK) != 0: err = ctypes.get_errno(); libc.munmap(x, size); raise KernelError(err)
  return x

def view(addr:int, n:int) -> np.ndarray: return np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(addr)) if n else np.zeros(0, np.uint8)

class SharedPages:
  """A memfd and the emulator's own mapping of it (the GPU's side: not in a forked child, like every mapping here)."""
  def __init__(self, name:str, size:int):
    self.fd, self.size = os.memfd_create(name, os.MFD_CLOEXEC), size
    os.ftruncate(self.fd, size)
    self.ino = os.fstat(self.fd).st_ino
    self.base = sys_mmap(None, size, mmap.PROT_READ|mmap.PROT_WRITE, mmap.MAP_SHARED|MAP_NORESERVE, self.fd, 0)
  def view(self, off:int, n:int) -> np.ndarray: return view(self.base + off, n)
  def map_into(self, addr, size, prot, flags, off) -> int: return sys_mmap(addr, size, prot, flags, self.fd, off)

class Dram(SharedPages):
  def __init__(self, size:int):
    super().__init__("orin-emu-dram", size)
    self.holes: list[tuple[int,int]] = [(0, size)]   # sorted free physical ranges
    self.used = 0
  def alloc(self, size:int, align:int=PAGE) -> int|None:
    for i, (s, n) in enumerate(self.holes):
      a = (s + align - 1) // align * align
      if a + size <= s + n:
        self.holes[i:i+1] = [h for h in ((s, a - s), (a + size, s + n - a - size)) if h[1]]
        self.used += size
        return a
    return None
  def free(self, phys:int, size:int):
    libc.fallocate(self.fd, FALLOC_PUNCH, phys, size)   # give the pages back: reads as zeros when reused, like freshly cleared pages
    self.used -= size
    self.holes.append((phys, size)); self.holes.sort()
    merged: list[tuple[int,int]] = []
    for s, n in self.holes:
      if merged and merged[-1][0] + merged[-1][1] == s: merged[-1] = (merged[-1][0], merged[-1][1] + n)
      else: merged.append((s, n))
    self.holes = merged

class _Iovec(ctypes.Structure): _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
for _f in (libc.process_vm_readv, libc.process_vm_writev):
  _f.restype = ctypes.c_ssize_t
  _f.argtypes = [ctypes.c_int, ctypes.POINTER(_Iovec), ctypes.c_ulong, ctypes.POINTER(_Iovec), ctypes.c_ulong, ctypes.c_ulong]

class UserMemory:
  """copy_from_user/copy_to_user on the process's own memory through process_vm_readv/writev, which honour page protections as the
  kernel's uaccess does: an unmapped page, a read-only page (for writes) or a PROT_NONE page faults there instead of crashing."""
  @staticmethod
  def _copy(fn, addr:int, buf:int, n:int) -> int:
    """bytes moved between [buf, buf+n) and [addr, addr+n) before the first faulting page"""
    if addr <= 0 or addr + n > 1 << 64: return 0
    done, a, end = 0, addr, addr + n
    while a < end:   # IOV_MAX remote segments (pages) a call; a partial transfer stops at a segment boundary
      chunk = []
      while a < end and len(chunk) < 1024: chunk.append(_Iovec(a, l:=min(end - a, PAGE - a % PAGE))); a += l
      local = _Iovec(buf + done, want:=sum(v.len for v in chunk))
      done += max(got:=fn(os.getpid(), ctypes.byref(local), 1, (_Iovec * len(chunk))(*chunk), len(chunk), 0), 0)
      if got != want: break
    return done
  def read(self, addr:int, n:int) -> bytes:
    parts, done = [], 0
    while done < n:   # 4 MiB at a time: a length no mapping covers fails at its first unmapped page, not by allocating all of it
      buf = np.empty(k:=min(n - done, 4 << 20), np.uint8)
      if self._copy(libc.process_vm_readv, addr + done, buf.ctypes.data, k) != k: raise KernelError(errno.EFAULT)
      parts.append(buf.tobytes()); done += k
    return b"".join(parts)
  def write(self, addr:int, data:bytes):
    if self.copy_to_user(addr, data): raise KernelError(errno.EFAULT)
  def copy_to_user(self, addr:int, data:bytes) -> int:
    """The kernel's copy_to_user: the bytes up to the first unwritable page are written, the count of bytes NOT written is returned."""
    if not data: return 0
    buf = np.frombuffer(bytes(data), np.uint8)
    return len(data) - self._copy(libc.process_vm_writev, addr, buf.ctypes.data, len(data))

def file_mappings(ino:int) -> list[tuple[int,int,int]]:
  """(start, end, file offset) of this process's mappings of the file with inode ino, from /proc/self/maps."""
  out = []
  with open("/proc/self/maps") as f:
    for line in f:
      p = line.split(maxsplit=5)
      if len(p) >= 5 and p[4] == str(ino):
        s, e = p[0].split("-")
        out.append((int(s, 16), int(e, 16), int(p[2], 16)))
  return out

def user_vmas() -> list[tuple[int,int,str,int]]:
  """(start, end, permissions, inode) of this process's VMAs in address order, from /proc/self/maps; x86's [vsyscall] is a gate page,
  not a VMA."""
  with open("/proc/self/maps") as f: rows = [line.split(maxsplit=5) for line in f]
  return [(int((r:=p[0].split("-"))[0], 16), int(r[1], 16), p[1], int(p[4])) for p in rows if not (len(p) == 6 and p[5].strip() == "[vsyscall]")]
