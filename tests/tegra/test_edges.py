# Edge cases on the Orin: VA bound, shapes, dtypes, GPFIFO wrap-around, memory pressure, free correctness, big grids.
import os, numpy as np, pytest
from tinygrad import Tensor, dtypes
from tinygrad.device import BufferSpec
from tegra_kernel import emu_kernel, run_child

def test_every_buffer_below_40_bits(dev):
  bufs = [dev.allocator.alloc(sz, BufferSpec(nolru=True)) for sz in (1, 4096, 1 << 20, 9 << 20)]
  assert all(b.va_addr + b.size <= 1 << 40 for b in bufs)
  for b in bufs: dev.allocator.free(b, b.size, BufferSpec(nolru=True))

@pytest.mark.parametrize("shape", [(0,), (1,), (0, 3), (1, 1), (7,), (13, 5), (3, 1, 17)])
def test_zero_one_and_odd_shapes(dev, shape):
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  np.testing.assert_equal((Tensor(x, device="NV") * 2 + 1).numpy(), x * 2 + 1)

@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (17, 31, 13), (64, 48, 80)])
def test_non_power_of_two_matmul(dev, m, k, n):
  rng = np.random.default_rng(m * k * n)
  a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
  np.testing.assert_allclose((Tensor(a, device="NV") @ Tensor(b, device="NV")).numpy(), a @ b, rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("dt", [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64,
                                dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64])
def test_dtype_roundtrip_and_add(dev, dt):
  x = Tensor([0, 1, 2, 3, 100], device="NV").cast(dt)
  np.testing.assert_equal((x + x).cast(dtypes.float32).numpy(), (Tensor([0, 1, 2, 3, 100]).cast(dt) + Tensor([0, 1, 2, 3, 100]).cast(dt))
                          .cast(dtypes.float32).to("CPU").numpy())

def test_gpfifo_wraps_around(dev):
  # every submission takes one ring entry: go past the end of the ring and keep getting correct results
  entries, gpfifo = dev.compute_gpfifo.entries_count, dev.compute_gpfifo
  start = gpfifo.put_value
  while gpfifo.put_value - start < entries + 16:
    dev.hw_compute_queue_t().signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
    if gpfifo.put_value % 1024 == 0: dev.synchronize()   # never more than the ring in flight
  dev.synchronize()
  assert gpfifo.put_value // entries > start // entries
  np.testing.assert_equal((Tensor([1., 2.], device="NV") + 1).numpy(), [2., 3.])

def test_memory_pressure_raises_memoryerror_and_recovers(dev):
  if os.environ.get("ORIN_EMU") != "1": pytest.skip("fills the board's memory; run on the emulated Orin")
  bufs, size = [], 1 << 30
  with pytest.raises(MemoryError):
    for _ in range(1024): bufs.append(dev.allocator.alloc(size, BufferSpec(nolru=True)))
  assert bufs, "at least one 1 GiB buffer fits"
  for b in bufs: dev.allocator.free(b, size, BufferSpec(nolru=True))
  np.testing.assert_equal((Tensor([1., 2.], device="NV") * 3).numpy(), [3., 6.])

def test_tensors_past_the_memory_raise_memoryerror_and_recover(dev):
  if (k:=emu_kernel()) is None: pytest.skip("fills the board's memory; run on the emulated Orin")
  r = run_child(f"""
    from tinygrad import Tensor
    gb = {k.dram.size * 5 // 8 >> 30}   # one such tensor fits, two do not; never written, so the host's memory stays free
    a, b = Tensor.empty(gb << 28, device="NV"), Tensor.empty(gb << 28, device="NV")
    print("A", (a[:2] + 1).tolist())
    try: print((b[:2] + 2).tolist())
    except MemoryError as e: print("RAISED", e)
    del a
    print("B", (b[:2] + 2).tolist())
  """)
  gb = k.dram.size * 5 // 8 >> 30
  assert r.stdout.splitlines() == ["A [1.0, 1.0]", f"RAISED Allocation of {gb}.00 GB failed on NV. Used: {gb}.00 GB", "B [2.0, 2.0]"], \
    r.stdout + r.stderr[-2000:]
  assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]

def test_freed_memory_is_not_read_back(dev):
  a = Tensor.full((1024,), 7.0, device="NV").contiguous().realize()
  del a
  b = Tensor.empty(1024, device="NV").assign(Tensor.full((1024,), 3.0, device="NV")).realize()
  np.testing.assert_equal(b.numpy(), np.full(1024, 3.0, np.float32))

def test_large_grid_launch(dev):
  n = 1 << 20   # enough blocks to need a large grid dimension
  np.testing.assert_equal((Tensor.ones(n, device="NV").contiguous() * 2).sum().item(), 2.0 * n)
