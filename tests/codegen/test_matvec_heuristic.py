# hand_coded_optimizations must give fp16 LLM matvecs (fp32 accumulate, scales, fused RMSNorm) the matvec opts and leave other reduces alone.
# Kernels are scheduled on the NULL device and lowered with the sm_87 renderers: no GPU needed.
import collections
import pytest
from tinygrad import Tensor, Device, dtypes, nn, getenv
from tinygrad.apps.llm import Transformer, precompute_freqs_cis
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.engine import realize
from tinygrad.nn.state import get_state_dict
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.uop.ops import Ops

# the matvec opts by default: 64 threads a row (MV_THREADS_PER_ROW), 4 rows a block (MV_BLOCKSIZE), one row a thread (0.12.0: 8 threads a row and
# 4 rows a thread, 3.2x slower on an H100, docs/benchmarks.md)
def is_matvec(o:tuple[Opt, ...]) -> bool: return [(x.op, x.arg) for x in o] == [(OptOps.GROUP, 64), (OptOps.LOCAL, 4)]
RENDERERS = {"cuda_c": lambda: NVRenderer("sm_87"), "ptx": lambda: PTXRenderer("sm_87", device="NV")}

def empty(*shape, dtype=dtypes.half) -> Tensor: return Tensor.empty(*shape, dtype=dtype, device="NULL")
def kernel_opts(t:Tensor, ren) -> list[tuple[Opt, ...]]:
  return [get_program(si.ast, ren).applied_opts for si in t.schedule() if si.ast.op is Ops.SINK]
def rms_norm(x:Tensor) -> Tensor:
  norm = nn.RMSNorm(x.shape[-1])
  norm.weight = empty(x.shape[-1])
  return norm(x)

X, W, S = empty(1, 2048), empty(512, 2048), empty(512, 1)
MATVECS = {
  "x@W.T": lambda: X @ W.T,
  "x@W.T fp32 acc": lambda: X.matmul(W.T, dtype=dtypes.float),
  "x@(W*s).T": lambda: X @ (W * S).T,
  "rmsnorm(x)@W.T": lambda: rms_norm(X) @ W.T,
  "x.float()@W.cast(float).T": lambda: X.float() @ W.cast(dtypes.float).T,
}

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("case", MATVECS.values(), ids=MATVECS.keys())
def test_fp16_matvec_gets_matvec_opts(case, ren):
  assert is_matvec(kernel_opts(case(), ren())[-1])

# the SM count sizes the threads of a quantized block's lanes only: an fp16 matvec's 64 threads a row fill any GPU, with any SM count
@pytest.mark.parametrize("sms", [None, 8, 16, 132])
def test_fp16_matvec_opts_do_not_depend_on_the_sm_count(sms):
  for case in MATVECS.values(): assert is_matvec(kernel_opts(case(), NVRenderer("sm_87", sms))[-1])
  assert is_matvec(kernel_opts(empty(1, 8192) @ empty(2048, 8192).T, PTXRenderer("sm_87", "NV", sms))[-1])

# opts recorded from unpatched tinygrad 0.12.0: none of these is a matvec
def opts(*o:tuple[OptOps, int, int]) -> tuple[Opt, ...]: return tuple(Opt(op, axis, arg) for op,axis,arg in o)
GROUPTOP = opts((OptOps.GROUPTOP, 0, 16))
GROUPTOP_256 = opts((OptOps.GROUPTOP, 0, 256))  # a reduce to one value gets 256 threads, not 16 (patch 0030)
NOT_MATVECS = {
  "fp16 row sum": (lambda: empty(64, 2048).float().sum(axis=1), GROUPTOP),
  "fp16 dot": (lambda: (empty(2048) * empty(2048)).sum(dtype=dtypes.float), GROUPTOP_256),
  "fp16 exp row sum": (lambda: empty(64, 2048).float().exp().sum(axis=1), GROUPTOP),
  "fp16 rows times vector": (lambda: (W * empty(2048)).sum(axis=1, dtype=dtypes.float), GROUPTOP),
  "fp16 M=3 matmul": (lambda: empty(3, 2048) @ empty(512, 2048).T, GROUPTOP),
  "fp16 M=3 wide matmul": (lambda: empty(3, 2048) @ empty(8192, 2048).T,
                           opts((OptOps.UPCAST, 1, 4), (OptOps.UPCAST, 0, 3), (OptOps.UNROLL, 0, 4), (OptOps.LOCAL, 0, 32))),
}

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("case,opts", NOT_MATVECS.values(), ids=NOT_MATVECS.keys())
def test_other_reduces_keep_their_opts(case, opts, ren):
  assert kernel_opts(case(), ren()) == [opts]

class Capture:
  def __init__(self): self.items: list[realize.ExecItem] = []
  def add(self, ei:realize.ExecItem): self.items.append(ei)

