#!/usr/bin/env bash
# for the next device session: p93 (patches/master), pk (+ next/0095, two m16n8k16 mmas a WMMA, a lane's 16 bytes of a row a load), p93
# again: 512-token prompts of LLaMA-3.2-1B Q6_K and LLaMA-3.1-8B Q4_K_M, whole GPU and 8 SMs
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; N=docs/data/h200-93-2026-11-29/next; log() { echo "[k32 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p93=master 2>&1 | grep -v WARNING | tail -1
mkdir -p $S/patches-k && cp $S/patches-master/* $S/patches-k/ && cp $N/0095-*.patch $S/patches-k/ && (cd $S/patches-k && ls 0095-*.patch >> series)
python3 $S/scripts/series.py apply --base master --tree $W/trees/pk --patches $S/patches-k --cache $S 2>&1 | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
for m in llama-3.2-1b-q6_k llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 270 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 --warmup 1 \
    --tokens 2 --prefill 512 --build p93=$W/trees/master --build pk=$W/trees/pk --build p93b=$W/trees/master --out $W/k-$m 2>&1 | grep "prefill"
  cp $W/k-$m/bench.json $OUT/k32-$m.json; log $m
done
