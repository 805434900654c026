# Semaphore memory operations shared by the host class, the copy engine, inline-to-memory and QMD releases.
from orin_emu.gpu import mem as M

class Stall(Exception):
  """an acquire whose condition does not hold yet: the channel parks on this method and retries it later"""

def bits(v:int, hi:int, lo:int) -> int: return (v >> lo) & ((1 << (hi - lo + 1)) - 1)

def acquire_ok(op:str, cur:int, want:int, size:int) -> bool:
  mask = (1 << (8*size)) - 1
  if op == "eq": return cur == want
  if op == "strict_geq": return cur >= want
  if op == "circ_geq": return ((cur - want) & mask) < (1 << (8*size - 1))   # wrap-aware: (signed)(cur - want) >= 0
  if op == "and": return (cur & want) != 0
  if op == "nor": return (~(cur | want) & mask) != 0
  raise AssertionError(op)

def release(mem, va:int, payload:int, size:int, timestamp:int|None, client:str):
  """payload of size bytes at va; a timestamped (four-word) release also writes a zero upper word for 32-bit payloads and the
  GPU time at va+8"""
  M.write_int(mem, va, size, payload, client)
  if timestamp is not None:
    if size == 4: M.write_int(mem, va + 4, 4, 0, client)
    M.write_int(mem, va + 8, 8, timestamp, client)

REDUCE = {"min": min, "max": max, "xor": lambda a, b: a ^ b, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "add": lambda a, b: a + b,
          "inc": lambda a, b: 0 if a >= b else a + 1, "dec": lambda a, b: b if a == 0 or a > b else a - 1}

def reduce(mem, va:int, op:str, operand:int, size:int, signed:bool, client:str):
  cur, w = M.read_int(mem, va, size, client), 8*size
  sx = (lambda x: x - (1 << w) if signed and x >> (w - 1) else x)
  M.write_int(mem, va, size, REDUCE[op](sx(cur), sx(operand)) if op in ("min", "max") else REDUCE[op](cur, operand), client)
