# tinygrad/llm/kernels/nv.py: a decode token's RMSNorm in one kernel on NV and CUDA, run here on the PYTHON device's workgroups
import numpy as np, pytest
from tinygrad import Tensor, nn, GlobalCounters
from tinygrad.llm.kernels import nv

@pytest.mark.parametrize("D", [64, 256, 1024])
def test_rms_norm_is_nn_rmsnorm(D):
  rng = np.random.default_rng(D)
  x = Tensor(rng.standard_normal((1, 1, D)).astype(np.float32), device="PYTHON").realize()
  norm = nn.RMSNorm(D, 1e-5)
  norm.weight = Tensor(rng.standard_normal(D).astype(np.float32), device="PYTHON").realize()
  want = norm(x).numpy()
  GlobalCounters.reset()
  got = nv.rms_norm(x, norm.weight, 1e-5).numpy()
  assert GlobalCounters.kernel_count == 1
  # a thread's squares summed in another order than the reduce's where a row is longer than the workgroup
  if D <= 256: np.testing.assert_array_equal(got, want)
  else: np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

def test_prompts_keep_nn_rmsnorm(monkeypatch):
  monkeypatch.setattr(nv, "nv_custom_kernels_supported", lambda d: True)
  norm, called = nv.RMSNorm(64, 1e-5), []
  monkeypatch.setattr(nv, "rms_norm", lambda *a: called.append(a))
  norm(Tensor.ones(1, 3, 64, device="PYTHON"))
  assert not called
  norm(Tensor.ones(1, 1, 64, device="PYTHON"))
  assert len(called) == 1

def test_a_residual_is_added_in_the_kernel():
  # the block's h = x + attention feeds ffn_norm: the sum of two buffers is made in the norm's one kernel, not a kernel before it
  rng = np.random.default_rng(0)
  a, b = (Tensor(rng.standard_normal((1, 1, 256)).astype(np.float32), device="PYTHON").realize() for _ in range(2))
  w = Tensor(rng.standard_normal(256).astype(np.float32), device="PYTHON").realize()
  want = (a.numpy() + b.numpy()) / np.sqrt(((a.numpy() + b.numpy()) ** 2).mean() + 1e-5) * w.numpy()
  GlobalCounters.reset()
  got = nv.rms_norm(a + b, w, 1e-5).numpy()
  assert GlobalCounters.kernel_count == 1
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
