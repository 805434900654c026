# Stress on the Orin. TEGRA_STRESS scales the lengths: 1 (default) is CI-short, a Jetson run uses e.g. TEGRA_STRESS=100.
import os, numpy as np
from tinygrad import Tensor, TinyJit
from tinygrad.device import BufferSpec

SCALE = max(1, int(os.environ.get("TEGRA_STRESS", "1")))

def test_many_kernels(dev):
  x = Tensor.zeros(64, device="NV").contiguous().realize()
  for _ in range(100 * SCALE): x.assign(x + 1).realize()
  np.testing.assert_equal(x.numpy(), np.full(64, 100 * SCALE, np.float32))

def test_signal_chain_across_queues(dev):
  # compute and copy queues hand a signal back and forth; the last value only arrives if every link fired in order
  sig = dev.new_signal(value=0)
  for i in range(50 * SCALE):
    q = dev.hw_compute_queue_t() if i % 2 == 0 else dev.hw_copy_queue_t()
    q.wait(sig, i).signal(sig, i + 1).submit(dev)
  sig.wait(50 * SCALE)

def test_sustained_matmul(dev):
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
  ta, tb = Tensor(a, device="NV"), Tensor(b, device="NV")
  for _ in range(5 * SCALE): np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-4, atol=1e-4)

def test_mixed_compute_and_copy(dev):
  for i in range(10 * SCALE):
    host = np.full(4096, i, np.float32)
    t = Tensor(host, device="NV")
    u = (t * 2).realize()
    v = t.to("CPU").numpy()
    np.testing.assert_equal(u.numpy(), host * 2)
    np.testing.assert_equal(v, host)

def test_jit_replay_backpressure(dev):
  # many replays queued without reading back: the CPU runs ahead of the GPU
  @TinyJit
  def step(x): return (x + 1).realize()
  x = Tensor.zeros(256, device="NV").contiguous().realize()
  for _ in range(200 * SCALE): x = step(x)
  np.testing.assert_equal(x.numpy(), np.full(256, 200 * SCALE, np.float32))

def test_shared_memory_kernel(dev):
  # a reduction tinygrad lowers with shared memory (group reduce)
  x = np.random.default_rng(1).standard_normal((256, 1024), dtype=np.float32)
  np.testing.assert_allclose(Tensor(x, device="NV").sum(axis=1).numpy(), x.sum(axis=1), rtol=1e-4, atol=1e-3)

def test_concurrent_independent_work(dev):
  # independent computations all in flight before any is read back (Python threads: test_threads.py)
  outs = [(Tensor.full((128,), float(k), device="NV") * (k + 1)).realize() for k in range(8 * SCALE)]
  for k, o in enumerate(outs): np.testing.assert_equal(o.numpy(), np.full(128, k * (k + 1), np.float32))

def test_memory_churn(dev):
  for i in range(100 * SCALE):
    sz = 4096 * (1 + (i * 7919) % 257)
    b = dev.allocator.alloc(sz, BufferSpec(nolru=True))
    b.cpu_view().view(size=8, fmt='Q')[0] = i
    assert b.cpu_view().view(size=8, fmt='Q')[0] == i
    dev.allocator.free(b, sz, BufferSpec(nolru=True))
