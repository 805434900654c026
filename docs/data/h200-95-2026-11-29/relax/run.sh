#!/usr/bin/env bash
# the series (p95) against p95 with matmul_tiles taking 0070's tiles where they leave every SM 2 workgroups, not 4 (relax/0096):
# LLaMA-3.2-1B Q8_0's 512-token prompt, whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[relax $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
python3 $S/scripts/series.py apply --base master --tree $W/trees/pr --patches $S/patches-r --cache $S 2>&1 | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.2-1b --quant q8_0 --out $W/q8.gguf > /dev/null 2>&1; log prep
PYTHONPATH=$W/site timeout 120 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/q8.gguf --warmup 1 --tokens 2 \
  --prefill 512 --build p95=$W/trees/p95 --build pr=$W/trees/pr --build p95b=$W/trees/p95 --out $W/relax 2>&1 | grep "prefill\|worker"
cp $W/relax/bench.json $OUT/relax-1b-q8_0.json; log done
