#!/usr/bin/env bash
# p93 against p95 (0094 with the runs' sum in a buffer of its own): 512-token prompts of the 8B and the 1B Q6_K, whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[sum $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --build p93=master 2>&1 | grep -v WARNING | tail -1
python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-95 --cache $S 2>&1 | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
for m in llama-3.1-8b-q4_k_m llama-3.2-1b-q6_k; do
  PYTHONPATH=$W/site timeout 100 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --warmup 1 --tokens 2 \
    --prefill 512 --build p93=$W/trees/master --build p95=$W/trees/p95 --out $W/sum-$m 2>&1 | grep "prefill\|worker"
  cp $W/sum-$m/bench.json $OUT/sum-$m.json; log $m
done
