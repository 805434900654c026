# tinygrad/llm/kernels/nv.py on the GPU (the emulated Orin here): the kernels with their lanes, shared memory and barriers as NV runs
# them, against numpy; and SmolLM2 decoding through them
import functools, pathlib, sys
import numpy as np, pytest, gguf
from tinygrad import Tensor, UOp, Context, GlobalCounters, dtypes
from tinygrad.llm.gguf import ggml_data_to_tensor
from tinygrad.uop.ops import Ops
HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "llm"), str(HERE.parents[1] / "scripts")]
from llm_helpers import random_blocks, tiny_llama
from tinygrad.llm.kernels import nv

def test_sm_count_is_the_orins(dev):
  # GET_CHARACTERISTICS as the Orin answered (orin_emu/OBSERVED.md): one GPC of 4 TPCs, 2 SMs a TPC
  assert nv.sm_count("NV") == 8

@pytest.mark.parametrize("typ", list(nv.QUANTS))
def test_dequant_is_ggmls_bit_for_bit(dev, typ):
  # the quants made floats by byte permutes, as the matvec makes them, against master's dequantizer on the CPU
  raw, bs = random_blocks(np.random.default_rng(typ), 16, typ).reshape(-1), nv.QUANTS[typ][0]
  want = ggml_data_to_tensor(Tensor(raw, device="CPU"), 16*bs, typ).numpy().reshape(16, bs)
  np.testing.assert_array_equal(nv.dequantize(Tensor(raw, device="NV"), typ).numpy().view(np.uint32), want.view(np.uint32))

@pytest.mark.parametrize("typ", [nv.Q4_0, nv.Q8_0, nv.Q4_K, nv.Q6_K, nv.IQ4_XS])
def test_dequant_to_half_in_rows_order(dev, typ):
  # a prompt's weight: the blocks in float16, row j stored row order[j] (RoPE's permutation at load)
  rows, cols, bs = 6, 512, nv.QUANTS[typ][0]
  raw, order = random_blocks(np.random.default_rng(typ), rows*cols//bs, typ).reshape(-1), [3, 0, 5, 1, 4, 2]
  want = ggml_data_to_tensor(Tensor(raw, device="CPU"), rows*cols, typ).numpy().reshape(rows, cols)[order].astype(np.float16)
  got = nv.dequantize(Tensor(raw, device="NV"), typ, dtypes.half, Tensor(order, dtype=dtypes.int32, device="NV"), cols // bs)
  np.testing.assert_array_equal(got.numpy().reshape(rows, cols).view(np.uint16), want.view(np.uint16))

@pytest.mark.parametrize("typ", [nv.Q8_0, nv.Q6_K, nv.IQ4_XS])
def test_dequant_takes_workgroups_of_blocks(dev, typ):
  # a prompt dequantizes every weight each call: a block's lanes and 128 // lanes blocks a workgroup, not one thread a workgroup
  from tinygrad import Device
  from tinygrad.codegen import to_program
  raw = Tensor(random_blocks(np.random.default_rng(typ), 64, typ).reshape(-1), device="NV")
  ast = next(c.src[0] for c in nv.dequantize(raw, typ, dtypes.half).schedule_linear().src if c.src[0].op is Ops.SINK)
  assert functools.reduce(lambda a, b: a * b, to_program(ast, Device["NV"].renderer).arg.local_size) == 128

@pytest.mark.parametrize("typ", list(nv.QUANTS))
@pytest.mark.parametrize("split,rows_wg,unroll,rows_th", [(1, 4, 2, 1), (2, 2, 2, 1), (4, 1, 1, 1), (1, 2, 8, 2), (2, 2, 1, 4)])
def test_matvec(dev, typ, split, rows_wg, unroll, rows_th):
  # 8 rows of 4 blocks: lanes past a row's last block (32-weight types), positions shared by split warps, rows sharing a thread
  rng, (bs, _, _) = np.random.default_rng(typ), nv.QUANTS[typ]
  raw, rows = random_blocks(rng, 32, typ), 8
  w = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(rows, -1).astype(np.float64)
  x = rng.standard_normal(w.shape[1]).astype(np.float32)
  fxn = functools.partial(nv._matvec_kernel, typ=typ, local=True, perm=True, rows_wg=rows_wg, split=split, unroll=unroll,
                          rows_th=rows_th)
  got = Tensor.empty(rows, device="NV").custom_kernel(*nv._block_views(Tensor(raw.reshape(-1), device="NV"), typ), Tensor(x, device="NV"),
                                                        fxn=fxn)[0].numpy()
  np.testing.assert_allclose(got, w @ x, rtol=1e-5, atol=1e-5 * np.abs(w @ x).max())

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q5_K])
@pytest.mark.parametrize("glu,split", [(False, 1), (True, 1), (True, 2)])
def test_k_quants_at_8_lanes_a_block(dev, typ, glu, split):
  # two rows a thread of a lane's 16 bytes of quants, of one weight or of gate's and up's
  rng = np.random.default_rng(typ)
  raws, x = [random_blocks(rng, 32, typ) for _ in range(2 if glu else 1)], rng.standard_normal(4 * 256).astype(np.float32)
  a, *b = (gguf.quants.dequantize(r, gguf.GGMLQuantizationType(typ)).reshape(8, -1).astype(np.float64) @ x for r in raws)
  want = a / (1 + np.exp(-a)) * b[0] if glu else a
  fxn = functools.partial(nv._matvec_kernel, typ=typ, local=True, perm=True, rows_wg=2 // split, split=split, unroll=1, rows_th=2, lanes=8,
                          glu=glu)
  views = [v for r in raws for v in nv._block_views(Tensor(r.reshape(-1), device="NV"), typ)]
  got = Tensor.empty(8, device="NV").custom_kernel(*views, Tensor(x, device="NV"), fxn=fxn)[0].numpy()
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

