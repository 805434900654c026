# tinygrad/llm/kernels/nv.py: GGUF quantized linear weights read as stored by the decode matvec on NV and CUDA
import numpy as np, pytest, gguf
from tinygrad import Tensor, UOp, GlobalCounters, dtypes
from tinygrad.uop.ops import AxisType
from tinygrad.llm.gguf import ggml_data_to_tensor
from tinygrad.llm.model import Transformer
from tinygrad.llm.kernels import nv
from llm_helpers import cuda_program, random_blocks, tiny_llama

TYPES = list(nv.QUANTS)

def cuda_matvec(*args:UOp, **kw):
  """the matvec kernel (CUDA's locals, byte permutes) as CUDA's renderer writes it for sm_90"""
  return cuda_program(nv._matvec_kernel(*args, local=True, perm=True, **kw), "sm_90")

@pytest.mark.parametrize("typ", TYPES)
def test_dequant_is_ggmls_bit_for_bit(typ):
  bs = nv.QUANTS[typ][0]
  raw = random_blocks(np.random.default_rng(typ), 64, typ)
  got = nv.dequantize(Tensor(raw.reshape(-1)), typ).numpy()
  ours = ggml_data_to_tensor(Tensor(raw.reshape(-1)), 64*bs, typ).reshape(64, bs).numpy()
  theirs = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(64, bs).astype(np.float32)
  np.testing.assert_array_equal(got.view(np.uint32), ours.view(np.uint32))
  # gguf-py's Q5_0 zeros may carry the other sign
  np.testing.assert_array_equal(got, theirs)

@pytest.mark.parametrize("typ", TYPES)
def test_matvec(typ):
  rng, bs = np.random.default_rng(typ), nv.QUANTS[typ][0]
  raw, rows = random_blocks(rng, 64, typ), 16
  w = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(rows, -1).astype(np.float64)
  x = rng.standard_normal(w.shape[1]).astype(np.float32)
  np.testing.assert_allclose(nv.matvec(Tensor(raw.reshape(-1)), typ, Tensor(x), rows).numpy(), w @ x, rtol=1e-5, atol=1e-5 * np.abs(w @ x).max())

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q5_K])
def test_k_quants_at_8_lanes_a_block(typ):
  # a lane's 4 words of quants in a row (one 16-byte load) under one scale and min pair
  rng = np.random.default_rng(typ)
  raw, x = random_blocks(rng, 32, typ), rng.standard_normal(4 * 256).astype(np.float32)
  want = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(8, -1).astype(np.float64) @ x
  fxn = nv._kernel_fxn(nv._matvec_kernel, typ=typ, local=False, perm=False, rows_wg=1, split=1, unroll=1, lanes=8)
  got = Tensor.empty(8).custom_kernel(*nv._block_views(Tensor(raw.reshape(-1)), typ), Tensor(x), fxn=fxn)[0]
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

@pytest.mark.parametrize("prefix", [0, 4])
def test_rows_of_ropes_permutation(prefix):
  # from_gguf's RoPE permutation of llama's q (2 heads of 16, the first prefix dims of a head not turned): each row is a row of the file
  deq = Tensor.empty(32, 8)
  w = deq.reshape(2, 16, 8)
  w = w[:, :prefix].cat(w[:, prefix:].rearrange("n (h two) d -> n (two h) d", two=2), dim=1).reshape(-1, 8)
  want = np.arange(32).reshape(2, 16)
  want = np.concatenate([want[:, :prefix], want[:, prefix:].reshape(2, -1, 2).transpose(0, 2, 1).reshape(2, -1)], 1).reshape(-1)
  assert nv.rows_of(w.uop, deq.uop) == want.tolist()
  assert nv.rows_of(deq.uop, deq.uop) == list(range(32)) and nv.rows_of(deq[2:6].uop, deq.uop) == [2, 3, 4, 5]
  # rows of zeros, rows summed, columns moved: not a weight's rows
  assert nv.rows_of(deq.pad(((0, 2), (0, 0))).uop, deq.uop) is None and nv.rows_of((deq + deq.flip(0)).uop, deq.uop) is None
  assert nv.rows_of(deq.shrink(((0, 32), (0, 4))).uop, deq.uop) is None

