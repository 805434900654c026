# A prompt (T > 1): its matmuls in fp16 on the tensor cores (patch 0050), their inputs fp16 buffers (0053), its attention on the tensor
# cores too (0054), and through a JIT of its length rounded up to a power of two (patch 0052): the kernels of the third prompt of a length
# replay, with the tokens of the plain forward.
import pytest
import tinygrad.tensor
from tinygrad import Tensor, Device, dtypes, getenv
from tinygrad.apps.llm import Transformer, precompute_freqs_cis
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import OptOps
from tinygrad.engine import realize
from tinygrad.nn.state import get_state_dict
from tinygrad.renderer.cstyle import CUDARenderer, NVRenderer
from tinygrad.uop.ops import Ops
from decode_helpers import PROMPTS, Capture, decode_step, prompt_kernels

@pytest.fixture(scope="module")
def llama_1b_prompt():
  """the kernels of a 16-token prompt through two blocks of LLaMA-3.2-1B (fp16 weights) on NULL: the projections' (by name) and the attention's
  matmuls"""
  mp = pytest.MonkeyPatch()
  mp.setattr(Device, "DEFAULT", "NULL")
  precompute_freqs_cis.cache_clear()  # a RoPE table of this shape cached by an earlier test lives on another device
  model = Transformer(num_blocks=2, dim=2048, hidden_dim=8192, n_heads=32, n_kv_heads=8, norm_eps=1e-5, vocab_size=128256, head_dim=64,
                      rope_theta=500000.0, max_context=64)
  for b in model.blk: b.fuse_projections()
  for v in get_state_dict(model).values(): v.replace(Tensor.empty(*v.shape, dtype=dtypes.half))
  realize.capturing.append(cap:=Capture())
  try: model.forward(Tensor([list(range(16))], dtype="int32"), 0).realize()
  finally:
    realize.capturing.remove(cap)
    mp.undo()
    precompute_freqs_cis.cache_clear()  # and ours lives on NULL: don't hand it to later tests
  weights = {l.weight.uop.buffer: name for b in model.blk for name, l in vars(b).items() if name.startswith(("attn_", "ffn_")) and hasattr(l, "weight")
             and not name.endswith("norm")}
  kernels = [ei for ei in cap.items if ei.ast.op is Ops.SINK]
  # the attention's matmuls: the reduces that read a KV cache (q times k, the probabilities times v)
  caches = {b.cache_kv.uop.buffer for b in model.blk}
  return dict(projections=[(weights[w], ei.ast) for ei in kernels for w in ei.bufs if w in weights],
              attention=[ei.ast for ei in kernels if caches & set(ei.bufs) and any(u.op is Ops.REDUCE for u in ei.ast.toposort())])

@pytest.mark.parametrize("ren", [CUDARenderer("sm_90", 132), NVRenderer("sm_87", 8)], ids=["sm_90", "sm_87"])
def test_prompt_matmuls_run_on_the_tensor_cores(llama_1b_prompt, ren):
  # every block's q/k/v, output, gate/up and down projection: float32 inputs (the residual stream after block 0's attention) kept them off
  # the tensor cores, ffn_down a matvec kernel too (the gated product looked like a weight)
  assert sorted(n for n, _ in llama_1b_prompt["projections"]) == sorted(["attn_qkv", "attn_output", "ffn_gate_up", "ffn_down"] * 2)
  opts = {f"{i // 4} {n}": [o.op for o in get_program(ast, ren).applied_opts] for i, (n, ast) in enumerate(llama_1b_prompt["projections"])}
  assert all(ops[0] is OptOps.TC for ops in opts.values()), opts

@pytest.mark.parametrize("ren", [CUDARenderer("sm_90", 132), NVRenderer("sm_87", 8)], ids=["sm_90", "sm_87"])
def test_prompt_attention_runs_on_the_tensor_cores(llama_1b_prompt, ren):
  # q times k and the probabilities times v: float32 q (after the RoPE table) kept scaled_dot_product_attention's matmuls off the tensor cores
  assert len(attn:=llama_1b_prompt["attention"]) == 4   # two blocks' q k and p v
  assert all(get_program(ast, ren).applied_opts[0].op is OptOps.TC for ast in attn)

