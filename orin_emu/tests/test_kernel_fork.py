# What fork() does to a process that uses the Orin: the child keeps the fds (the same open files), but not the mappings of the usermode
# page (gk20a_ctrl_dev_mmap) or of dma-bufs (__nvmap_map): both are VM_DONTCOPY. The real driver would serve the child's requests on
# the inherited files against the parent's objects; those live in the parent's emulator, so the child's emulator refuses them loudly.
import mmap, os, pytest
from orin_emu.kernel import NotEmulated
from tegra_conformance.tegra import PAGE

def in_child(fn) -> str:
  """fn() in a forked child; what it returned (a short string) or raised, as text."""
  r, w = os.pipe()
  if (pid:=os.fork()) == 0:
    os.close(r)
    try: out = str(fn())
    except BaseException as e: out = f"{type(e).__name__}: {e}"
    os.write(w, out.encode()); os._exit(0)
  os.close(w)
  with os.fdopen(r) as f: out = f.read()
  assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
  return out

def mapped(addr:int) -> bool:
  with open("/proc/self/maps") as f: return any(int((r:=ln.split()[0].split("-"))[0], 16) <= addr < int(r[1], 16) for ln in f)

def test_child_has_no_dmabuf_or_usermode_mappings(k, orin):
  _, buf = orin.buffer(PAGE)
  cpu = orin.cpu_map(buf, PAGE)
  usermode = orin.ctrl.mmap(0, 0x10000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)
  assert mapped(cpu) and mapped(usermode)
  assert in_child(lambda: (mapped(cpu), mapped(usermode), mapped(k.dram.base))) == "(False, False, False)"

@pytest.mark.parametrize("what", ["ioctl", "mmap"])
def test_child_requests_on_inherited_files_are_refused(k, orin, what):
  _, buf = orin.buffer(PAGE)
  call = {"ioctl": orin.characteristics, "mmap": lambda: orin.cpu_map(buf, PAGE)}[what]
  assert in_child(call).startswith(f"{NotEmulated.__name__}: fd ") and "opened before fork()" in in_child(call)

def test_child_boots_its_own_orin(k, orin):
  def child():
    c, _ = type(orin)().characteristics()   # files the child opened itself, on its own machine
    return bytes(c.chipname).rstrip(b"\0").decode()
  assert in_child(child) == "ga10b"
