#!/usr/bin/env bash
# p95 against p96 (0094 as first written, splitting the 8B's down and o too, with 0095): LLaMA-3.1-8B Q4_K_M's 512-token prompt, whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[split $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
for n in 95 96; do python3 $S/scripts/series.py apply --base master --tree $W/trees/p$n --patches $S/patches-$n --cache $S 2>&1 | tail -1; done
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.1-8b --quant q4_k_m --out $W/8b.gguf > /dev/null 2>&1; log prep
PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/8b.gguf --warmup 1 --tokens 2 \
  --prefill 512 --build p95=$W/trees/p95 --build p96=$W/trees/p96 --build p95b=$W/trees/p95 --out $W/split 2>&1 | grep "prefill\|worker"
cp $W/split/bench.json $OUT/split-8b.json; log done