@pytest.fixture(scope="module")
def llama_1b_block():
  # one block of LLaMA-3.2-1B with fp16 weights, one decode step; NULL runs nothing, so the KV cache realize inside attention is free too
  mp = pytest.MonkeyPatch()
  mp.setattr(Device, "DEFAULT", "NULL")
  precompute_freqs_cis.cache_clear()  # a RoPE table of this shape cached by an earlier test lives on another device
  model = Transformer(num_blocks=1, dim=2048, hidden_dim=8192, n_heads=32, n_kv_heads=8, norm_eps=1e-5, vocab_size=128256, head_dim=64,
                      rope_theta=500000.0, max_context=32)
  for v in get_state_dict(model).values(): v.replace(Tensor.empty(*v.shape, dtype=dtypes.half))
  realize.capturing.append(cap:=Capture())
  try: model(Tensor([[1]]), 3).realize()
  finally:
    realize.capturing.remove(cap)
    mp.undo()
    precompute_freqs_cis.cache_clear()  # and ours lives on NULL: don't hand it to later tests
  blk = model.blk[0]
  weights = {"q": blk.attn_q, "k": blk.attn_k, "v": blk.attn_v, "o": blk.attn_output, "gate": blk.ffn_gate, "up": blk.ffn_up,
             "down": blk.ffn_down, "lm_head": model.output}
  kernels = [ei for ei in cap.items if ei.ast.op is Ops.SINK]
  by_weight = {name:[ei.ast for ei in kernels if any(b is lin.weight.uop.buffer for b in ei.bufs)] for name,lin in weights.items()}
  others = [ei.ast for ei in kernels if not any(ei.ast is a for asts in by_weight.values() for a in asts)]
  return by_weight, others

# the block's 16 other kernels (embedding, norms, rope, KV cache, attention, argmax) as lowered by unpatched tinygrad 0.12.0. The apps/llm
# patches dropped 7: greedy decode the 4 of the softmax over the vocab (a max and an exp sum, GROUPTOP, and two elementwise), realizing q
# with the KV cache update the second attn_norm sum (GROUPTOP) and the second embedding (its two split-reduce kernels). Decode attention over
# the cache rounded up to 16 positions turned the softmax max and sum (UNROLL, LOCAL 32) and the weighted sum of v (UPCAST, UNROLL, LOCAL,
# LOCAL), serial over the positions, into GROUPTOP 16. The five reduces to one value (the RMSNorm sums of squares of attention, ffn and
# output, the argmax's max and index over its 256 partials) spread over 256 threads, not 16
OTHER_KERNEL_OPTS = collections.Counter({GROUPTOP: 5, GROUPTOP_256: 5, opts((OptOps.UPCAST, 0, 4), (OptOps.LOCAL, 0, 32)): 3,
  opts((OptOps.UPCAST, 1, 4), (OptOps.LOCAL, 0, 8), (OptOps.LOCAL, 1, 16)): 3})

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
def test_llama_block_census(llama_1b_block, ren):
  by_weight, others, ren = *llama_1b_block, ren()
  census = {name:[get_program(a, ren).applied_opts for a in asts] for name,asts in by_weight.items()}
  assert {name:[is_matvec(o) for o in ol] for name,ol in census.items()} == {name:[True] for name in by_weight}, census
  assert collections.Counter(get_program(a, ren).applied_opts for a in others) == OTHER_KERNEL_OPTS

@pytest.fixture
def mv_env(monkeypatch):
  """set MV_* for one test: the heuristic reads them through the cached getenv"""
  def setenv(**kv):
    for k, v in kv.items(): monkeypatch.setenv(k, str(v))
    getenv.cache_clear()
  yield setenv
  monkeypatch.undo()
  getenv.cache_clear()

# a weight that unpacks several values from each byte (Q6_K) sums one product per unpacked value into one reduce
X2, W2 = empty(1, 2048), empty(512, 2048)
@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
def test_sum_of_matvec_products_gets_matvec_opts(ren):
  assert is_matvec(kernel_opts((X * W + X2 * W2).sum(axis=-1, dtype=dtypes.float), ren())[-1])
  assert is_matvec(kernel_opts((X * W + X2 * W2).sum(axis=-1), ren())[-1])

# a reduce axis shorter than a row's threads (the 32 byte lanes of a quantized block) is spread over threads whole
@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
def test_reduce_axis_shorter_than_the_threads_of_a_row(ren, mv_env):
  mv_env(MV_THREADS_PER_ROW=64, MV_ROWS_PER_THREAD=1)
  assert [(o.op, o.arg) for o in kernel_opts(empty(1, 32) @ empty(512, 32).T, ren())[-1]] == [(OptOps.GROUP, 32), (OptOps.LOCAL, 4)]
  assert [(o.op, o.arg) for o in kernel_opts(X @ W.T, ren())[-1]] == [(OptOps.GROUP, 64), (OptOps.LOCAL, 4)]
  # 48 lanes do not divide 64 threads: no matvec opts
  assert OptOps.GROUP not in [o.op for o in kernel_opts(empty(1, 48) @ empty(512, 48).T, ren())[-1]]

# a prompt's ffn_down multiplies a product of two activations (gate and up, T rows each) by the weight: up covers gate's ranges, but no factor
# steps with a row the activations do not, so it is a matmul, not a matvec (as a matvec, a 512-token prompt's loads were 25x a matmul's)
@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
def test_a_product_of_activations_times_a_weight_is_no_matvec(ren):
  a, b = empty(16, 2048, dtype=dtypes.float), empty(16, 2048, dtype=dtypes.float)
  assert OptOps.GROUP not in [o.op for o in kernel_opts((a * b) @ W.T, ren())[-1]]
  assert is_matvec(kernel_opts((a[:1] * b[:1]) @ W.T, ren())[-1])   # decode's (T=1) stays one
