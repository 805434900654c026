# a malformed GGUF, or one holding what tinygrad.llm cannot run, is refused with one ValueError naming the file and what is wrong,
# before its bytes reach the device and without leaking the file
import gc, os, pathlib, re, struct
import numpy as np, pytest, gguf
from gguf import GGMLQuantizationType as T
from tinygrad import GlobalCounters
from tinygrad.llm.gguf import gguf_load
from tinygrad.llm.model import Transformer

def write(path:pathlib.Path, tensors:dict[str, tuple[np.ndarray, T|None]], **kv:int) -> bytes:
  w = gguf.GGUFWriter(path, "llama")
  w.add_block_count(1); w.add_token_list(["a", "b"])
  for k, v in kv.items(): w.add_uint32(k.replace("_", "."), v)
  for name, (a, typ) in tensors.items(): w.add_tensor(name, a, raw_dtype=typ)
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  return path.read_bytes()

# autouse: whichever test a worker runs first finds the io_uring open
@pytest.fixture(scope="module", autouse=True)
def good(tmp_path_factory) -> bytes:
  # a Q8_0 tensor padded to 160 bytes, then a float32 one that ends the file: every cut short of the end removes data
  b = write(p := tmp_path_factory.mktemp("gguf") / "good.gguf", {"w": (np.zeros((2, 68), np.uint8), T.Q8_0),
                                                               "blk.0.attn_norm.weight": (np.ones((4, 8), np.float32), None)})
  assert b.endswith(np.ones(32, np.float32).tobytes())
  gguf_load(p)   # the first file opened also opens the disk device's io_uring, which stays
  return b

def info(b:bytes, name:str) -> int:
  """where the tensor info of name continues after its name: n_dims (u32), dims (u64 each), type (i32), offset (u64)"""
  return b.index(struct.pack("<Q", len(name)) + name.encode()) + 8 + len(name)

def refused(path:pathlib.Path, data:bytes, match:str, leaks:bool=True) -> str:
  path.write_bytes(data)
  fds, mem = len(os.listdir("/proc/self/fd")), GlobalCounters.mem_used
  with pytest.raises(ValueError) as e: gguf_load(path)
  assert GlobalCounters.mem_used == mem, "the file reached the device before it was checked"
  msg = str(e.value)
  del e
  if leaks: no_fd_leaked(fds)
  assert msg.startswith(f"{path}: ") and re.search(match, msg), msg
  return msg

def no_fd_leaked(fds:int):
  gc.collect()
  assert len(os.listdir("/proc/self/fd")) == fds

def test_good_file_loads(tmp_path, good):
  (p := tmp_path / "t.gguf").write_bytes(good)
  _, sd = gguf_load(p)
  assert sd["w"].shape == (2, 64) and not sd["w"].numpy().any() and sd["blk.0.attn_norm.weight"].numpy().sum() == 32

def test_every_truncation(tmp_path, good):
  infos_end = info(good, "blk.0.attn_norm.weight") + 4 + 16 + 12
  fds = len(os.listdir("/proc/self/fd"))
  for n in [*range(infos_end + 32), *range(infos_end + 32, len(good), 7)]:
    match = "the file is empty" if n == 0 else "not a GGUF file" if n < 4 else "truncated, the file ends at byte" if n < infos_end else "needs"
    refused(tmp_path / "t.gguf", good[:n], match, leaks=False)
  no_fd_leaked(fds)   # once: a collection per cut costs a minute, and a leak per cut adds up

@pytest.mark.parametrize("case", ["magic", "version", "kv_type", "utf8", "offset", "dims", "rows", "alignment"])
def test_malformed(tmp_path, good, case):
  b, i = bytearray(good), info(good, "w")
  match case:
    case "magic": b[:4], match = b"GGML", r"not a GGUF file, it starts with b'GGML'"
    case "version": b[4:8], match = struct.pack("<i", 7), r"GGUF version 7 is not supported"
    case "kv_type": b[24+8+len(k:=b"general.architecture"):24+12+len(k)], match = struct.pack("<i", 13), r"unknown value type 13 in the value of general.architecture"
    case "utf8": b[good.index(b"llama")], match = 0xff, r"a string in the value of general.architecture is not UTF-8"
    case "offset": b[i+4+16+4:i+4+16+12], match = struct.pack("<Q", 1 << 20), r"tensor w needs 136 bytes at offset \d+, the file ends at \d+"
    case "dims": b[i+4:i+12], match = struct.pack("<Q", 6400), r"tensor w needs 13600 bytes at offset \d+, the file ends at \d+"
    case "rows": b[i+4:i+20], match = struct.pack("<QQ", 16, 8), r"tensor w: rows of 16 are not whole Q8_0 \(8\) blocks of 32"
    case "alignment": b, match = write(tmp_path / "a.gguf", {}, general_alignment=0), r"general.alignment is 0"
  refused(tmp_path / "t.gguf", bytes(b), match)