@pytest.mark.parametrize("typ", [nv.Q8_0, nv.Q4_K])
def test_matvec_of_experts(typ):
  # the rows of 3 of 6 experts picked on the device, times one x for all or one a pick
  rng, (bs, _, _) = np.random.default_rng(typ), nv.QUANTS[typ]
  E, rows, cols, sel = 6, 8, 2 * bs, [4, 1, 4]
  raw = random_blocks(rng, E * rows * cols // bs, typ)
  w = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(E, rows, cols).astype(np.float64)
  x, picks = rng.standard_normal((3, cols)).astype(np.float32), Tensor(sel, dtype=dtypes.int32)
  for xs in (x[:1], x):
    got = nv.matvec(Tensor(raw.reshape(-1)), typ, Tensor(xs), rows, sel=picks).numpy().reshape(3, rows)
    want = np.stack([w[s] @ xs[i % len(xs)] for i, s in enumerate(sel)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())

def test_matvec_stores_rows_in_order():
  rng, typ = np.random.default_rng(0), nv.Q8_0
  raw = random_blocks(rng, 16, typ)
  w = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(8, -1).astype(np.float64)
  x, order = rng.standard_normal(w.shape[1]).astype(np.float32), [3, 0, 7, 7, 1, 2, 6, 5]
  got = nv.matvec(Tensor(raw.reshape(-1)), typ, Tensor(x), 8, order=Tensor(order, dtype=dtypes.int32)).numpy()
  np.testing.assert_allclose(got, (w @ x)[order], rtol=1e-5, atol=1e-5 * np.abs(w @ x).max())

@pytest.mark.parametrize("n", [1, 2])
def test_matvec_adds_residuals_at_its_stores(n):
  # a block's residual, a buffer or a sum of two, is added at the down matvec's stores: one kernel
  rng, typ = np.random.default_rng(n), nv.Q6_K
  raw = random_blocks(rng, 32, typ)
  w = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(typ)).reshape(16, -1).astype(np.float64)
  x, rs = rng.standard_normal(w.shape[1]).astype(np.float32), [rng.standard_normal(16).astype(np.float32) for _ in range(n)]
  raw_t, x_t, rs_t = Tensor(raw.reshape(-1)).realize(), Tensor(x).realize(), [Tensor(r).realize() for r in rs]
  GlobalCounters.reset()
  got = nv.matvec(raw_t, typ, x_t, 16, residuals=tuple(rs_t)).realize()
  assert GlobalCounters.kernel_count == 1
  np.testing.assert_allclose(got.numpy(), sum(rs) + w @ x, rtol=1e-5, atol=1e-5 * np.abs(w @ x).max())

@pytest.mark.parametrize("experts", [0, 3])
def test_rows_read_from_a_buffer_keep_32_bit_addresses(experts):
  # an order's or a pick's row is clamped to the rows there are, so the block addresses it scales stay 32-bit
  rows, nb = 2048, nv.QUANTS[nv.Q6_K][1]
  n = rows * (experts or 1) * 8
  v8, v16 = UOp.placeholder((n*nb,), dtypes.uint8, 1), UOp.placeholder((n*nb//2,), dtypes.uint16, 2)
  out, x, picks = UOp.placeholder((rows * (experts or 1),), dtypes.float, 0), UOp.placeholder((8*256,), dtypes.float, 3), UOp.placeholder((rows,), dtypes.int32, 4)
  prg = cuda_matvec(out, v8, v16, x, picks, typ=nv.Q6_K, rows_wg=4, split=1, unroll=2, experts=rows if experts else 0)
  assert "long" not in prg.src[2].arg

@pytest.mark.parametrize("typ", TYPES)
def test_matvec_is_one_kernel(typ):
  raw, x = Tensor(random_blocks(np.random.default_rng(typ), 64, typ).reshape(-1)).realize(), Tensor.ones(64*nv.QUANTS[typ][0]//16).realize()
  GlobalCounters.reset()
  nv.matvec(raw, typ, x, 16).realize()
  assert GlobalCounters.kernel_count == 1

def test_k_quants_with_6_bit_scales_read_words():
  # Q4_K's and Q5_K's d, dmin and the 12 bytes of scales and mins are the block's first four words: no byte or half-word loads
  assert nv.used_views(nv.Q4_K) == nv.used_views(nv.Q5_K) == (False, False, True)

def test_matvec_lanes_are_a_warp():
  # on CUDA a row is a warp, 4 rows a workgroup, whose lanes' sums meet in shared memory in two rounds; a lane reads a block's quants as
  # 32-bit words and makes a float of each quant in one byte permute
  out, v8, v16 = UOp.placeholder((256,), dtypes.float, 0), UOp.placeholder((1024*210,), dtypes.uint8, 1), UOp.placeholder((1024*105,), dtypes.uint16, 2)
  x = UOp.placeholder((1024,), dtypes.float, 3)
  prg = cuda_matvec(out, v8, v16, x, typ=nv.Q6_K, rows_wg=4, split=1, unroll=2)
  assert (prg.arg.global_size, prg.arg.local_size) == ((64, 1, 1), (32, 4, 1))
  src = prg.src[2].arg
  assert src.count("__syncthreads()") == 2 and "__shared__" in src and src.count("__byte_perm(") == 2*16
  # a lane two words of a block: its two ql words and their one qh word as two half words each and d; bytes only for its 4 scales;
  # x as float4
  assert (src.count("(*(data1_"), src.count("(*(data2_"), src.count("(float4*)((data3_")) == (2*4, 2*7, 2*4)

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q5_K])
@pytest.mark.parametrize("lanes", [16, 8])
def test_k_quant_lanes_read_words_of_one_scale_in_a_row(typ, lanes):
  # a lane's words of quants share their 6-bit scales and mins and lie in a row: one 8-byte load at 16 lanes a block, one 16-byte load
  # at 8; the block's first four words are one 16-byte load
  bs, nb, _ = nv.QUANTS[typ]
  out, v32, x = UOp.placeholder((256,), dtypes.float, 0), UOp.placeholder((2048*nb//4,), dtypes.uint32, 1), UOp.placeholder((8*bs,), dtypes.float, 2)
  src = cuda_matvec(out, v32, x, typ=typ, rows_wg=4, split=1, unroll=2, lanes=lanes).src[2].arg
  quants = 2 if typ == nv.Q5_K else 1
  assert src.count("(*(data1_") == 0 and src.count("(*((uint2*)((data1_") == (2*quants if lanes == 16 else 0)
  assert src.count("(*((uint4*)((data1_") == 2*(1 + (quants if lanes == 8 else 0))

def k_quant_lane_src(typ:int, lanes:int) -> str:
  bs, nb, _ = nv.QUANTS[typ]
  out, v32, x = UOp.placeholder((256,), dtypes.float, 0), UOp.placeholder((2048*nb//4,), dtypes.uint32, 1), UOp.placeholder((8*bs,), dtypes.float, 2)
  return cuda_matvec(out, v32, x, typ=typ, rows_wg=4, split=1, unroll=1, lanes=lanes).src[2].arg

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q5_K])
@pytest.mark.parametrize("lanes", [16, 8])
def test_k_quant_lanes_pick_scales_from_words(typ, lanes):
  # a lane's two scales are two bytes of one word of the block's four scales or its four others, its two mins of another: one select each
  assert k_quant_lane_src(typ, lanes).count("?") == 2

@pytest.mark.parametrize("typ", [nv.Q4_K, nv.Q5_K])
@pytest.mark.parametrize("lanes", [16, 8])
def test_quants_128_comes_off_once_a_scale(typ, lanes):
  # the 128 in a lane's quants comes off once a scale, from the sum of its columns of x, not once a word
  assert k_quant_lane_src(typ, lanes).count("-128.0f") == 2

@pytest.mark.parametrize("sms,want", [(132, {(2560, 2048, False): (2, 2, 8), (8192, 2048, True): (2, 2, 8), (2048, 8192, False): (2, 2, 8),
                                             (4096, 4096, False): (1, 2, 8), (14336, 4096, True): (1, 2, 8), (1024, 2048, False): (4, 1, 16)}),
                                      (8, {(2560, 2048, False): (1, 4, 8), (8192, 2048, True): (1, 2, 8), (2048, 8192, False): (1, 4, 8),
                                           (4096, 4096, False): (1, 4, 8), (14336, 4096, True): (1, 2, 8), (1024, 2048, False): (4, 1, 16)})])
def test_4_bit_k_quants_take_rows_a_thread_at_8_lanes_a_block(sms, want, monkeypatch):
  # (split, rows a thread, lanes a block) of Q4_K weights shaped as a 1B's and an 8B's: 4 rows where 16 warps an SM are left, but in a
  # GLU, else 2, at 8 lanes; short rows, and too few of them, split over two warps; under 2048 rows, one a thread at 16 lanes
  for f in ("has_local", "has_byte_perm"): monkeypatch.setattr(nv, f, lambda device: True)
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  for (rows, cols, glu), w in want.items():
    kw = nv._matvec_fxn(nv.Q4_K, "CUDA", cols, rows, rows, glu).__wrapped__.keywords
    assert (kw["split"], kw["rows_th"], kw["lanes"]) == w, (rows, cols, glu, kw)

@pytest.mark.parametrize("typ,sms,want", [(nv.Q6_K, 132, {1024: (1, 1), 2048: (1, 4), 128256: (4, 4)}),
                                           (nv.Q6_K, 8, {1024: (1, 1), 2048: (4, 2), 128256: (4, 4)}),
                                           (nv.Q8_0, 132, {1024: (1, 1), 2048: (1, 4), 128256: (2, 4)}),
                                           (nv.Q8_0, 8, {1024: (1, 1), 2048: (2, 2), 128256: (2, 4)})])
def test_rows_a_thread_follow_the_sm_count(typ, sms, want, monkeypatch):
  # (rows a thread, rows a workgroup) of 1024 rows, a 1B's ffn_down and its lm head: rows share a thread's x loads while 16 warps an SM are left, so
  # the whole H100 takes one row a thread and 4 a workgroup, and 8 SMs take 4 rows a thread, 2 where a lane reads 4 weights a block (Q8_0)
  seen, real, (bs, nbytes, _) = {}, nv._matvec_kernel, nv.QUANTS[typ]
  def spy(out, *args, **kw):
    seen[out.shape[0]] = (kw["rows_th"], kw["rows_wg"])
    return real(out, *args, **kw)
  monkeypatch.setattr(nv, "_matvec_kernel", spy)
  monkeypatch.setattr(nv, "has_local", lambda device: True)
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  for rows, cols in ((1024, 2048), (2048, 8192), (128256, 2048)):
    nv.matvec(Tensor.empty(rows * cols // bs * nbytes, dtype=dtypes.uint8), typ, Tensor.empty(cols), rows)
  assert seen == want

@pytest.mark.parametrize("typ", TYPES)
@pytest.mark.parametrize("sms", [132, 16, 8])
def test_a_thread_unrolls_at_most_64_weights(typ, sms, monkeypatch):
  # more, with rows sharing a thread, takes sm_87's ptxas past 150 registers a thread: few workgroups an SM, or spills; 128 where 4 rows
  # share a lane's 32 x values at 8 lanes a block (Q4_K, Q5_K: 80-125); a long row still unrolls its blocks where a thread takes one
  for f in ("has_local", "has_byte_perm"): monkeypatch.setattr(nv, f, lambda device: True)
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  bs = nv.QUANTS[typ][0]
  for rows, cols in ((2048, 8192), (4096, 14336), (128256, 4096), (2048, 2048)):
    kw = nv._matvec_fxn(typ, "CUDA", cols, rows, rows, False).__wrapped__.keywords
    most = 128 if kw["lanes"] == 8 and kw["rows_th"] == 4 else 64
    assert kw["unroll"] * kw["rows_th"] * bs // kw["lanes"] <= most, (rows, cols, kw)
    assert kw["unroll"] > 1 or kw["rows_th"] > 1 or cols < 8192, (rows, cols, kw)

def test_only_nv_and_cuda():
  assert not any(nv.nv_custom_kernels_supported(d) for d in ("CPU", "NULL", "AMD", ("CPU", "CPU:1"), None))

def test_model_uses_it(tiny_gguf):
  m, _ = Transformer.from_gguf(tiny_gguf, max_context=16)
  assert all(isinstance(l, nv.Linear) for b in m.blk for l in (b.attn_q, b.attn_v, b.ffn_down)) and isinstance(m.output, nv.Linear)

def test_decode_reads_the_blocks(tiny_gguf, monkeypatch):
  # the CPU stands in for a GPU: the same kernels with the lanes as a global axis
  ref, _ = Transformer.from_gguf(tiny_gguf, max_context=16)
  want = [t for t,_ in zip(ref.generate([0, 5, 9]), range(2))]
  monkeypatch.setattr(nv, "nv_custom_kernels_supported", lambda d: True)
  m, _ = Transformer.from_gguf(tiny_gguf, max_context=16)
  calls, matvec = [], nv.matvec
  monkeypatch.setattr(nv, "matvec", lambda raw, typ, *a, **kw: calls.append(typ) or matvec(raw, typ, *a, **kw))
  assert [t for t,_ in zip(m.generate([0, 5, 9]), range(2))] == want
  # the Q6_K projections, q and k with their rows moved for RoPE as at load, and the Q8_0 head
  assert set(calls) == {nv.Q8_0, nv.Q6_K}
  assert all(b.attn_q.blocks[1] == b.attn_k.blocks[1] == nv.Q6_K for b in m.blk) and m.output.blocks[1] == nv.Q8_0
  # read where the file's tensors lie: no copy of a weight
  file_buf = m.output.blocks[0].uop.buffer.base
  assert all(b.ffn_down.blocks[0].uop.buffer.base is file_buf for b in m.blk)

def test_a_weights_blocks_are_found_as_it_loads(tiny_gguf, monkeypatch):
  # a first prompt does not search the weights' graphs for their blocks: loading did, and only where the custom kernels run
  m, _ = Transformer.from_gguf(tiny_gguf, max_context=16)
  assert not any(hasattr(l, "blocks") for l in (m.output, m.blk[0].attn_q))
  monkeypatch.setattr(nv, "nv_custom_kernels_supported", lambda d: True)
  m, _ = Transformer.from_gguf(tiny_gguf, max_context=16)
  assert all(l.blocks is not None for b in m.blk for l in (b.attn_q, b.attn_k, b.attn_output, b.ffn_up, b.ffn_down)) and m.output.blocks is not None
  monkeypatch.setattr(nv, "ggml_blocks", lambda w: pytest.fail("a weight's blocks were searched after loading"))
  assert 0 <= next(m.generate([0, 5, 9])) < m.output.weight.shape[0]

def test_decode_reads_iq4_xs_blocks(tmp_path, monkeypatch):
  # IQ4_XS's table lookup: a weight's dequantization is found again, the tokens are the CPU's
  path = tiny_llama(tmp_path / "iq4_xs.gguf", nv.IQ4_XS)
  want = [t for t,_ in zip(Transformer.from_gguf(path, max_context=16)[0].generate([0, 5, 9]), range(3))]
  monkeypatch.setattr(nv, "nv_custom_kernels_supported", lambda d: True)
  m, _ = Transformer.from_gguf(path, max_context=16)
  assert [t for t,_ in zip(m.generate([0, 5, 9]), range(3))] == want
  assert all(l.blocks[1] == nv.IQ4_XS for b in m.blk for l in (b.attn_q, b.attn_k, b.attn_v, b.attn_output, b.ffn_gate, b.ffn_up, b.ffn_down))

@pytest.mark.parametrize("sms", [8, 132])
def test_a_prompts_matmul_reads_eight_halves_of_a_row_at_once(sms, monkeypatch):
  # a WMMA of two k16 mmas: a tensor-core lane's 8 slots of a row in both are k 8q..8q+7, one 16-byte load: SM-count tiles and the heuristic's
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  monkeypatch.setattr(nv, "has_tensor_cores", lambda device: True)
  phs = [UOp.placeholder(s, dt, i) for i, (s, dt) in enumerate([((512, 2048), dtypes.float), ((512, 2048), dtypes.half),
                                                                  ((2048, 2048), dtypes.half)])]
  src = cuda_program(nv._matmul_kernel(*phs, opts=nv.matmul_tiles(512, 2048, 2048, "CUDA")), "sm_87").src[2].arg
  assert "__WMMA_8_16_32_half_float" in src and src.count("mma.sync.aligned.m16n8k16") == 2
  assert "*((half8*)" in src and "*((half4*)" not in src and "*((half2*)" not in src

@pytest.mark.parametrize("sms,want", [(8, {(512, 2048): 4, (512, 512): 2, (512, 8192): 4, (128, 2048): 2, (64, 1024): None, (32, 2048): None}),
                                      (132, {(512, 2048): None, (512, 4096): None, (512, 6144): None, (512, 8192): 2, (512, 14336): 2})])
def test_a_prompts_matmul_tiles_follow_the_sms(sms, want, monkeypatch):
  # a warp's 64 tokens by 64 rows in workgroups of 4 or 2 warps where every SM keeps 4 workgroups, or of 2 where their waves (4 an SM)
  # take no longer than the heuristic's (3): a whole H200 takes them for an 8B's 14336-row gate and a 1B's 8192 (512 workgroups, one
  # wave of ours, two of the heuristic's), not for Qwen3's 6144 (384, one wave of the heuristic's); 8 SMs take them for all
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  monkeypatch.setattr(nv, "has_tensor_cores", lambda device: True)
  got = {(T, N): None if (o:=nv.matmul_tiles(T, N, 2048, "CUDA")) is None else next(x.arg for x in o if x.op.name == "LOCAL") for T, N in want}
  assert got == want
  monkeypatch.setattr(nv, "has_tensor_cores", lambda device: False)
  assert nv.matmul_tiles(512, 2048, 2048, "CUDA") is None

@pytest.mark.parametrize("sms,want", [(132, {(2048, 8192): 4, (2048, 2048): 4, (2048, 6144): 4, (4096, 4096): 2, (4096, 14336): 2,
                                             (3072, 2048): None, (8192, 2048): 1, (6144, 4096): None}),
                                      (8, {(2048, 8192): 1, (2048, 2048): 1, (4096, 14336): 1, (3072, 2048): 1})])
def test_a_prompts_long_sums_split_where_the_tiles_leave_sms_idle(sms, want, monkeypatch):
  # (N, K) of a 512-token prompt: a whole H200 splits the down and o matmuls' K (K >= N) into the fewest runs matmul_tiles gives tiles,
  # keeps the heuristic's for q/k/v, tiles a 1B's gate and up in one run; 8 SMs take the tiles of one run
  monkeypatch.setattr(nv, "sm_count", lambda device: sms)
  monkeypatch.setattr(nv, "has_tensor_cores", lambda device: True)
  assert {nk: None if (r:=nv.matmul_splits(512, *nk, "CUDA")) is None else r[0] for nk in want} == want
