# The kernel log in the real formats (nvgpu os/linux/log.c, nvmap's pr_fmt per file) and /dev/kmsg semantics. Records go to one
# append-only file shared with child processes (ORIN_EMU_KMSG), so a log checker sees every emulated process's messages, as one
# kernel's log on a Jetson.
import atexit, os, pathlib, tempfile, time, threading
GPU_NAME = "17000000.gpu"
LEVELS = {"ERR": 3, "WRN": 4, "INFO": 6, "DBG": 7}

def nvgpu_line(func:str, line:int, level:str, msg:str) -> str:
  """nvgpu log.c: 'nvgpu: <gpu> <func %33s>:<line %-4d> [<LVL>]  <msg>', the message cut to 159 characters. Where the source line
  of an emulated message is not known (most of them), line is 0: checkers match on function and message, never on the line."""
  return f"nvgpu: {GPU_NAME} {func:>33}:{line:<4d} [{level}]  {msg[:159]}"
def nvmap_line(func:str, msg:str) -> str: return f"nvmap: {func}() {msg}"

PREFIX = "orin-emu-kmsg-"   # then the owner's pid: orin-emu-kmsg-<pid>-<random>.log in the temp folder

def alive(pid:int) -> bool:
  try: os.kill(pid, 0)
  except ProcessLookupError: return False
  except PermissionError: pass   # another user's process
  return True

def remove_stale_logs():
  """Logs whose owner died without running its atexit (killed): the next machine to boot removes them. A reused pid only delays it."""
  for p in pathlib.Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*.log"):
    if (pid:=p.name[len(PREFIX):].split("-")[0]).isdigit() and not alive(int(pid)):
      try: p.unlink(missing_ok=True)
      except OSError: pass   # another user's log in a sticky /tmp: theirs to remove

class KernelLog:
  def __init__(self, path:str|None=None):
    if path is None and (path:=os.environ.get("ORIN_EMU_KMSG")) is None:
      remove_stale_logs()
      fd, path = tempfile.mkstemp(prefix=f"{PREFIX}{os.getpid()}-", suffix=".log")
      os.close(fd)
      os.environ["ORIN_EMU_KMSG"] = path   # children (BEAM workers, subprocess tests) append to the same log
      atexit.register(lambda pid=os.getpid(): os.getpid() == pid and os.path.exists(path) and os.unlink(path))   # the machine goes with its owner
    self.path, self.lock = path, threading.Lock()
  def __call__(self, line:str, prio:int|None=None):
    """The GPU-room interface's log sink: one fully formatted line; the priority comes from the nvgpu level tag (pr_err/pr_warn/
    pr_info), else warning."""
    if prio is None: prio = next((p for tag, p in LEVELS.items() if f"[{tag}]" in line[:80]), 4)
    rec = "".join(f"{prio},{time.monotonic_ns() // 1000},{os.getpid()};{ln}\n" for ln in line.split("\n"))
    with self.lock, open(self.path, "a") as f: f.write(rec)   # one O_APPEND write per call: records of processes never interleave
  def nvgpu(self, func:str, line:int, level:str, msg:str): self(nvgpu_line(func, line, level, msg))
  def nvmap(self, func:str, msg:str, prio:int=3): self(nvmap_line(func, msg), prio)
  def records(self, start:int=0) -> list[tuple[int,int,int,str]]:
    """(seq, prio, usec, text) from record number start on."""
    try:
      with open(self.path) as f: lines = f.read().splitlines()
    except FileNotFoundError: return []
    return [(seq, *parse(ln)) for seq, ln in enumerate(lines[start:], start)]
  def read_at(self, offset:int) -> tuple[tuple[int,int,str], int]|None:
    """The record starting at byte offset of the log and the offset after it, or None at the end (a reader's cursor)."""
    with open(self.path, "rb") as f:
      f.seek(offset)
      if not (ln:=f.readline()).endswith(b"\n"): return None
    return parse(ln.decode().rstrip("\n")), offset + len(ln)
  def end(self) -> tuple[int, int]:
    """(records, bytes) in the log now: where a reader seeking to the end continues."""
    with open(self.path, "rb") as f: data = f.read()
    return data.count(b"\n"), len(data)
  def lines(self) -> list[str]: return [r[3] for r in self.records()]

def parse(ln:str) -> tuple[int,int,str]:
  head, _, text = ln.partition(";")
  prio, usec, _pid = head.split(",")
  return int(prio), int(usec), text

def kmsg_record(seq:int, prio:int, usec:int, text:str) -> bytes:
  """One read() of /dev/kmsg: '<prio>,<seq>,<usec>,<flags>;<text>\\n' (Documentation/ABI/testing/dev-kmsg)."""
  return f"{prio},{seq},{usec},-;{text}\n".encode()
