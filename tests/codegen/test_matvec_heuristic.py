# hand_coded_optimizations must give fp16 matvecs (fp32 accumulate, scales, fused RMSNorm) the matvec opts and leave other reduces alone.
# Kernels are scheduled on the NULL device and optimized for the sm_87 renderers: no GPU needed.
import pytest
from tinygrad import Tensor, dtypes, nn
from tinygrad.helpers import Target, Context
from tinygrad.codegen import full_rewrite_to_sink
from tinygrad.codegen.opt import OptOps
from tinygrad.llm.model import Transformer, TransformerConfig
from tinygrad.nn.state import get_state_dict
from tinygrad.renderer.cstyle import CUDARenderer
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.uop.ops import Ops

RENDERERS = {"cuda": lambda: CUDARenderer(Target("NV", "CUDA", "sm_87")), "ptx": lambda: PTXRenderer(Target("NV", "PTX", "sm_87"))}
MATVEC = [(OptOps.GROUP, 8), (OptOps.LOCAL, 4), (OptOps.UPCAST, 4)]  # MV_THREADS_PER_ROW, MV_BLOCKSIZE, MV_ROWS_PER_THREAD

def empty(*shape, dtype=dtypes.half) -> Tensor: return Tensor.empty(*shape, dtype=dtype, device="NULL")
def kernel_opts_of(ast, ren) -> list[tuple[OptOps, int]]: return [(o.op, o.arg) for o in full_rewrite_to_sink(ast, ren).arg.applied_opts]
def kernel_opts(t:Tensor, ren) -> list[list[tuple[OptOps, int]]]:
  return [kernel_opts_of(c.src[0], ren) for c in t.schedule_linear().src if c.src[0].op is Ops.SINK]
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
  assert kernel_opts(case(), ren())[-1] == MATVEC

# opts of pristine a9069c17: none of these is a matvec
GROUPTOP = [(OptOps.GROUPTOP, 16)]
NOT_MATVECS = {
  "fp16 row sum": (lambda: empty(64, 2048).float().sum(axis=1), GROUPTOP),
  "fp16 dot": (lambda: (empty(2048) * empty(2048)).sum(dtype=dtypes.float), GROUPTOP),
  "fp16 exp row sum": (lambda: empty(64, 2048).float().exp().sum(axis=1), GROUPTOP),
  "fp16 rows times vector": (lambda: (W * empty(2048)).sum(axis=1, dtype=dtypes.float), GROUPTOP),
  "fp16 M=3 matmul": (lambda: empty(3, 2048) @ empty(512, 2048).T, GROUPTOP),
  "fp16 M=3 wide matmul": (lambda: empty(3, 2048) @ empty(8192, 2048).T,
                           [(OptOps.UPCAST, 4), (OptOps.UPCAST, 3), (OptOps.UNROLL, 4), (OptOps.LOCAL, 32)]),
}

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("case,opts", NOT_MATVECS.values(), ids=NOT_MATVECS.keys())
def test_other_reduces_keep_their_opts(case, opts, ren):
  assert kernel_opts(case(), ren()) == [opts]

@pytest.fixture(scope="module")
def llama_1b_decode():
  # one block of LLaMA-3.2-1B with fp16 weights, one decode step
  with Context(DEV="NULL"):
    model = Transformer(TransformerConfig(num_blocks=1, dim=2048, hidden_dim=8192, n_heads=32, n_kv_heads=8, norm_eps=1e-5, vocab_size=128256,
                                          head_dim=64, rope_theta=500000.0, rope_dim=64, v_head_dim=64, max_context=32))
    for v in get_state_dict(model).values(): v.replace(Tensor.empty(*v.shape, dtype=dtypes.half))
    blk = model.blk[0]
    weights = {"q": blk.attn_q, "k": blk.attn_k, "v": blk.attn_v, "o": blk.attn_output, "gate": blk.ffn_gate, "up": blk.ffn_up,
               "down": blk.ffn_down, "lm_head": model.output}
    calls = [c for c in model.forward(Tensor([[1]]), 3, Tensor(1.0)).schedule_linear().src if c.src[0].op is Ops.SINK]
  return {name:[c.src[0] for c in calls if any(s.base is lin.weight.uop.base for s in c.src[1:])] for name,lin in weights.items()}, calls

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
def test_llama_decode_census(llama_1b_decode, ren):
  by_weight, calls, ren = *llama_1b_decode, ren()
  census = {name:[kernel_opts_of(a, ren) for a in asts] for name,asts in by_weight.items()}
  assert census == {name:[MATVEC] for name in by_weight}
  # and no other kernel of the step takes them
  assert [kernel_opts_of(c.src[0], ren) for c in calls].count(MATVEC) == len(by_weight)