@pytest.mark.parametrize("typ", [nv.Q4_1, nv.Q8_0, nv.Q4_K, nv.Q6_K])
def test_glu(dev, typ):
  # silu(gate x) * (up x) in one kernel: each thread takes a row of both weights
  rng = np.random.default_rng(typ)
  raws, x = [random_blocks(rng, 32, typ) for _ in range(2)], rng.standard_normal(nv.QUANTS[typ][0] * 4).astype(np.float32)
  a, b = (gguf.quants.dequantize(r, gguf.GGMLQuantizationType(typ)).reshape(8, -1).astype(np.float64) @ x for r in raws)
  gate, up = (Tensor(r.reshape(-1), device="NV") for r in raws)
  want = a / (1 + np.exp(-a)) * b
  np.testing.assert_allclose(nv.matvec(gate, typ, Tensor(x, device="NV"), 8, up=up).numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

@pytest.mark.parametrize("typ", [nv.Q4_0, nv.Q8_0, nv.Q4_K, nv.Q6_K])
def test_matvecs_of_weights_in_one_buffer(dev, typ):
  # q, k and v of one x in one kernel: three weights at 4-byte aligned offsets of one buffer, q's and k's rows in an order
  rng, bs = np.random.default_rng(typ), nv.QUANTS[typ][0]
  raws, orders = [random_blocks(rng, n * 4, typ) for n in (8, 4, 4)], [rng.permutation(8), rng.permutation(4), None]
  ws = [gguf.quants.dequantize(r, gguf.GGMLQuantizationType(typ)).reshape(len(r) // 4, -1).astype(np.float64) for r in raws]
  offs = [0, 4 * -(-(raws[0].size + 6) // 4), 0]
  offs[2] = offs[1] + 4 * -(-(raws[1].size + 2) // 4)
  buf = np.zeros(offs[2] + raws[2].size, np.uint8)
  for r, o in zip(raws, offs): buf[o:o+r.size] = r.reshape(-1)
  x = rng.standard_normal(bs * 4).astype(np.float32)
  parts = [(len(w), o, None if od is None else Tensor(od.astype(np.int32), device="NV")) for w, o, od in zip(ws, offs, orders)]
  got = nv.matvecs(Tensor(buf, device="NV"), typ, Tensor(x, device="NV"), parts)
  for g, w, od in zip(got, ws, orders):
    want = (w if od is None else w[od]) @ x
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

def test_argmax_takes_the_first_largest(dev):
  x = np.random.default_rng(0).standard_normal((1, 49152)).astype(np.float32)
  x[0, 30000] = x[0, 40000] = 9.0
  assert nv.argmax(Tensor(x, device="NV")).tolist() == [[30000]]
  # all negative, -0.0 above every negative value
  x = -np.abs(x); x[0, 7] = -0.0
  assert nv.argmax(Tensor(x, device="NV")).tolist() == [[7]]
  # a vocabulary of 256k (Gemma's), its largest near the end
  x = np.random.default_rng(1).standard_normal((1, 262144)).astype(np.float32)
  x[0, 262000] = 9.0
  assert nv.argmax(Tensor(x, device="NV")).tolist() == [[262000]]

def test_argmax_of_a_long_row_takes_a_workgroup_a_1024_values(dev):
  # one workgroup scanning a 128k vocabulary is a long tail of the step on a big GPU: each of 126 picks its largest, one the largest of those
  calls = [u.src[0].arg.name for u in nv.argmax(Tensor.empty(1, 128256, device="NV")).uop.toposort() if u.op is Ops.CALL]
  assert calls == ["argmax_keys_128256", "argmax_126"]

def _rope(x:np.ndarray, f:np.ndarray) -> np.ndarray:
  # model.py's apply_rope on the first len(f) dims: f is cos, then sin
  (cos, sin), h = np.split(f, 2), len(f) // 2
  return np.concatenate([x[..., :h] * cos - x[..., h:2*h] * sin, x[..., h:2*h] * cos + x[..., :h] * sin, x[..., 2*h:]], -1)

@pytest.mark.parametrize("heads,kv_heads,hd,rope_dim,normed,ctx,last", [(4, 2, 64, 64, False, 256, (4, False)),
  (6, 6, 64, 64, False, 256, (2, False)), (8, 2, 128, 128, True, 256, (2, False)), (16, 2, 64, 64, False, 256, (1, False)),
  (8, 1, 64, 32, True, 256, (2, False)), (4, 2, 64, 64, False, 8192, (8, True)), (4, 2, 128, 128, True, 8192, (4, False)),
  (8, 1, 64, 32, True, 512, (8, True))])
def test_attention(dev, heads, kv_heads, hd, rope_dim, normed, ctx, last, monkeypatch):
  # q and k (a head RMS normed: Qwen3's qk_norm) turned by RoPE, k and v stored into the cache at start_pos, attention over it up to
  # there: GQA 1-8, a partial RoPE, a context of 8192 (tinygrad.llm's --max_context 4096 doubled). start_pos bound below by up to 256
  # (decode_pos's bound from SPLIT_FROM on): a head's positions split into runs on the emulated Orin's 8 SMs (4 heads: 4 runs at 130; 6
  # and 8: 2), from 256 on a workgroup a kv head's heads of 64 (at 8191: 2 kv heads, 8 runs, heads of 128 4 runs a head; at 511: 1 kv
  # head of 8, 8 runs; `last`: the last position's runs and grouping). q, k and v flat buffers, as the matvecs give them
  from tinygrad import nn
  seen, real = [], nv._attention_kernel
  monkeypatch.setattr(nv, "_attention_kernel", lambda *a, **kw: seen.append((kw["splits"], kw["grouped"])) or real(*a, **kw))
  rng = np.random.default_rng(heads)
  cache = rng.standard_normal((2, 1, kv_heads, ctx, hd)).astype(np.float32)
  f = rng.standard_normal((ctx, rope_dim)).astype(np.float32)
  norms = [nn.RMSNorm(hd, 1e-6) for _ in range(2 if normed else 0)]
  for n in norms: n.weight = Tensor(rng.uniform(0.5, 1.5, hd).astype(np.float16), device="NV")
  def norm(x, i): return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norms[i].weight.numpy().astype(np.float32) if norms else x
  cache_t, f_t = Tensor(cache, device="NV"), Tensor(f, device="NV")
  for sp in (0, 5, 130) if ctx == 256 else (ctx - 1,):
    q, k, vn = (rng.standard_normal((1, n, 1, hd)).astype(np.float32) for n in (heads, kv_heads, kv_heads))
    pos = UOp.variable("start_pos", min(sp, 256) // 64 * 64, ctx-1).bind(sp)
    got = nv.attention(*(Tensor(t.reshape(-1), device="NV").reshape(t.shape) for t in (q, k, vn)), cache_t, f_t, pos, *norms).numpy()[0, :, 0]
    cache[0, 0, :, sp], cache[1, 0, :, sp] = _rope(norm(k[0, :, 0], 1), f[sp]), vn[0, :, 0]
    np.testing.assert_allclose(cache_t.numpy(), cache, atol=1e-5)
    kk, vv = (np.repeat(cache[i, 0, :, :sp+1], heads // kv_heads, 0) for i in (0, 1))
    s = np.einsum("hd,hjd->hj", _rope(norm(q[0, :, 0], 0), f[sp]), kk) / np.sqrt(hd)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, np.einsum("hj,hjd->hd", p / p.sum(-1, keepdims=True), vv), atol=1e-5)
  assert seen[-1] == last

@pytest.mark.parametrize("heads,kv_heads,hd,T", [(4, 2, 64, 64), (4, 1, 128, 32), (2, 2, 32, 64)])
def test_a_first_prompts_attention_takes_the_tensor_cores(dev, heads, kv_heads, hd, T):
  # concrete shapes: float16 inputs summed in float32, GQA by broadcasting k and v over a kv head's heads; a symbolic length keeps SDPA
  from tinygrad.llm.model import causal_mask, tc_attention
  rng = np.random.default_rng(hd)
  q, k, v = (rng.standard_normal((1, n, T, hd)).astype(np.float32) for n in (heads, kv_heads, kv_heads))
  got = tc_attention(*(Tensor(x, device="NV") for x in (q, k, v)), causal_mask(T, 0, dtypes.float).to("NV")).numpy()[0]
  s = np.einsum("htd,hjd->htj", q[0], np.repeat(k[0], heads // kv_heads, 0)) / np.sqrt(hd) + np.triu(np.full((T, T), -np.inf), 1)
  p = np.exp(s - s.max(-1, keepdims=True))
  np.testing.assert_allclose(got, np.einsum("htj,hjd->htd", p / p.sum(-1, keepdims=True), np.repeat(v[0], heads // kv_heads, 0)), atol=5e-3)
  sp = UOp.variable("start_pos", 0, 64).bind(3)
  assert tc_attention(Tensor(q, device="NV"), Tensor(k, device="NV")[:, :, :sp+T-3], Tensor(v, device="NV")[:, :, :sp+T-3], None) is None

@pytest.mark.parametrize("heads,hd,at,cols,sp", [(4, 64, 0, 384, 0), (2, 128, 128, 512, 5), (4, 64, 64, 384, None), (2, 32, 32, 96, 7)])
def test_a_prompts_q_takes_rope_into_float16_in_one_kernel(dev, heads, hd, at, cols, sp):
  # a prompt's q for the tensor cores: its columns of the q/k/v matmul's rows turned by RoPE rows start_pos.. (a bound variable where
  # None) and stored in float16 a head at a time, lanes over a head's dims; a q that is no buffer's columns (a normed one) is left
  T, ctx, rng = 32, 64, np.random.default_rng(hd)
  y, f = rng.standard_normal((1, T, cols)).astype(np.float32), rng.standard_normal((ctx, hd)).astype(np.float32)
  p, y_t, f_t = 3 if sp is None else sp, Tensor(y, device="NV").realize(), Tensor(f, device="NV").realize()
  q = y_t[..., at:at + heads * hd]
  got = nv.prompt_rope(q, f_t, UOp.variable("start_pos", 0, ctx - T).bind(p) if sp is None else sp)
  assert got is not None and got.dtype == dtypes.half and got.shape == (1, heads, T, hd)
  GlobalCounters.reset(); got.realize()
  assert GlobalCounters.kernel_count == 1
  want = np.stack([[_rope(y[0, t, at + h * hd:at + (h + 1) * hd], f[p + t]) for t in range(T)] for h in range(heads)])
  np.testing.assert_allclose(got.numpy()[0].astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)
  assert nv.prompt_rope(q * 2, f_t, p) is None

def test_qwen3s_prompt_keeps_its_normed_q(dev, tmp_path):
  # q's heads are RMS normed (qk_norm) after the q/k/v matmul and before RoPE: a prompt on the tensor cores takes the normed q, as the
  # CPU does; 40 tokens pad to 64
  from tinygrad.llm import model
  path, prompt = tiny_llama(tmp_path / "qwen3.gguf", nv.Q4_K, qwen3=True), [(7 * i) % 300 + 2 for i in range(40)]
  with Context(DEV="CPU"): want = [t for t, _ in zip(model.Transformer.from_gguf(path, max_context=64)[0].generate(list(prompt)), range(4))]
  assert [t for t, _ in zip(model.Transformer.from_gguf(path, max_context=64)[0].generate(list(prompt)), range(4))] == want

@pytest.mark.parametrize("T,N,K,wg,s", [(128, 256, 32, 2, 1), (256, 256, 32, 4, 1), (64, 512, 32, 2, 1), (64, 256, 32, None, 1),
                                        (64, 96, 32, None, 1), (64, 128, 512, 2, 4), (64, 128, 96, None, 1)])
def test_a_prompts_matmul_tiles_follow_the_shape_and_the_sms(dev, monkeypatch, T, N, K, wg, s):
  # one SM: a warp's 64 tokens by 64 rows where 4 workgroups of wg warps are left it (64 tokens too, their range then 1 wide); where
  # they are not and K >= N, K's sums in the fewest runs s whose tiles leave it 4; the heuristic's tiles where neither
  from tinygrad import Device
  from tinygrad.codegen import to_program
  monkeypatch.setattr(nv, "sm_count", lambda d: 1)
  rng = np.random.default_rng(T + N)
  x, w = rng.standard_normal((1, T, K)).astype(np.float16), rng.standard_normal((N, K)).astype(np.float16)
  def y(): return nv.prompt_matmul(Tensor(x, device="NV"), Tensor(w, device="NV"))
  progs = [to_program(c.src[0], Device["NV"].renderer).arg for c in y().schedule_linear().src if c.src[0].op is Ops.SINK]
  assert [(p.local_size, int(np.prod(p.global_size))) for p in progs if p.name.startswith("matmul")] == ([((32, wg, 1), s*T*N//(64*64*wg))] if wg else [])
  np.testing.assert_allclose(y().numpy(), x.astype(np.float32) @ w.astype(np.float32).T, rtol=1e-4, atol=1e-4)

def test_a_decode_steps_kernels_are_built_once_a_shape(dev, tmp_path, monkeypatch):
  # the blocks' kernels of one shape share their UOps: the decode JIT's second trace (its capture) builds none
  from tinygrad.llm.model import Transformer
  kernels, built = ("_argmax_kernel", "_attention_kernel", "_matvec_kernel", "_rms_norm_kernel"), []
  for name in kernels:
    monkeypatch.setattr(nv, name, functools.partial(lambda f, *a, **kw: built.append(f.__name__) or f(*a, **kw), getattr(nv, name)))
  m, _ = Transformer.from_gguf(tiny_llama(tmp_path / "t.gguf", nv.Q4_K), max_context=32)
  g = m.generate([0, 5, 9])
  next(g), next(g)
  n = len(built)
  next(g)
  assert tuple(sorted(set(built))) == kernels and len(built) == n

def test_the_blocks_weights_moved_alike_share_their_stored_rows(dev, tmp_path, monkeypatch):
  # RoPE's permutation at load moves every block's q and k alike: the rows each stored row is are found for one block, not for each
  from tinygrad.llm.model import Transformer
  calls: list[int] = []
  monkeypatch.setattr(nv, "_rows", functools.partial(lambda f, *a: calls.append(1) or f(*a), nv._rows))
  # rows an earlier test found would hide the first block's
  getattr(getattr(nv, "_moved_rows", None), "cache_clear", lambda: None)()
  m, _ = Transformer.from_gguf(tiny_llama(tmp_path / "t.gguf", nv.Q4_K), max_context=32)
  first = [nv.ggml_blocks(l.weight)[2] for l in (m.blk[0].attn_q, m.blk[0].attn_k)]
  n = len(calls)
  assert [nv.ggml_blocks(l.weight)[2] for l in (m.blk[1].attn_q, m.blk[1].attn_k)] == first and first[0] != sorted(first[0])
  assert n > 0 and len(calls) == n

def test_rms_norm(dev):
  # SmolLM2's 576: a workgroup of 192 threads, 3 values each
  x, w = np.random.default_rng(1).standard_normal((2, 576)).astype(np.float32)
  x = x.reshape(1, 1, 576)
  want = x / np.sqrt((x * x).mean() + 1e-5) * w
  np.testing.assert_allclose(nv.rms_norm(Tensor(x, device="NV"), Tensor(w, device="NV"), 1e-5).numpy(), want, rtol=1e-5, atol=1e-5)

def test_iq4_xs_decodes_through_the_matvec(dev, tmp_path):
  # IQ4_XS's table lookup in byte permutes: the tokens are the CPU's
  from tinygrad.llm.model import Transformer
  path = tiny_llama(tmp_path / "iq4_xs.gguf", nv.IQ4_XS)
  def toks(m): return [t for t, _ in zip(m.generate([0, 5, 9]), range(3))]
  with Context(DEV="CPU"): want = toks(Transformer.from_gguf(path, max_context=16)[0])
  m, _ = Transformer.from_gguf(path, max_context=16)
  assert toks(m) == want
  assert all(l.blocks[1] == nv.IQ4_XS for b in m.blk for l in (b.attn_q, b.attn_k, b.attn_v, b.attn_output, b.ffn_gate, b.ffn_up, b.ffn_down))

def test_qwen3_moe_decodes_through_the_kernels(dev, tmp_path):
  # Qwen3-MoE: heads of 128, q and k normed before RoPE, 2 of 4 experts a token: the one-kernel attention, the experts' GLU and down
  # matvecs give the CPU's tokens
  from tinygrad.llm.model import Transformer
  path = tiny_llama(tmp_path / "qwen3moe.gguf", nv.Q4_K, moe=True)
  def toks(m): return [t for t, _ in zip(m.generate([0, 5, 9]), range(2))]
  with Context(DEV="CPU"): want = toks(Transformer.from_gguf(path, max_context=16)[0])
  assert toks(m:=Transformer.from_gguf(path, max_context=16)[0]) == want
  assert all(getattr(b, f"ffn_{n}_exps").blocks[1] == nv.Q4_K for b in m.blk for n in ("gate", "up", "down"))

def test_the_weights_are_the_files_blocks(dev, tmp_path):
  # unified memory (the Orin's 64 GB are the CPU's too): the GGUF's blocks on the GPU are the weights; a prompt and decode steps
  # dequantize them as they read, and no float16 copy of them stays allocated
  from tinygrad import GlobalCounters
  from tinygrad.llm.model import Transformer
  path = tiny_llama(tmp_path / "q6_k.gguf", nv.Q6_K)
  before = GlobalCounters.mem_used
  m, _ = Transformer.from_gguf(path, max_context=64)
  assert len([t for t, _ in zip(m.generate(list(range(2, 22))), range(4))]) == 4
  fp16 = sum(2 * l.weight.numel() for b in m.blk for l in (b.attn_q, b.attn_k, b.attn_v, b.attn_output, b.ffn_gate, b.ffn_up, b.ffn_down))
  kv = sum(b.cache_kv.nbytes() for b in m.blk)
  assert GlobalCounters.mem_used - before < path.stat().st_size + kv + fp16 // 4, (GlobalCounters.mem_used - before, path.stat().st_size, fp16)

def test_a_prompt_multiplies_float16_inputs_by_blocks_dequantized_for_it(dev, tmp_path, monkeypatch):
  # a prompt's projections: each weight's blocks dequantized to float16 by their own kernel, float16 inputs on the tensor cores; the
  # tokens are the CPU's
  from tinygrad.llm.model import Transformer
  path = tiny_llama(tmp_path / "q6_k.gguf", nv.Q6_K)
  prompt = [(7 * i) % 300 + 2 for i in range(40)]
  def toks(m): return [t for t, _ in zip(m.generate(list(prompt)), range(3))]
  with Context(DEV="CPU"): want = toks(Transformer.from_gguf(path, max_context=64)[0])
  halves, dequantize = [], nv.dequantize
  monkeypatch.setattr(nv, "dequantize", lambda raw, typ, dtype=dtypes.float, *a: halves.append(dtype) or dequantize(raw, typ, dtype, *a))
  assert toks(Transformer.from_gguf(path, max_context=64)[0]) == want
  assert halves == [dtypes.half] * 14   # 7 projections a block, 2 blocks; the head projects one token

def test_a_later_turns_prompt_takes_the_tensor_cores(dev, tmp_path, monkeypatch):
  # a prompt after a prefix reads the keys up to a power of two, those past its tokens masked (the cache starts zeroed): concrete
  # shapes, on the tensor cores; the tokens are the CPU's
  from tinygrad.llm import model
  path = tiny_llama(tmp_path / "q6_k.gguf", nv.Q6_K)
  first, later = [(7 * i) % 300 + 2 for i in range(24)], [(5 * i) % 300 + 3 for i in range(10)]
  def turns(m):
    a = [t for t, _ in zip(m.generate(list(first)), range(2))]
    return a, [t for t, _ in zip(m.generate(first + a + later), range(2))]
  with Context(DEV="CPU"): want = turns(model.Transformer.from_gguf(path, max_context=64)[0])
  keys, tc_attention = [], model.tc_attention
  monkeypatch.setattr(model, "tc_attention", lambda q, k, v, mask: keys.append(k.shape[2]) or tc_attention(q, k, v, mask))
  assert turns(model.Transformer.from_gguf(path, max_context=64)[0]) == want
  # 24 tokens padded to 32 from an empty cache, then 11 after 25 padded to 32: their keys to 64
  assert keys == [32, 32, 64, 64]

def test_a_prompts_weights_schedule_nothing_and_share_their_kernel(dev, tmp_path, monkeypatch):
  # a prompt takes each weight's blocks as loading found them: RoPE's row orders are copied into buffers (a realize is a schedule, and a
  # schedule walks every live tensor), and the weights of one shape and type share the UOps of one dequantizing kernel, built once
  from tinygrad.llm.model import Transformer
  m = Transformer.from_gguf(tiny_llama(tmp_path / "q6_k.gguf", nv.Q6_K), max_context=64)[0]
  calls, built, linear, kernel = [], [], Tensor.linear_with_vars, nv._dequant_kernel
  monkeypatch.setattr(Tensor, "linear_with_vars", lambda *a, **kw: calls.append(1) or linear(*a, **kw))
  monkeypatch.setattr(nv, "_dequant_kernel", lambda *a, **kw: built.append(1) or kernel(*a, **kw))
  x = Tensor.empty(1, 32, m.blk[0].ffn_up.weight.shape[1], device="NV")
  assert all(b.attn_q.prompt_weight(x) is not None and b.ffn_up.prompt_weight(x) is not None for b in m.blk)
  assert not calls and all(b.attn_q.blocks[2] is not None for b in m.blk) and len(built) == 2

def test_smollm2_decodes_paris_through_the_kernels(dev):
  # master's LLM app on the Orin: SmolLM2's Q4_1 projections and Q8_0 head, its norms, attention and greedy token in our kernels
  from tinygrad.llm.model import Transformer
  from smollm2 import smollm2_gguf
  m, _ = Transformer.from_gguf(smollm2_gguf(), max_context=16)
  toks = [t for t, _ in zip(m.generate([504, 3575, 282, 4649, 314]), range(2))]   # "The capital of France is"
  assert toks == [7042, 30]   # " Paris" "."
  assert all(b.attn_q.blocks[1] == b.ffn_down.blocks[1] == nv.Q4_1 for b in m.blk) and m.output.blocks[1] == nv.Q8_0

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q8_0])
def test_a_prompts_q_k_and_v_take_one_matmul(dev, tmp_path, typ):
  # their blocks dequantized into one float16 buffer, each weight's rows in its place (q's and k's in RoPE's order): one matmul
  from tinygrad.llm.model import Transformer
  m, _ = Transformer.from_gguf(tiny_llama(tmp_path / "t.gguf", typ), max_context=64)
  b, x = m.blk[0], Tensor(np.random.default_rng(typ).standard_normal((1, 64, 256)).astype(np.float32), device="NV")
  for y, l in zip(nv.linears(x, b.attn_q, b.attn_k, b.attn_v), (b.attn_q, b.attn_k, b.attn_v)):
    np.testing.assert_allclose(y.numpy(), l(x).numpy(), rtol=1e-3, atol=1e-3)
  kernels = [c.src[0] for c in Tensor.schedule_linear(*nv.linears(x, b.attn_q, b.attn_k, b.attn_v)).src if c.src[0].op is Ops.SINK]
  assert sum(any(u.op is Ops.REDUCE for u in k.toposort()) for k in kernels) == 1

def test_a_prompts_softmax_takes_one_pass_a_row(dev):
  # the rows' max and sum of exps in one kernel (a warp a row, no reduce of tinygrad's), a causal mask's -inf at a lane's first values too
  x = (np.random.default_rng(7).standard_normal((1, 2, 64, 256)) + np.triu(np.full((64, 256), -np.inf), 1)).astype(np.float32)
  e = np.exp(x - x.max(-1, keepdims=True))
  np.testing.assert_allclose(nv.softmax(Tensor(x, device="NV")).numpy(), e / e.sum(-1, keepdims=True), atol=1e-6)
  kernels = [c.src[0] for c in nv.softmax(Tensor(x, device="NV")).schedule_linear().src if c.src[0].op is Ops.SINK]
  assert not any(u.op is Ops.REDUCE for k in kernels for u in k.toposort()) and any(k.arg.name == "softmax_stats_256" for k in kernels)
