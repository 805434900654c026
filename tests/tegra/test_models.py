# Small models on NV against numpy references (and against DEV=CUDA's device when one exists too, as on a Jetson with libcuda).
import numpy as np, pytest
from tinygrad import Tensor, Device, nn

rng = np.random.default_rng(42)
def w(*shape): return (rng.standard_normal(shape) * 0.1).astype(np.float32)

def np_mlp(x, layers):
  for i, (W, b) in enumerate(layers): x = x @ W + b if i == len(layers) - 1 else np.maximum(x @ W + b, 0)
  return x
def tg_mlp(x, layers):
  for i, (W, b) in enumerate(layers): x = x @ W + b if i == len(layers) - 1 else (x @ W + b).relu()
  return x

@pytest.mark.parametrize("widths", [[32, 64, 10], [16] + [48] * 8 + [4]])   # MLP, deep MLP
def test_mlp(dev, widths):
  layers = [(w(i, o), w(o)) for i, o in zip(widths, widths[1:])]
  x = w(8, widths[0])
  out = tg_mlp(Tensor(x, device="NV"), [(Tensor(W, device="NV"), Tensor(b, device="NV")) for W, b in layers]).numpy()
  np.testing.assert_allclose(out, np_mlp(x, layers), rtol=1e-3, atol=1e-4)

def test_cnn(dev):
  x, k1, k2 = w(2, 3, 12, 12), w(8, 3, 3, 3), w(4, 8, 3, 3)
  def np_conv(x, k):
    n, c, h, wd = x.shape; o = k.shape[0]
    out = np.zeros((n, o, h - 2, wd - 2), np.float32)
    for i in range(h - 2):
      for j in range(wd - 2): out[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i+3, j:j+3], k)
    return out
  ref = np_conv(np.maximum(np_conv(x, k1), 0), k2).reshape(2, -1).sum(1)
  t = Tensor(x, device="NV").conv2d(Tensor(k1, device="NV")).relu().conv2d(Tensor(k2, device="NV")).reshape(2, -1).sum(1)
  np.testing.assert_allclose(t.numpy(), ref, rtol=1e-3, atol=1e-3)

def test_transformer_block(dev):
  T, D, H = 8, 32, 4
  x, wq, wk, wv, wo, w1, w2 = w(T, D), w(D, D), w(D, D), w(D, D), w(D, D), w(D, 4 * D), w(4 * D, D)
  def ln(a): return (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
  def np_block(x):
    h = ln(x)
    q, k, v = [(h @ m).reshape(T, H, D // H).transpose(1, 0, 2) for m in (wq, wk, wv)]
    s = q @ k.transpose(0, 2, 1) / np.sqrt(D // H) + np.triu(np.full((T, T), -np.inf, np.float32), 1)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    x = x + (p @ v).transpose(1, 0, 2).reshape(T, D) @ wo
    return x + np.maximum(ln(x) @ w1, 0) @ w2
  def tg_block(x):
    t = {n: Tensor(m, device="NV") for n, m in dict(wq=wq, wk=wk, wv=wv, wo=wo, w1=w1, w2=w2).items()}
    h = x.layernorm()
    q, k, v = [(h @ t[n]).reshape(T, H, D // H).transpose(0, 1) for n in ("wq", "wk", "wv")]
    a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(0, 1).reshape(T, D)
    x = x + a @ t["wo"]
    return x + (x.layernorm() @ t["w1"]).relu() @ t["w2"]
  np.testing.assert_allclose(tg_block(Tensor(x, device="NV")).numpy(), np_block(x), rtol=1e-3, atol=1e-3)

def test_linear_layer_state(dev):
  l = nn.Linear(16, 8)
  x = Tensor(w(4, 16), device="NV")
  l.weight, l.bias = l.weight.to("NV").realize(), l.bias.to("NV").realize()
  np.testing.assert_allclose(l(x).numpy(), x.numpy() @ l.weight.numpy().T + l.bias.numpy(), rtol=1e-4, atol=1e-5)

def test_nv_matches_cuda(dev):
  try: Device["CUDA"]
  except Exception as e: pytest.skip(f"no CUDA device to compare with: {type(e).__name__}")
  a, b = w(32, 48), w(48, 16)
  np.testing.assert_allclose((Tensor(a, device="NV") @ Tensor(b, device="NV")).numpy(),
                             (Tensor(a, device="CUDA") @ Tensor(b, device="CUDA")).numpy(), rtol=1e-5, atol=1e-6)
