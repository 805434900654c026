#!/usr/bin/env bash
# p83 against values-16-bytes-a-thread.diff: Qwen3 and the 8B in one bench run each, whole GPU and 8 SMs
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d22 $(date -u +%T) +${SECONDS}s] $*"; }
for m in qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 280 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 --build p83=$W/trees/master --build v16=$W/trees/v16 --out $W/ab-$m 2>&1 | grep "|" | tail -4
  cp $W/ab-$m/bench.json $OUT/ab-$m.json; log $m; done
