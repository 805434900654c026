#!/usr/bin/env bash
# for the next device session: why LLaMA-3.1-8B's 512-token prompt is slower with 0094 (p95) than without (p93) on the whole GPU when
# its split matmuls alone are faster: the prompt under ncu with each (the fifth of five from empty caches), kernel by kernel
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[split8b $(date -u +%T) +${SECONDS}s] $*"; }
mkdir -p $S/patches-95 && cp $S/patches-master/* $S/patches-95/ && cp docs/data/h200-93-2026-11-29/next/0094-*.patch $S/patches-95/ \
  && (cd $S/patches-95 && ls 0094-*.patch >> series)
for n in 93 95; do
  p=$S/patches-$n; [ $n = 93 ] && p=$S/patches-master
  python3 $S/scripts/series.py apply --base master --tree $W/trees/p$n --patches $p --cache $S 2>&1 | tail -1
done
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.1-8b --quant q4_k_m --out $W/8b.gguf > /dev/null 2>&1; log prep
for n in 93 95; do
  (cd $S/scripts && PYTHONPATH=$W/trees/p$n:$W/site DEV=CUDA timeout 240 ncu --profile-from-start off --clock-control none \
    --cache-control none --csv --print-units base --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,dram__bytes_read.sum \
    python3 ncu_step.py run $W/8b.gguf --prompt 512 > $OUT/ncu-8b-p$n.csv 2> $W/ncu-$n.err; tail -6 $W/ncu-$n.err
   python3 ncu_step.py summary $OUT/ncu-8b-p$n.csv --json $OUT/ncu-8b-p$n.json 2>&1 | head -24); log p$n
done
