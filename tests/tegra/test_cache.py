# Cache maintenance on the IO-coherent Orin: invalidate_caches reaches the kernel's L2 flush, and CPU writes between GPU passes are
# always seen (the stale-cache pattern).
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.device import Buffer
from tegra_kernel import emu_kernel

def test_invalidate_caches_flushes_l2(dev):
  k = emu_kernel()
  before = dict(k.stats) if k is not None else None
  dev.invalidate_caches()   # BEAM calls this between timed runs
  if k is not None: assert (k.stats["l2_flush"], k.stats["l2_invalidate"], k.stats["fb_flush"]) == \
                           (before.get("l2_flush", 0) + 1, before.get("l2_invalidate", 0) + 1, before.get("fb_flush", 0) + 1)

def test_cpu_writes_between_gpu_passes_are_seen(dev):
  buf = Tensor.zeros(256, device="NV").contiguous().realize()
  for i in range(1, 6):
    host = np.full(256, i, np.float32)
    buf.assign(Tensor(host, device="NV")).realize()         # CPU -> device
    out = (buf * 2 + 1).numpy()                             # GPU pass, read back
    np.testing.assert_equal(out, host * 2 + 1)
    buf.uop.buffer.copy_from(Buffer("PYTHON", 256, dtypes.float32, opaque=memoryview(host * 3).cast("B")))   # CPU rewrites it directly
    np.testing.assert_equal((buf + 0).numpy(), host * 3)
