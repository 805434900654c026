# A matvec over quantized blocks (QuantLinear) gets the matvec opts: GROUP over the lanes of a block, LOCAL over rows; with the device's SM count,
# a second GROUP over the blocks or an UPCAST over rows to fill the SMs.
# Kernels are scheduled on the NULL device and lowered with the sm_87 renderers: no GPU needed.
import re, pytest
from tinygrad import Tensor, dtypes, getenv
from tinygrad.apps.llm import QuantLinear, QUANT_LANES
from tinygrad.helpers import prod
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.renderer.cstyle import NVRenderer
from tinygrad.renderer.ptx import PTXRenderer
from tinygrad.runtime.support.compiler_cuda import CUDACompiler, NVCompiler, NVPTXCompiler
from tinygrad.uop.ops import Ops
from qmatvec_count import ptx_loop  # scripts/, on the path from conftest.py

RENDERERS = {"cuda_c": lambda: NVRenderer("sm_87"), "ptx": lambda: PTXRenderer("sm_87", device="NV")}
COMPILERS = {"cuda_c": lambda: NVCompiler("sm_87"), "ptx": lambda: NVPTXCompiler("sm_87")}  # NVRTC and nvJitLink from the PyPI wheels
# (in, out) of the LLaMA-3.2-1B projections: q and o, k and v, gate and up, down, the tied lm_head
SHAPES = {"q,o": (2048, 2048), "k,v": (2048, 512), "gate,up": (2048, 8192), "down": (8192, 2048), "lm_head": (2048, 128256)}

# and the UNROLL of the k = 32/QUANT_LANES weights a lane unpacks from its words (x's k values one vector load); one row a thread by default
def is_matvec(o:tuple[Opt, ...]) -> bool: return [(x.op, x.arg) for x in o] == [(OptOps.GROUP, 8), (OptOps.LOCAL, 4), (OptOps.UNROLL, 0)]

def matvec_kernel(in_f:int, out_f:int, ggml_type:int):
  lin = QuantLinear(in_f, out_f, ggml_type)
  lin.blocks = Tensor.empty(*lin.blocks.shape, dtype=lin.blocks.dtype, device="NULL")
  # a half x: its float32 buffer is a kernel of its own (as the RMSNorm making x is in decode), the matvec the kernel reading the blocks
  sched = [si for si in lin(Tensor.empty(1, 1, in_f, dtype=dtypes.half, device="NULL")).schedule() if lin.blocks.uop.buffer in si.bufs]
  assert len(sched) == 1, "dequantize and matvec are one kernel"
  return sched[0].ast

