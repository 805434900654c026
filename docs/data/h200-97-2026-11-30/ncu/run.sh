#!/usr/bin/env bash
# with ab/run.sh's trees and GGUFs (made where missing): Qwen3-1.7B Q4_K_M's and LLaMA-3.2-1B Q4_K_M's 512-token prompts under ncu with
# p95 and pg (gate and up one matmul), kernel by kernel, whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[ncu $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/pg ] || SMS=all bash docs/data/h200-97-2026-11-30/ab/run.sh none 2>&1 | grep applied
for m in qwen3-1.7b-q4_k_m llama-3.2-1b-q4_k_m; do for b in p95 pg; do
  (cd $S/scripts && PYTHONPATH=$W/trees/$b:$W/site DEV=CUDA timeout 150 ncu --profile-from-start off --clock-control none \
    --cache-control none --csv --print-units base --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
    python3 ncu_step.py run $W/bench/gguf/$m.gguf --prompt 512 > $W/ncu-$m-$b.csv 2> $W/ncu-$m-$b.err; tail -2 $W/ncu-$m-$b.err
   python3 ncu_step.py summary $W/ncu-$m-$b.csv --json $OUT/ncu-$m-$b.json 2>&1 | head -14); log $m $b
done; done
