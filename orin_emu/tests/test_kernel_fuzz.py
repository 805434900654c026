# Any request with any argument bytes gets the driver's kind of answer (success or an errno), never a crash inside the emulator:
# every known request on the file of its magic, with payloads of zeros, random bytes, and words drawn from values that reach
# deep into the handlers (the test's own fds and handles, small numbers, page sizes, the window addresses).
import errno, random, struct
from orin_emu.kernel import NotEmulated, MachineFrozen
from orin_emu.kernel.uapi import UAPI
from tegra_conformance.tegra import PAGE, WC, SHARED_WINDOW

def payloads(rng:random.Random, words:list[int], n:int):
  yield bytes(1024)
  for _ in range(n):
    kind = rng.random()
    if kind < 0.2: yield rng.randbytes(1024)
    else: yield b"".join(struct.pack("<I", rng.choice(words) if rng.random() < 0.7 else rng.getrandbits(32)) for _ in range(256))

def test_every_request_with_garbage_fails_cleanly(k, orin):
  as_, tsg = orin.alloc_as(), orin.open_tsg()
  veid = orin.subcontext(tsg, as_)
  bound, _, ring, userd = orin.channel(as_, tsg, veid)
  h, buf = orin.buffer(PAGE, WC)
  files = {"N": [orin.nvmap], "G": [orin.ctrl], "A": [as_], "T": [tsg], "H": [orin.open_channel(), bound]}
  words = [0, 1, 2, 3, 4, 8, 0xA, 16, 1024, PAGE, 0x2000, 0xFFFFFFFF, h, buf.fd, ring.fd, userd.fd, as_.fd, bound.fd, veid, 0xC7C0, 0xC7B5,
           SHARED_WINDOW & 0xFFFFFFFF, SHARED_WINDOW >> 32, 1 << 30]
  rng, outcomes = random.Random(4), {"ok": 0, "errno": 0}
  for name, js in sorted(UAPI["ioctls"].items()):
    for f in files[js["magic"]]:
      for data in payloads(rng, words, 40):
        try: f.ioctl(int(js["request"], 16), bytearray(data)); outcomes["ok"] += 1
        except OSError as e: assert e.errno in errno.errorcode, name; outcomes["errno"] += 1
        except (NotEmulated, MachineFrozen, NotImplementedError): pass
  assert outcomes["ok"] > 100 and outcomes["errno"] > 100, outcomes   # both paths were exercised
  k.counts()   # and the bookkeeping survived it
