# Nothing may be mapped inside the shared/local memory windows: the SM takes any access there for shared/local memory.
from tinygrad.device import BufferSpec

WINDOW = 1 << 30   # what TegraIface reserves for each window

def overlaps(a, asz, b, bsz): return a < b + bsz and b < a + asz

def test_windows_are_inside_the_va_space_and_apart(dev):
  win, sz = dev.iface.mem_windows, WINDOW
  assert (dev.shared_mem_window, dev.local_mem_window) == win and all(w + sz <= 1 << 40 for w in win) and not overlaps(win[0], sz, win[1], sz)

def test_large_buffer_skips_the_windows(dev):
  # VAs are handed out top-down from 1 TiB - 2 MiB: 7 GiB reaches down into the shared window at 0xfe00000000 unless it is reserved.
  buf = dev.allocator.alloc(7 << 30, BufferSpec(nolru=True))
  try:
    for w in dev.iface.mem_windows: assert not overlaps(buf.va_addr, buf.size, w, WINDOW), f"buffer at {buf.va_addr:#x}"
  finally: dev.allocator.free(buf, 7 << 30, BufferSpec(nolru=True))
