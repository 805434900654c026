#!/usr/bin/env bash
# 91 patches: a 512-token prompt of LLaMA-3.2-1B Q6_K from empty caches under ncu (the fifth of five), whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d39 $(date -u +%T) +${SECONDS}s] $*"; }
python3 $S/scripts/series.py apply --base master --tree $W/trees/p91 --patches $S/patches-tc --cache $S 2>&1 | tail -1
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.2-1b --quant q6_k --out $W/q6k.gguf > /dev/null 2>&1; log prep
cd $S/scripts && PYTHONPATH=$W/trees/p91:$W/site DEV=CUDA timeout 200 ncu --profile-from-start off --clock-control none --cache-control none --csv \
  --print-units base --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum \
  python3 ncu_step.py run $W/q6k.gguf --prompt 512 > $OUT/ncu-prompt-q6k.csv 2> $W/ncu.err; tail -6 $W/ncu.err
python3 ncu_step.py summary $OUT/ncu-prompt-q6k.csv --json $OUT/ncu-prompt-q6k.json 2>&1 | head -30; log done
