#!/usr/bin/env bash
# trees p87 (0001-0087), p88 (+ scales from words), p89 (+ 128 once a scale); the zoo's GGUFs; the 8B and Qwen3 decode p87/p89/p87 again
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d30 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p87=master@pick-a-k-quant --build p88=master@take-the-quants --build p89=master 2>&1 | grep -v WARNING | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf 2>&1 | tail -5; log prep
B="--build p87=$W/trees/master_pick_a_k_quant --build p89=$W/trees/master --build p87b=$W/trees/master_pick_a_k_quant"
for m in llama-3.1-8b-q4_k_m qwen3-1.7b-q4_k_m; do
  PYTHONPATH=$W/site timeout 230 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 $B --out $W/ab-$m 2>&1 | grep "|" | tail -8
  cp $W/ab-$m/bench.json $OUT/ab-$m.json; log $m
done