def test_prompt_matmuls_read_fp16_buffers(llama_1b_prompt):
  # each projection's reduce multiplies two fp16 loads, x and the weight: the RMSNorm, gate times up and the casts run once in kernels of their
  # own, not again in the loads of every tile
  for name, ast in llama_1b_prompt["projections"]:
    (red,) = [u for u in ast.toposort() if u.op is Ops.REDUCE]
    loads = [u for u in red.src[0].toposort() if u.op is Ops.INDEX]
    assert len(loads) == 2 and all(u.dtype == dtypes.half for u in loads), (name, [(u.dtype, u.src[0].arg) for u in loads])

def run_counted(model:Transformer, tokens:list[int], start_pos:int, monkeypatch) -> tuple[int, int]:
  """the next token after a prompt through model(), and how many graphs were scheduled for it"""
  scheduled, sched = [], tinygrad.tensor.complete_create_schedule_with_vars
  with monkeypatch.context() as m:
    m.setattr(tinygrad.tensor, "complete_create_schedule_with_vars", lambda *a, **kw: scheduled.append(1) or sched(*a, **kw))
    return model(Tensor([tokens], dtype="int32"), start_pos).item(), len(scheduled)

def test_a_prompt_replays_the_jit_of_its_length(tiny_gguf, monkeypatch):
  model = Transformer.from_gguf(Tensor(tiny_gguf), max_context=64)[0]
  ref = Transformer.from_gguf(Tensor(tiny_gguf), max_context=64)[0]
  # prompts of 3 and 5 tokens at position 0 pad to 16 (one JIT), later ones at position 3 to 16 and 32 (start_pos a variable)
  for i, (toks, sp) in enumerate([([768, 300, 301], 0), ([768, 7, 9, 10, 11], 0), ([768, 99, 640], 0), ([5, 6, 7], 3), ([8, 9, 10, 11], 3),
                                  ([1, 2, 3], 3), ([11] * 20, 3)]):
    tok, scheduled = run_counted(model, toks, sp, monkeypatch)
    assert tok == ref.forward(Tensor([toks], dtype="int32"), sp).item(), (toks, sp)
    # the first two prompts of a length schedule their graphs (the second captures them), the third only its padded tokens, then launches
    # the captured kernels
    assert (scheduled == 1) == (i in (2, 5)) and scheduled >= 1, (i, scheduled)
  assert model.prompt_jit.cache_info().currsize == 3   # (16, True), (16, False), (32, False)
  # the JITs hold buffers whose allocator's cache holds them back: get_state_dict must not walk into them
  assert get_state_dict(model).keys() == get_state_dict(ref).keys()

def test_long_prompts_and_prompts_near_the_context_end_run_plain(tiny_gguf, monkeypatch):
  model = Transformer.from_gguf(Tensor(tiny_gguf), max_context=64)[0]
  monkeypatch.setenv("PROMPT_JIT_MAX", "16"); getenv.cache_clear()
  try:
    model(Tensor([[1] * 20], dtype="int32"), 0).item()   # 32 positions padded: past PROMPT_JIT_MAX
    model(Tensor([[1] * 3], dtype="int32"), 50).item()   # 16 positions padded from 50: past max_context
  finally:
    monkeypatch.delenv("PROMPT_JIT_MAX"); getenv.cache_clear()
  assert model.prompt_jit.cache_info().currsize == 0

@pytest.mark.parametrize("quantized", [False, True], ids=["fp16", "q6_k"])
def test_block_0_runs_the_kernels_of_the_other_blocks(models, quantized):
  # the embedding float32, as the residual stream is after block 0's attention (patch 0055): block 0's kernels are block 1's (fewer to lower and
  # compile before the first token), in a prompt and in decode
  model = models[quantized]
  for step in (lambda: prompt_kernels(model, PROMPTS[1]), lambda: decode_step(model)):
    kernels = step()
    by_block = [[ei.ast for ei in kernels if b.attn_norm.weight.uop.buffer in ei.bufs] for b in model.blk]
    assert len(by_block[0]) == 1 and by_block[0] == by_block[1]

