# A prompt (T > 1) over quantized weights runs the float matmul on the float weights kept beside the blocks (or dequantized from them each
# prompt), and GPUs keep Q4_K/Q6_K weights quantized by default (patches 0044-0046, 0051). CPU only: kernels are captured as they run.
import numpy as np
from tinygrad import Tensor, Device, dtypes, getenv
from tinygrad.apps.llm import Transformer, QuantLinear
from tinygrad.uop.ops import Ops
from decode_helpers import PROMPTS, logits, prompt_kernels

def block_linears(m:Transformer) -> list[QuantLinear]: return [l for b in m.blk for l in (b.attn_qkv, b.attn_output, b.ffn_gate_up, b.ffn_down)]

def test_a_prompt_multiplies_the_kept_float_weights(models):
  # from_gguf keeps each block projection's dequantized weight beside its blocks: a prompt reads no blocks, and runs the fp16 model's kernels
  ref, q = models
  blocks, kernels = {l.blocks.uop.buffer for l in block_linears(q)}, prompt_kernels(q, PROMPTS[1])
  assert not any(blocks & set(ei.bufs) for ei in kernels)
  # the output head multiplies the last row alone: its blocks read by one matvec writing one row of logits, not dequantized
  (head,) = [ei for ei in kernels if q.output.blocks.uop.buffer in ei.bufs]
  assert head.bufs[0].size == q.output.blocks.shape[0]
  def matmuls(m:Transformer) -> list:
    weights = {l.weight.uop.buffer for l in block_linears(m)}
    return [ei.ast for ei in prompt_kernels(m, PROMPTS[1]) if weights & set(ei.bufs)]
  assert len(qm:=matmuls(q)) == 4 * len(q.blk) and qm == matmuls(ref)
  for prompt in PROMPTS: np.testing.assert_array_equal(logits(q, prompt), logits(ref, prompt))

def test_without_kept_weights_a_prompt_dequantizes_the_blocks(tiny_gguf, models, monkeypatch):
  monkeypatch.setenv("GGUF_QUANT_PROMPT", "0"); getenv.cache_clear()
  try: q = Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, quantized=True)[0]
  finally:
    monkeypatch.delenv("GGUF_QUANT_PROMPT"); getenv.cache_clear()
  assert all(l.weight is None for l in block_linears(q))
  kernels = prompt_kernels(q, PROMPTS[1])
  blocks = {l.blocks.uop.buffer for l in block_linears(q)}
  readers = [ei for ei in kernels if blocks & set(ei.bufs)]
  # each projection's blocks (212 bytes each as QuantLinear pads them) read once, by an elementwise kernel writing its fp16 weight; no reduce (matmul) reads blocks
  assert len(readers) == len(blocks) and all(not any(u.op is Ops.REDUCE for u in ei.ast.toposort()) for ei in readers)
  assert all(ei.bufs[0].dtype == dtypes.half and ei.bufs[0].nbytes == 2 * ei.bufs[1].nbytes * 256 // 212 for ei in readers if ei.bufs[1] in blocks)
  # the fp16 weights of dequantize-at-load and the same matmul kernels: the prompt's logits are the fp16 model's, bit for bit
  for prompt in PROMPTS: np.testing.assert_array_equal(logits(q, prompt), logits(models[0], prompt))

def test_the_dequantize_graph_is_built_once(models):
  # building it was most of a quantized prompt's Python time; it is a UOp, not a Tensor that every realize would walk
  lin = models[1].output
  assert lin.dequantized().uop is lin.dequantized().uop

def test_gpus_keep_gguf_weights_quantized_by_default(tiny_gguf, monkeypatch):
  def linear_type(): return type(Transformer.from_gguf(Tensor(tiny_gguf), max_context=32, realize=False)[0].blk[0].ffn_down)
  assert not Device[Device.DEFAULT].renderer.has_local and linear_type() is not QuantLinear   # the CPU dequantizes at load
  monkeypatch.setattr(Device[Device.DEFAULT].renderer, "has_local", True, raising=False)    # a GPU's renderer: the matvec spreads lanes over threads
  assert linear_type() is QuantLinear
  monkeypatch.setenv("GGUF_QUANT", "0"); getenv.cache_clear()
  try: assert linear_type() is not QuantLinear
  finally:
    monkeypatch.delenv("GGUF_QUANT"); getenv.cache_clear()

def test_block_terms_are_built_once_for_each_shape():
  # their Tensor ops were most of a decode step's Python time: built for a placeholder of the blocks' shape, each projection substitutes its blocks
  from tinygrad.apps.llm import runs_template
  runs_template.cache_clear()
  lins = [QuantLinear(512, 256, 14) for _ in range(3)]
  terms = [l.runs() for l in lins]
  assert runs_template.cache_info().misses == 1 and all(len(t) == len(terms[0]) == 32 for t in terms)
  assert lins[0].runs()[0].uop is terms[0][0].uop and terms[0][0].uop is not terms[1][0].uop
  assert all(l.blocks.uop.base in t[0].uop.toposort() for l, t in zip(lins, terms))
