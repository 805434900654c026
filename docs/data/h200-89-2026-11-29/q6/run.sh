#!/usr/bin/env bash
# p87 (0001-0087), p89 (+ 0088, 0089 as kept), p90 (+ Q6_K as aligned words, 8 lanes), p89 again: the 8B Q4_K_M and the 1B Q6_K decode
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d33 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p87=master@pick-a-k-quant --build p89=master@read-Q6_K --build p90=master 2>&1 | grep -v WARNING | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
B="--build p87=$W/trees/master_pick_a_k_quant --build p89=$W/trees/master_read_Q6_K --build p90=$W/trees/master --build p89b=$W/trees/master_read_Q6_K"
for m in llama-3.1-8b-q4_k_m llama-3.2-1b-q6_k; do
  PYTHONPATH=$W/site timeout 270 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 $B --out $W/q6-$m 2>&1 | grep "|" | tail -8
  cp $W/q6-$m/bench.json $OUT/q6-$m.json; log $m
done
