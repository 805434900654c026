#!/usr/bin/env bash
# 512-token prompts (--tokens 2, no llama-bench) of the series (p96) and with rope/0097 (pr: a prompt's q turned by RoPE into float16
# in one kernel): the whole GPU for LLaMA-3.2-1B Q6_K and Q8_0 and LLaMA-3.1-8B Q4_K_M, then 8 SMs for the 1B Q8_0 and the 8B
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-96-2026-11-30/rope; log() { echo "[rope $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null; mkdir -p $W/bench
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1 &
rm -rf $S/patches-r $W/trees/pr $W/trees/p96 && cp -r $S/patches-master $S/patches-r && cp $D/0097-*.patch $S/patches-r/ && basename $D/0097-*.patch >> $S/patches-r/series
python3 $S/scripts/series.py apply --base master --tree $W/trees/p96 --patches $S/patches-master --cache $S 2>&1 | tail -1
python3 $S/scripts/series.py apply --base master --tree $W/trees/pr --patches $S/patches-r --cache $S 2>&1 | tail -1
wait; log prep
ab() {  # SMS MODEL
  PYTHONPATH=$W/site timeout 100 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$2.gguf --sms $1 --warmup 1 \
    --tokens 2 --prefill 512 --build p96=$W/trees/p96 --build pr=$W/trees/pr --out $W/rope-$1-$2 2>&1 | grep "prefill\|Error"
  cp $W/rope-$1-$2/bench.json $OUT/rope-$1-$2.json; log $1 $2
}
for m in llama-3.2-1b-q6_k llama-3.2-1b-q8_0 llama-3.1-8b-q4_k_m; do ab all $m; done
for m in llama-3.2-1b-q8_0 llama-3.1-8b-q4_k_m; do ab 8 $m; done
