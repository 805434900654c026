# scripts/decode_kernels.py counts the kernels of a decode step as lowered for CUDA, and what they execute: the figures the
# benchmarks doc quotes. A tiny model (4 heads of 64, 2 blocks) at start_pos 5 attends over 16 cached positions.
import json, pathlib, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

def test_table_of_a_tiny_decode_step(tmp_path):
  subprocess.run([sys.executable, ROOT / "scripts" / "decode_kernels.py", "--preset", "tiny", "--max-context", "32", "--pos", "5",
                  "--json", tmp_path / "t.json"], check=True, capture_output=True)
  t = json.loads((tmp_path / "t.json").read_text())
  assert t["kernels"] == sum(r["launches"] for r in t["rows"])
  # per block: 2 norms, q/k/v, the KV cache write, 4 attention, o, gate/up, down; and the embedding, output norm, lm head, argmax x2, the
  # token's copy into the buffer generate reads
  assert t["kernels"] == 11 * 2 + 6
  # a token's RMSNorm one kernel of one workgroup (0062): the 2 of each block and the output norm
  assert [(r["launches"], r["grid"], r["block"]) for r in t["rows"] if r["kernel"].startswith("rms_norm")] == [(5, "1x1x1", "256x1x1")]
  exps = sorted(r["tr"].get("EXP2", 0) for r in t["rows"] if r["what"] == "scaled_dot_product_attention")
  # the softmax sum takes an exp per (head, position), the weighted sum of v one per (head, output dim, position)
  assert exps == [0, 4 * 16, 4 * 64 * 16]
  # the KV write stores k and v of 2 kv heads of 64 in fp16, the model's dtype (float32, 1024 B, before patch 0039)
  assert [(r["launches"], r["written"]) for r in t["rows"] if "stack" in r["what"]] == [(2, 2 * 2 * 64 * 2)]
