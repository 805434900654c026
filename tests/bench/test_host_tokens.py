# scripts/host_tokens.py: a line a token of a tiny GGUF on NULL, its seconds split into the trace and the schedules
import os, pathlib, re, subprocess, sys
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import synth_gguf

def test_a_line_a_token(tmp_path):
  gguf = synth_gguf.write_llama_gguf(tmp_path / "t.gguf", "tiny")
  env = {**os.environ, "CACHEDB": str(tmp_path / "cache.db"), "PYTHONPATH": str(ROOT / "build" / "master" / "tinygrad")}
  env.pop("DEV", None)
  args = [str(gguf), "--tokens", "3", "--sms", "8", "--max-context", "128"]
  out = subprocess.run([sys.executable, str(ROOT / "scripts" / "host_tokens.py"), *args], env=env, capture_output=True, text=True,
                       check=True).stdout.splitlines()
  assert out[0].startswith("load ") and len(out) == 4
  assert all(re.fullmatch(rf"token {i+1}: [\d.]+ s \(trace [\d.]+ s, schedule [\d.]+ s\)", l) for i, l in enumerate(out[1:]))