@pytest.mark.parametrize("qtype", [T.IQ2_XXS, T.IQ2_XS, T.IQ1_S, T.IQ4_NL, T.TQ1_0], ids=lambda t: t.name)
def test_unsupported_type(tmp_path, qtype):
  blocks = np.zeros((1, gguf.GGML_QUANT_SIZES[qtype][1]), np.uint8)
  b = write(tmp_path / "q.gguf", {"blk.0.ffn_up.weight": (blocks, qtype)})
  refused(tmp_path / "t.gguf", b, rf"tensor blk.0.ffn_up.weight: GGML type {qtype.name} \({qtype.value}\) is not supported$")

def model(path:pathlib.Path, arch="llama", drop=(), skip_kv=(), vocab=8, **extra:np.ndarray) -> pathlib.Path:
  """a 1-block model of arch in float32, without the tensors in drop and the metadata in skip_kv, with extra tensors"""
  rng, dim, ffn = np.random.default_rng(0), 64, 128
  w = gguf.GGUFWriter(path, arch)
  for k, add, v in [("block_count", w.add_block_count, 1), ("context_length", w.add_context_length, 16), ("embedding_length", w.add_embedding_length, dim),
                    ("feed_forward_length", w.add_feed_forward_length, ffn), ("head_count", w.add_head_count, 2),
                    ("head_count_kv", w.add_head_count_kv, 2), ("rope.freq_base", w.add_rope_freq_base, 1e4),
                    ("layer_norm_rms_epsilon", w.add_layer_norm_rms_eps, 1e-5)]:
    if k not in skip_kv: add(v)
  w.add_tokenizer_model("gpt2"); w.add_token_list([f"t{i}" for i in range(8)])
  shapes = {"token_embd.weight": (vocab, dim), "output_norm.weight": (dim,), "blk.0.attn_norm.weight": (dim,), "blk.0.ffn_norm.weight": (dim,),
            **{f"blk.0.{n}.weight": (dim, dim) for n in ("attn_q", "attn_k", "attn_v", "attn_output")},
            "blk.0.ffn_gate.weight": (ffn, dim), "blk.0.ffn_up.weight": (ffn, dim), "blk.0.ffn_down.weight": (dim, ffn)}
  for name, shape in shapes.items():
    if name not in drop: w.add_tensor(name, rng.standard_normal(shape).astype(np.float32))
  for name, a in extra.items(): w.add_tensor(name, a)
  w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
  return path

def test_model_loads(tmp_path):
  bias = {f"blk.0.attn_{n}.bias": np.zeros(64, np.float32) for n in "qkv"}
  for arch, extra in [("llama", {"rope_freqs.weight": np.ones(16, np.float32)}), ("qwen2", bias)]:
    m, _ = Transformer.from_gguf(model(tmp_path / f"{arch}.gguf", arch, **extra))
    assert len(m.blk) == 1 and (arch != "qwen2" or m.blk[0].attn_q.bias is not None)

NORM = np.ones(64, np.float32)
REFUSED = {case: (kw, match) for case, kw, match in [
  ("gemma", {"arch": "gemma"}, r"architecture gemma is not implemented, only llama, qwen2, .* are$"),
  ("mamba", {"arch": "mamba"}, r"architecture mamba is not implemented"),
  ("gemma_as_llama", {"blk.0.post_attention_norm.weight": NORM, "blk.0.post_ffw_norm.weight": NORM},
   r"tensors blk.N.post_attention_norm.weight, blk.N.post_ffw_norm.weight are not used by tinygrad's llama$"),
  ("output_bias", {"blk.0.attn_output.bias": NORM}, r"tensors blk.N.attn_output.bias are not used by tinygrad's llama$"),
  ("q_bias_only", {"blk.0.attn_q.bias": NORM}, r"tensors blk.N.attn_k.bias, blk.N.attn_v.bias are missing, tinygrad's llama needs them$"),
  ("missing", {"drop": ("blk.0.ffn_up.weight", "token_embd.weight")},
   r"tensors blk.N.ffn_up.weight, output.weight, token_embd.weight are missing"),
  ("vocab", {"vocab": 9}, r"tensor shapes disagree with the metadata: token_embd.weight is \(9, 64\), not \(8, 64\), output.weight is"),
  ("kv", {"skip_kv": ("context_length",)}, r"llama.context_length is missing from the metadata$")]}

@pytest.mark.parametrize("case", REFUSED)
def test_model_refused(tmp_path, case):
  kw, match = REFUSED[case]
  with pytest.raises(ValueError, match=f"^{re.escape(str(p := tmp_path / 'm.gguf'))}: {match}"): Transformer.from_gguf(model(p, **kw))

def test_header_reads_take_the_file_a_chunk_at_a_time(tiny_gguf, monkeypatch):
  # the header's fields (a vocabulary of 320 tokens here, 128k in LLaMA 3) are read from a buffer, not each a seek on the tensor
  from tinygrad.nn.state import TensorIO
  seeks, seek = [], TensorIO.seek
  monkeypatch.setattr(TensorIO, "seek", lambda self, *a: seeks.append(a) or seek(self, *a))
  gguf_load(tiny_gguf)
  assert len(seeks) < 10
