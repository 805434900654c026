# nvgpu's buddy allocator (common/mm/allocators/buddy_allocator.c) as the GPU VA space uses it: the range is carved into maximal
# power-of-two blocks relative to its base, free blocks sit in LIFO lists per order, an allocation takes the head of the smallest
# non-empty order list and keeps splitting the left half. This is what puts the first 4 KiB buffer at 0xFFFFA00000 and a large
# model's 512 MiB buffer at 0xFE00200000, as seen on an Orin (OBSERVED.md).
class Buddy:
  def __init__(self, base:int, size:int, blk:int=0x1000):
    self.base, self.end, self.blk, self.shift = base, base + size, blk, blk.bit_length() - 1
    self.max_order = (size >> self.shift).bit_length() - 1
    self.free: list[list[int]] = [[] for _ in range(self.max_order + 1)]   # head of each list is its last element
    self.free_set: set[tuple[int,int]] = set()
    self.split_set: set[tuple[int,int]] = set()
    self.alloced: dict[int,int] = {}
    self.fixed: dict[int,list[tuple[int,int]]] = {}
    self.roots: set[tuple[int,int]] = set()
    s = base
    while s < self.end:   # balloc_init_lists: largest block that fits the rest, so each is aligned relative to base
      o = min(((self.end - s) >> self.shift).bit_length() - 1, self.max_order)
      self.roots.add((s, o)); self._add(s, o); s += self.olen(o)

  def olen(self, o:int) -> int: return self.blk << o
  def order(self, size:int) -> int: return ((size - 1) >> self.shift).bit_length() if size > self.blk else 0
  def _add(self, s, o): self.free[o].append(s); self.free_set.add((s, o))
  def _rem(self, s, o): self.free[o].remove(s); self.free_set.discard((s, o))
  def _split(self, s, o):
    self._rem(s, o); self.split_set.add((s, o))
    self._add(s, o - 1); self._add(s + self.olen(o - 1), o - 1)   # left then right: right ends up at the head

  def _coalesce(self, s, o):
    if (s, o) in self.roots: return
    ps = self.base + ((s - self.base) & ~(self.olen(o + 1) - 1))
    bud = ps + self.olen(o) if s == ps else ps
    if (s, o) not in self.free_set or (bud, o) not in self.free_set: return
    self._rem(s, o); self._rem(bud, o); self.split_set.discard((ps, o + 1)); self._add(ps, o + 1)
    self._coalesce(ps, o + 1)

  def alloc(self, size:int) -> int|None:
    o = self.order(size)
    so = o
    while so <= self.max_order and not self.free[so]: so += 1
    if so > self.max_order: return None
    s = self.free[so][-1]
    while so != o: self._split(s, so); so -= 1
    self._rem(s, o); self.alloced[s] = o
    return s

  def _make_fixed(self, addr:int, o:int) -> tuple[int,int]|None:
    co, cs = o, addr
    while co <= self.max_order and (cs, co) not in self.free_set:
      co += 1; cs = self.base + ((addr - self.base) & ~(self.olen(co) - 1))
    if co > self.max_order: return None
    while (cs, co) != (addr, o):
      self._split(cs, co); co -= 1
      if addr >= cs + self.olen(co): cs += self.olen(co)
    return cs, co

  def alloc_fixed(self, base:int, size:int) -> int|None:
    if size <= 0 or base % self.blk or size % self.blk or base < self.base or base + size > self.end or base in self.fixed: return None
    rel, n = base - self.base, size >> self.shift
    o = (n.bit_length() - 1) if rel == 0 else min(((rel >> self.shift) & -(rel >> self.shift)).bit_length() - 1, n.bit_length() - 1)
    got, inc = [], rel
    while inc < rel + size:
      b = self._make_fixed(self.base + inc, o) if o <= self.max_order else None
      if b is None:
        for s, bo in reversed(got): self._add(s, bo); self._coalesce(s, bo)
        return None
      self._rem(*b); got.append(b)
      inc += self.olen(o)
      if (rem:=rel + size - inc) == 0: break
      o = ((inc >> self.shift) & -(inc >> self.shift)).bit_length() - 1
      if self.olen(o) > rem: o = min((rem >> self.shift).bit_length() - 1, self.max_order)
    self.fixed[base] = got
    return base

  def free_addr(self, addr:int):
    if (got:=self.fixed.pop(addr, None)) is not None:
      for s, o in reversed(got): self._add(s, o); self._coalesce(s, o)
    elif (o:=self.alloced.pop(addr, None)) is not None: self._add(addr, o); self._coalesce(addr, o)
