import pathlib, sys
import numpy as np, pytest, gguf
from tinygrad import Tensor, nn
from tinygrad.apps.llm import SimpleTokenizer, Transformer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from synth_gguf import write_llama_gguf, tensor_shapes, q6_k_in_q4_k_m, PRESETS, WEIGHT_STD  # noqa: E402

@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> pathlib.Path: return write_llama_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", "tiny", seed=1)

@pytest.fixture(scope="module")
def loaded(tiny):
  return nn.state.gguf_load(Tensor(tiny).to("CPU"))

def test_names_and_shapes_match_the_preset(loaded):
  kv, sd = loaded
  assert {k: tuple(v.shape) for k,v in sd.items()} == tensor_shapes(PRESETS["tiny"])
  assert kv["general.architecture"] == "llama" and kv["general.file_type"] == 18 and kv["llama.rope.freq_base"] == 500000.0
  assert len(kv["tokenizer.ggml.tokens"]) == sd["token_embd.weight"].shape[0] == kv["llama.vocab_size"]

def test_q6_k_weights_dequantise_like_gguf_py(tiny, loaded):
  _, sd = loaded
  reader = gguf.GGUFReader(tiny)
  for t in reader.tensors:
    if t.tensor_type != gguf.GGMLQuantizationType.Q6_K: continue
    ref = gguf.quants.dequantize(t.data, t.tensor_type)
    ours = sd[t.name].numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9)
    assert np.isfinite(ours).all() and abs(ours.mean()) < 0.1 * WEIGHT_STD and 0.5 * WEIGHT_STD < ours.std() < 2 * WEIGHT_STD

def test_q4_k_m_is_q4_k_but_where_llama_cpps_quantize_keeps_q6_k(tmp_path):
  # the tied token embedding, and attn_v and ffn_down in use_more_bits' blocks: of tiny's 2, the last (the first eighth is none)
  path = write_llama_gguf(tmp_path / "q4km.gguf", "tiny", "q4_k_m", seed=1)
  reader = gguf.GGUFReader(path)
  types = {t.name: t.tensor_type for t in reader.tensors if len(t.shape) == 2}
  assert {n for n, t in types.items() if t == gguf.GGMLQuantizationType.Q6_K} == {"token_embd.weight", "blk.1.attn_v.weight", "blk.1.ffn_down.weight"}
  assert {t for n, t in types.items() if "attn_q" in n} == {gguf.GGMLQuantizationType.Q4_K}
  # an untied model's token embedding is no output: Q4_K
  p8 = PRESETS["llama-3.1-8b"]
  assert q6_k_in_q4_k_m("output.weight", p8) and not q6_k_in_q4_k_m("token_embd.weight", p8)
  _, sd = nn.state.gguf_load(Tensor(path).to("CPU"))
  for t in reader.tensors:
    if t.tensor_type == gguf.GGMLQuantizationType.Q4_K:
      np.testing.assert_allclose(sd[t.name].numpy(), gguf.quants.dequantize(t.data, t.tensor_type), rtol=1e-6, atol=1e-9)

def test_norms_are_f32_ones(loaded):
  _, sd = loaded
  assert all((v.numpy() == 1).all() for k,v in sd.items() if k.endswith("norm.weight"))

def test_the_byte_level_tokenizer_round_trips(loaded):
  kv, _ = loaded
  tok = SimpleTokenizer.from_gguf_kv(kv)
  text = "Hello, wörld! 123 <tab>\t\n"
  ids = tok.encode(text + "<|eot_id|>")
  assert ids[-1] == kv["tokenizer.ggml.eos_token_id"] and tok.decode(ids[:-1]) == text
  assert len(ids) < len(text.encode())  # merges apply, not only single bytes

def test_the_transformer_decodes_from_it(tiny):
  model, kv = Transformer.from_gguf(Tensor(tiny).to("CPU"), max_context=32)
  out = [next(g) for g in [model.generate([kv["tokenizer.ggml.bos_token_id"], 300, 301])] for _ in range(3)]
  assert all(0 <= t < kv["llama.vocab_size"] for t in out)

