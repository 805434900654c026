# scripts/decode_kernels.py counts the kernels of a decode step as lowered for CUDA, and what they execute: the figures the
# benchmarks doc quotes. A tiny model (4 heads of 64, 2 blocks) at start_pos 5.
import json, math, pathlib, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

def test_table_of_a_tiny_decode_step(tmp_path):
  subprocess.run([sys.executable, ROOT / "scripts" / "decode_kernels.py", "--preset", "tiny", "--max-context", "32", "--pos", "5",
                  "--json", tmp_path / "t.json"], check=True, capture_output=True)
  t = json.loads((tmp_path / "t.json").read_text())
  assert t["kernels"] == sum(r["launches"] for r in t["rows"])
  # per block: 2 norms, q/k/v, attention with the KV write, o, gate/up, down (fp16: the gated product in down's loads); and the embedding,
  # output norm, lm head, and the greedy token into the buffer generate reads
  assert t["kernels"] == 7 * 2 + 5
  # the greedy token: 128 workgroups' largest keys of their logits, then the token of the largest in one workgroup (0065, 0067)
  assert [(r["kernel"], r["launches"], r["grid"], r["block"]) for r in t["rows"] if r["kernel"].startswith("argmax")] == \
    [("argmax_keys_1024", 1, "128x1x1", "16x16x1"), ("argmax_token_128", 1, "1x1x1", "16x8x1")]
  # a token's RMSNorm one kernel of one workgroup (0062): the 2 of each block and the output norm
  assert [(r["launches"], r["grid"], r["block"]) for r in t["rows"] if r["kernel"].startswith("rms_norm")] == [(5, "1x1x1", "256x1x1")]
  # a token's attention one kernel of a workgroup a head (4 heads of 64 over 2 kv heads), 128 threads, a head's 64 elements the first local
  # dimension (0067: a warp reads consecutive elements of v); an exp a position it scores (0..127)
  attn = [r for r in t["rows"] if r["kernel"].startswith("decode_attention")]
  assert [(r["kernel"], r["launches"], r["grid"], r["block"], r["tr"]["EXP2"]) for r in attn] == \
    [("decode_attention_4_2_64", 2, "4x1x1", "64x2x1", 4 * 128)]
  # it stores the 4 heads' float32 outputs, and each workgroup k and v of its kv head in fp16, the model's dtype (float32 before patch 0039)
  assert attn[0]["written"] == 4 * 64 * 4 + 4 * 2 * 64 * 2
