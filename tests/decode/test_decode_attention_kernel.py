# A decode token's attention as one kernel (patch "apps/llm: a decode token's attention and KV write in one kernel"), run on the emulated Orin
# (the PTX interpreter, launched like NV) against numpy: q and k rotated, k and v stored in the cache at start_pos, positions past start_pos
# (random here, as a longer earlier prompt leaves them) unread. Heads of 64 (two thread groups over the positions) and 128 (one), of 32, 8
# and 4 (fewer than the 8 elements of k a load of patch "apps/llm: decode's custom kernels keep their loads in flight"), several rounds of
# 128 positions, a cache of a length no multiple of 128, q/k/v in one buffer or three.
import math
import numpy as np, pytest
import orin_emu.ptx.device  # noqa: F401  registers EMU
from tinygrad import Tensor, UOp
from tinygrad.apps.llm import decode_attention_fxn, precompute_freqs_cis

def reference(q, k, v, cache, F, sp):
  H, (KvH, Hd) = q.shape[0], k.shape
  cos, sin = F[sp, :Hd // 2], F[sp, Hd // 2:]
  rot = lambda x: np.concatenate([x[:, :Hd // 2] * cos - x[:, Hd // 2:] * sin, x[:, Hd // 2:] * cos + x[:, :Hd // 2] * sin], -1)
  c = cache.copy()
  c[0, 0, :, sp], c[1, 0, :, sp] = rot(k), v
  out = []
  for h, qh in enumerate(rot(q)):
    K, V = (c[i, 0, h // (H // KvH), :sp + 1].astype(np.float32) for i in (0, 1))
    s = K @ qh / math.sqrt(Hd)
    p = np.exp(s - s.max())
    out.append(p / p.sum() @ V)
  return np.concatenate(out), c

@pytest.mark.parametrize("H,KvH,Hd,C,sp,split", [(4, 2, 64, 256, 0, False), (4, 2, 64, 256, 5, True), (4, 2, 64, 256, 130, False),
                                                  (4, 2, 64, 200, 199, False), (2, 1, 128, 256, 140, True), (8, 4, 32, 64, 40, False),
                                                  (4, 2, 8, 160, 150, True), (2, 2, 4, 16, 9, False)])
def test_matches_numpy(H, KvH, Hd, C, sp, split):
  rng = np.random.default_rng(sp)
  q, k, v = (rng.standard_normal((n, Hd)).astype(np.float32) for n in (H, KvH, KvH))
  cache = rng.standard_normal((2, 1, KvH, C, Hd)).astype(np.float16)
  F = precompute_freqs_cis(Hd, C).to("EMU").realize()
  want, want_cache = reference(q, k, v, cache, F.numpy(), sp)
  qkv = [Tensor(a.reshape(1, 1, -1), device="EMU") for a in (q, k, v)]
  ct = Tensor(cache, device="EMU").contiguous().realize()
  out = Tensor.empty(1, 1, H * Hd, device="EMU").custom_kernel(ct, F, UOp.variable("start_pos", 0, C - 1).bind(sp),
                                                              *(qkv if split else [Tensor.cat(*qkv, dim=-1)]), fxn=decode_attention_fxn(H))[0]
  np.testing.assert_allclose(out.numpy().reshape(-1), want, atol=2e-5, rtol=1e-4)
  np.testing.assert_equal(ct.numpy(), want_cache)