def test_qwen3_q8_0_has_qwen3s_tensors_and_decodes(tmp_path, monkeypatch):
  # Qwen3's shape at the tiny size: heads of 128 wider than dim / heads, q and k norms, no rope_freqs; every matrix Q8_0
  monkeypatch.setitem(PRESETS, "tiny-qwen3", dict(PRESETS["tiny"], arch="qwen3", head_dim=128, rope_theta=1e6, tied=False))
  path = write_llama_gguf(tmp_path / "q3.gguf", "tiny-qwen3", "q8_0", seed=1)
  reader = gguf.GGUFReader(path)
  assert {t.name: tuple(int(d) for d in reversed(t.shape)) for t in reader.tensors} == tensor_shapes(PRESETS["tiny-qwen3"])
  assert "blk.0.attn_q_norm.weight" in tensor_shapes(PRESETS["tiny-qwen3"]) and "output.weight" in tensor_shapes(PRESETS["tiny-qwen3"])
  assert {t.tensor_type for t in reader.tensors if len(t.shape) == 2} == {gguf.GGMLQuantizationType.Q8_0}
  ours = np.concatenate([gguf.quants.dequantize(t.data, t.tensor_type).reshape(-1) for t in reader.tensors if len(t.shape) == 2])
  assert np.isfinite(ours).all() and 0.5 * WEIGHT_STD < ours.std() < 2 * WEIGHT_STD
  model, kv = Transformer.from_gguf(Tensor(path).to("CPU"), max_context=32)
  assert kv["general.architecture"] == "qwen3" and all(0 <= t < kv["qwen3.vocab_size"] for t, _ in zip(model.generate([1, 300, 301]), range(2)))

def test_the_zoo_is_the_decode_tables_models():
  from synth_gguf import ZOO, QUANTS
  assert all(p in PRESETS and q in QUANTS for p, q in ZOO) and ("llama-3.1-8b", "q4_k_m") in ZOO and ("qwen3-1.7b", "q4_k_m") in ZOO

def test_tiny_16_has_the_1bs_depth_in_tinys_dims(tmp_path):
  # the first-token benchmark's model: host work at LLaMA-3.2-1B's 16 blocks, compute at tiny's size
  r = gguf.GGUFReader(write_llama_gguf(tmp_path / "t.gguf", "tiny-16"))
  assert r.fields["llama.block_count"].contents() == 16 and r.fields["llama.embedding_length"].contents() == 256

def test_f16_is_every_matrix_in_half(tmp_path):
  # the prompt benchmark's baseline: the same shapes with float16 weights, no blocks to dequantize
  r = gguf.GGUFReader(write_llama_gguf(tmp_path / "h.gguf", "tiny", "f16"))
  assert {t.tensor_type for t in r.tensors if len(t.shape) == 2} == {gguf.GGMLQuantizationType.F16}
  w = np.concatenate([np.asarray(t.data, np.float32).reshape(-1) for t in r.tensors if len(t.shape) == 2])
  assert 0.9 * WEIGHT_STD < w.std() < 1.1 * WEIGHT_STD

def test_the_zoo_is_written_once_into_a_folder(tmp_path, monkeypatch):
  import synth_gguf
  monkeypatch.setattr(synth_gguf, "ZOO", [("tiny", "q6_k"), ("tiny", "q8_0"), ("tiny", "q4_k_m")])
  kept = write_llama_gguf(tmp_path / "tiny-q6_k.gguf", "tiny", "q6_k", seed=7)
  # a file that is no GGUF, and a Q4_K_M of an older mix (every matrix Q6_K): written anew
  (tmp_path / "tiny-q8_0.gguf").write_bytes(b"junk")
  write_llama_gguf(tmp_path / "tiny-q4_k_m.gguf", "tiny", "q6_k")
  before = kept.read_bytes()
  got = synth_gguf.write_zoo(tmp_path)
  assert got == [tmp_path / f"tiny-{q}.gguf" for q in ("q6_k", "q8_0", "q4_k_m")] and sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in got)
  assert got[0].read_bytes() == before and gguf.GGUFReader(got[1]).tensors
  assert gguf.GGMLQuantizationType.Q4_K in {t.tensor_type for t in gguf.GGUFReader(got[2]).tensors}
