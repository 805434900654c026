# GGUF Q6_K/Q4_K weights kept quantized on the device: QuantLinear holds the ggml blocks (as uint32 words) and the matvec dequantizes them,
# giving the tokens of the dequantize-at-load path while a decode step reads 210 bytes per 256 Q6_K weights instead of 512.
import numpy as np, pytest
from tinygrad import Tensor, nn, dtypes
from tinygrad.apps.llm import Transformer, QuantLinear, block_runs, quant_blocks
from tinygrad.engine import realize
from tinygrad.nn.state import GGML_BLOCKS, ggml_blocks_to_tensor, ggml_data_to_tensor, get_state_dict
from tinygrad.uop.ops import Ops
from synth_gguf import random_q6_k  # scripts/, on the path from conftest.py
from decode_helpers import PROMPTS, decode_step, logits

Q4_K, Q6_K = 12, 14

def test_gguf_load_keeps_raw_blocks(tiny_gguf):
  _, deq = nn.state.gguf_load(Tensor(tiny_gguf).to(None))
  _, raw = nn.state.gguf_load(Tensor(tiny_gguf).to(None), raw_types=(Q6_K,))
  assert raw.keys() == deq.keys()
  for name, t in raw.items():
    if t.dtype != dtypes.uint8: continue
    assert t.shape == (deq[name].shape[0], deq[name].shape[1] // 256, 210)
    np.testing.assert_array_equal(ggml_blocks_to_tensor(t, Q6_K).numpy(), deq[name].numpy())
  assert {k for k,t in raw.items() if t.dtype != dtypes.uint8} == {k for k in raw if k.endswith("norm.weight") or k == "rope_freqs.weight"}

def test_linear_weights_stay_q6_k_blocks(models):
  ref, q = models
  layers = {f"blk.{i}.{a}":getattr(b, a) for i,b in enumerate(q.blk) for a in ("attn_qkv", "attn_output", "ffn_gate_up",
            "ffn_down")} | {"output": q.output}
  # as uint32 words, each 210-byte block padded to 212: every block starts on a word, so a lane's 4 quant bytes are one load
  assert all(isinstance(l, QuantLinear) and l.ggml_type == Q6_K and l.blocks.dtype == dtypes.uint32 for l in layers.values())
  ref_layers = {name:ref.output if name == "output" else getattr(ref.blk[int(name.split(".")[1])], name.split(".")[2]) for name in layers}
  for name, l in layers.items():
    out_f, in_f = ref_layers[name].weight.shape
    assert l.blocks.shape == (out_f, in_f // 256, 53) and l.blocks.uop.buffer.nbytes == out_f * in_f // 256 * 212
  # the token embedding is gathered a row at a time: it is dequantized at load, only the tied output projection stays quantized
  assert q.token_embd.weight.dtype == dtypes.half
  quant_bytes = sum(l.blocks.nbytes() for l in layers.values())
  # the file's tensors only: a KV cache and RoPE tables exist once some test of the session has decoded with that model. The blocks' float
  # weights are kept for prompts (test_prompt.py), the output head's not (a prompt's head multiplies one row)
  def weight_bytes(m:Transformer) -> int: return sum(t.nbytes() for k,t in get_state_dict(m).items() if k.endswith((".weight", ".blocks")))
  assert q.output.weight is None and all(l.weight is not None for n, l in layers.items() if n != "output")
  assert weight_bytes(q) == weight_bytes(ref) - ref.output.weight.nbytes() + quant_bytes

def test_blocks_dequantize_to_the_loaded_weights(models):
  # bit for bit, including the Q/K row permutation for RoPE and the tied output projection
  ref, q = models
  pairs = [(q.output, ref.output)] + [(getattr(qb, a), getattr(rb, a)) for qb,rb in zip(q.blk, ref.blk) for a in ("attn_qkv", "attn_output",
           "ffn_gate_up", "ffn_down")]
  for ql, lin in pairs: np.testing.assert_array_equal(ql.dequantized().numpy(), lin.weight.numpy())
  np.testing.assert_array_equal(q.token_embd.weight.numpy(), ref.token_embd.weight.numpy())

def test_logits_and_greedy_tokens_match_dequantize_at_load(models):
  ref, q = models
  for prompt in PROMPTS:
    a, b = logits(ref, prompt), logits(q, prompt)
    np.testing.assert_allclose(b, a, atol=2e-3 * np.abs(a).max())
  gen = lambda m: [t for t,_ in zip(m.generate(list(PROMPTS[2])), range(4))]
  assert gen(q) == gen(ref)

def test_each_matvec_reads_its_blocks_in_one_kernel(models):
  _, q = models
  kernels = decode_step(q)
  layers = [q.output] + [getattr(b, a) for b in q.blk for a in ("attn_qkv", "attn_output", "ffn_gate_up", "ffn_down")]
  assert all(sum(any(b is l.blocks.uop.buffer for b in ei.bufs) for ei in kernels) == 1 for l in layers)
  # and no kernel writes a dequantized weight: every output is smaller than the smallest weight (attn_output, 256x256)
  assert max(ei.bufs[0].size for ei in kernels) < min(l.blocks.shape[0] * l.blocks.shape[1] * 256 for l in layers)

def test_matvecs_do_not_recompute_the_rmsnorm(models):
  # the RMSNorm before a projection is a kernel of its own: fused into the matvec, every row of the weight would compute it again
  _, q = models
  kernels = decode_step(q)
  norms = [q.output_norm.weight] + [getattr(b, n).weight for b in q.blk for n in ("attn_norm", "ffn_norm")]
  layers = [q.output] + [getattr(b, a) for b in q.blk for a in ("attn_qkv", "attn_output", "ffn_gate_up", "ffn_down")]
  for l in layers:
    ei = next(ei for ei in kernels if any(b is l.blocks.uop.buffer for b in ei.bufs))
    assert not any(b is n.uop.buffer for b in ei.bufs for n in norms), [b.size for b in ei.bufs]

def words(raw:np.ndarray, ggml_type:int) -> Tensor: return quant_blocks(Tensor(raw))  # as QuantLinear holds them

def random_q4_k(rng:np.random.Generator, rows:int, cols:int) -> np.ndarray:
  blocks = rng.integers(0, 256, (rows * cols // 256, 144), dtype=np.uint8)
  blocks[:, 0:4] = (rng.uniform(0.5, 1.5, (len(blocks), 2)) * 1e-3).astype(np.float16).view(np.uint8).reshape(-1, 4)  # d, dmin
  return blocks.reshape(rows, cols // 256, 144)

@pytest.mark.parametrize("ggml_type", [Q4_K, Q6_K])
def test_quant_linear_matches_the_dequantized_matvec(ggml_type):
  rng = np.random.default_rng(2)
  raw = random_q4_k(rng, 64, 512) if ggml_type == Q4_K else random_q6_k(rng, 64, 512).reshape(64, 2, 210)
  lin = QuantLinear(512, 64, ggml_type)
  lin.blocks = words(raw, ggml_type)
  x = Tensor(rng.standard_normal((1, 1, 512)).astype(np.float16))
  w = ggml_data_to_tensor(Tensor(raw.flatten()), 64 * 512, ggml_type).reshape(64, 512).cast(dtypes.half)
  assert GGML_BLOCKS[ggml_type][1] == raw.shape[-1]
  np.testing.assert_allclose(lin(x).float().numpy(), (x @ w.T).float().numpy(), rtol=1e-2, atol=1e-2)

@pytest.mark.parametrize("lanes", [32, 16, 8])
@pytest.mark.parametrize("ggml_type", [Q4_K, Q6_K])
def test_block_runs_are_the_dequantized_weights(ggml_type, lanes):
  # the matvec's lane-first unpacking gives the weights ggml_data_to_tensor gives: term r lane i is weight (r//k)*32 + k*i + r%k of its block,
  # k = 32/lanes. Q6_K's bit for bit (d * sc * (q - 32) rounded once); Q4_K's offset 128 * d * sc + dmin * mn is rounded before its FMA
  rng, k = np.random.default_rng(3), 32 // lanes
  raw = random_q4_k(rng, 16, 512) if ggml_type == Q4_K else random_q6_k(rng, 16, 512).reshape(16, 2, 210)
  terms = Tensor.stack(*block_runs(words(raw, ggml_type), ggml_type, lanes), dim=-1)   # (16, 2, lanes, 8*k)
  runs = terms.reshape(16, 2, lanes, 8, k).permute(0, 1, 3, 2, 4).reshape(16, 512)
  want = ggml_data_to_tensor(Tensor(raw.flatten()), 16 * 512, ggml_type).reshape(16, 512).numpy()
  np.testing.assert_allclose(runs.numpy(), want, rtol=0, atol=0 if ggml_type == Q6_K else np.abs(want).max() * 2**-20)