@pytest.mark.parametrize("ren", RENDERERS.values(), ids=RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_quantized_matvec_gets_matvec_opts(shape, ggml_type, ren):
  assert is_matvec(get_program(matvec_kernel(*shape, ggml_type), ren()).applied_opts)

# what the heuristic gives each projection with the renderer's SM count: (GROUP over the blocks, UPCAST over rows), each None when not applied.
# Aim: 1024 threads an SM. Rows x 8 lanes short of it split each row's blocks over groups of lanes (an H100's 132 SMs: all but the lm_head);
# rows leaving twice that to spare give a thread 2 or 4 rows (the lm_head everywhere, gate/up at 14 and 8 SMs); between the two, a thread takes
# 2 or 4 rows where splitting the blocks over groups (each walking 4 or more) brings the threads back (q, o and down at 14 and 8 SMs: 0059);
# an Orin's 16 SMs lie between.
SM_OPTS = {132: {"q,o": (8, None), "k,v": (8, None), "gate,up": (4, None), "down": (8, None), "lm_head": (None, 2)},
           14: {"q,o": (2, 2), "k,v": (4, None), "gate,up": (None, 2), "down": (4, 4), "lm_head": (None, 4)},
           8: {"q,o": (2, 4), "k,v": (2, None), "gate,up": (None, 4), "down": (2, 4), "lm_head": (None, 4)}}
@pytest.mark.parametrize("ren", [NVRenderer, lambda a, sms: PTXRenderer(a, "NV", sms)], ids=RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
@pytest.mark.parametrize("sms", SM_OPTS.keys())
def test_quantized_matvec_threads_follow_the_sm_count(sms, ggml_type, ren):
  for name, (in_f, out_f) in SHAPES.items():
    p = get_program(matvec_kernel(in_f, out_f, ggml_type), ren("sm_87", sms))
    groups, rows = SM_OPTS[sms][name]
    assert [(o.op, o.arg) for o in p.applied_opts] == [(OptOps.GROUP, 8)] + [(OptOps.GROUP, groups)] * bool(groups) + [(OptOps.LOCAL, 4)] + \
      [(OptOps.UPCAST, rows)] * bool(rows) + [(OptOps.UNROLL, 0)], name
    threads = prod(p.global_size) * prod(p.local_size)
    # enough threads for the SMs, or as many as MV_THREADS_PER_ROW (64) a row allows; up to 4 rows a thread with twice enough to spare, or with
    # the blocks split to keep enough
    assert threads >= sms * 1024 or threads == out_f * 64, name
    if rows: assert threads >= (1 if groups else 2) * sms * 1024, name

@pytest.mark.parametrize("backend", RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
def test_quantized_matvec_compiles_for_sm_87(ggml_type, backend):
  # byte loads, shifts, masks and bitcasts to fp16 and int8: the CUDA C and the PTX of the fused kernel must build for the Orin
  assert len(COMPILERS[backend]().compile(get_program(matvec_kernel(2048, 2048, ggml_type), RENDERERS[backend]()).src)) > 0

def thread_strides(p) -> list[int]:
  """how many words a block load moves when the first local thread index (the GROUP over the reduce) steps by one, other indices at 0"""
  out = []
  for u in p.uops:
    if u.op is Ops.INDEX and u.src[0].op is Ops.DEFINE_GLOBAL and dtypes.is_unsigned(u.src[0].dtype.base):
      vs = [v for v in u.src[1].toposort() if v.op in (Ops.SPECIAL, Ops.RANGE)]
      at = lambda t: u.src[1].substitute({v:v.const_like(t if v.op is Ops.SPECIAL and v.arg == "lidx0" else 0) for v in vs}).simplify().arg
      out.append(at(1) - at(0))
  return out

@pytest.fixture
def mv_env(monkeypatch):
  def setenv(**kv):
    for k, v in kv.items(): monkeypatch.setenv(k, str(v))
    getenv.cache_clear()
  yield setenv
  monkeypatch.undo()
  getenv.cache_clear()

# the threads of a row spread over the QUANT_LANES lanes of a block, each lane 32/QUANT_LANES consecutive quant bytes (Q4_K qs, Q6_K ql and qh) next to
# its neighbour's (1 uint32 word), and the scales, mins and d shared, whatever the row length
@pytest.mark.parametrize("threads", [32, 64])
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_quantized_matvec_spreads_block_lanes_over_threads(shape, ggml_type, threads, mv_env):
  mv_env(MV_BLOCKSIZE=4, MV_THREADS_PER_ROW=threads, MV_ROWS_PER_THREAD=1)
  p = get_program(matvec_kernel(*shape, ggml_type), RENDERERS["cuda_c"]())
  assert [(o.op, o.arg) for o in p.applied_opts] == [(OptOps.GROUP, QUANT_LANES), (OptOps.LOCAL, 4), (OptOps.UNROLL, 0)]
  assert sorted(set(thread_strides(p))) == [0, 32 // QUANT_LANES // 4], \
    "a thread's quant bytes follow its neighbour's, scales and d shared"

# the dequantization inside the matvec makes floats of bytes without int to float conversions (I2F issues at 1/8 the FMA rate on sm_86/87,
# and there were two per weight), and its loop stays within the instruction count per weight measured for the patches (scripts/qmatvec_count.py:
# 0033-0034 PTX lines a weight 14.1 and 13.4 (NVRTC), 21.6 and 23.5 (tinygrad's PTX) for Q4_K and Q6_K; 0035-0038 11.1, 10.2, 12.7, 15.3; a weight's
# byte one prmt, 0047-0048: 10.0, 9.1, 11.4, 14.0; a weight one FMA of 0.5 + q/256, 0057: 9.1, 8.3, 10.9, 13.3). Float32 operations a weight in the
# loop: 5.0, 3.5, 4.4, 3.6 before 0057 (a subtraction, a multiply by the scale and the FMA with x), 3.5, 2.75, 3.6, 2.9 with it
PTX_LOOP_PER_WEIGHT = {("cuda_c", 12): 9.5, ("cuda_c", 14): 8.75, ("ptx", 12): 11.25, ("ptx", 14): 13.5}
FP32_PER_WEIGHT = {12: 3.75, 14: 3.0}
FP32_OP = re.compile(r"(fma\.rn|mul(\.rn)?|add(\.rn)?|sub(\.rn)?)\.f32\b")
INT_TO_FLOAT = re.compile(r"\bcvt(\.rn)?\.f(16|32)\.[su](8|16|32|64)\b")
@pytest.mark.parametrize("backend", RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
def test_quantized_matvec_instructions_per_weight(ggml_type, backend, mv_env):
  mv_env(MV_BLOCKSIZE=4, MV_THREADS_PER_ROW=64, MV_ROWS_PER_THREAD=1)
  p = get_program(matvec_kernel(2048, 2048, ggml_type), RENDERERS[backend]())
  ptx = CUDACompiler("sm_87").compile(p.src).decode() if backend == "cuda_c" else p.src
  assert not INT_TO_FLOAT.findall(ptx), "bytes become floats by their bits, not by cvt"
  gs, ls = p.launch_dims({})
  weights_per_iter = 2048 * 2048 / (prod(gs) * prod(ls)) / next(u for u in p.uops if u.op is Ops.RANGE).src[0].arg
  assert len(loop:=ptx_loop(ptx)) / weights_per_iter <= PTX_LOOP_PER_WEIGHT[(backend, ggml_type)]
  assert sum(bool(FP32_OP.match(l)) for l in loop) / weights_per_iter <= FP32_PER_WEIGHT[ggml_type], "a weight: one FMA to make it, one with x"
  # each weight's byte taken into 0.5's mantissa by one byte permute, not shifts, an and and an or
  assert sum(l.startswith("prmt") for l in loop) >= weights_per_iter

# the blocks are read as uint32 words (Q6_K's 210-byte blocks padded to 212 at load, 0058), not bytes, and a lane's 4 consecutive x as one vector
# load: global loads a weight in the loop were 2.0 (Q4_K) and 2.06 (Q6_K) with byte loads, 1.25 and 1.66 with words (Q6_K's uint16), 0.5 and 0.91
# with a lane's x one vector load (PTX), Q6_K 0.59 with uint32 words (scripts/qmatvec_count.py)
LOADS_PER_WEIGHT = {12: 0.5, 14: 0.6}
X_VECTOR_LOAD = re.compile(r"\bld\.global(\.nc)?\.v4\.[bfu](16|32)\b")
@pytest.mark.parametrize("backend", RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
def test_quantized_matvec_reads_blocks_as_words_and_x_as_vectors(ggml_type, backend, mv_env):
  mv_env(MV_BLOCKSIZE=4, MV_THREADS_PER_ROW=64, MV_ROWS_PER_THREAD=1)
  p = get_program(matvec_kernel(2048, 2048, ggml_type), RENDERERS[backend]())
  ptx = CUDACompiler("sm_87").compile(p.src).decode() if backend == "cuda_c" else p.src
  loop = ptx_loop(ptx)
  assert not [l for l in loop if re.search(r"\bld\.global(\.\w+)*\.[us]8\b", l)], "no byte loads"
  assert len([l for l in loop if X_VECTOR_LOAD.search(l)]) == 8, "x: one vector load a lane and run"
  gs, ls = p.launch_dims({})
  weights_per_iter = 2048 * 2048 / (prod(gs) * prod(ls)) / next(u for u in p.uops if u.op is Ops.RANGE).src[0].arg
  assert sum("ld.global" in l for l in loop) / weights_per_iter <= LOADS_PER_WEIGHT[ggml_type]

# x is read from a float32 buffer: from a half one, every weight converted its x (cvt.f32.f16, 32 in the loop); left: the blocks' d (and dmin)
@pytest.mark.parametrize("backend", RENDERERS.keys())
@pytest.mark.parametrize("ggml_type", [12, 14], ids=["q4_k", "q6_k"])
def test_quantized_matvec_converts_no_x_in_its_loop(ggml_type, backend, mv_env):
  mv_env(MV_BLOCKSIZE=4, MV_THREADS_PER_ROW=64, MV_ROWS_PER_THREAD=1)
  p = get_program(matvec_kernel(2048, 2048, ggml_type), RENDERERS[backend]())
  ptx = CUDACompiler("sm_87").compile(p.src).decode() if backend == "cuda_c" else p.src
  assert sum(bool(re.search(r"\bcvt\.f32\.f16\b", l)) for l in ptx_loop(ptx)) <= 2
