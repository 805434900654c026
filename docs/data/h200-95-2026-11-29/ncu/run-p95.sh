#!/usr/bin/env bash
# after the zoo (same machine, its trees and GGUFs): 512-token prompts of LLaMA-3.1-8B Q4_K_M and LLaMA-3.2-1B Q8_0 under ncu with p95,
# kernel by kernel (the fifth of five from empty caches), whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[ncu95 $(date -u +%T) +${SECONDS}s] $*"; }
for m in llama-3.1-8b-q4_k_m llama-3.2-1b-q8_0; do
  (cd $S/scripts && PYTHONPATH=$W/trees/p95:$W/site DEV=CUDA timeout 200 ncu --profile-from-start off --clock-control none \
    --cache-control none --csv --print-units base --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,dram__bytes_read.sum \
    python3 ncu_step.py run $W/bench/gguf/$m.gguf --prompt 512 > $OUT/ncu-$m-p95.csv 2> $W/ncu-$m.err; tail -3 $W/ncu-$m.err
   python3 ncu_step.py summary $OUT/ncu-$m-p95.csv --json $OUT/ncu-$m-p95.json 2>&1 | head -18); log $m
done
