#!/usr/bin/env bash
# the series (p95, patches/master) on LLaMA-3.2-1B's 512-token prompt from float16 weights against Q8_0 and Q6_K blocks, whole GPU and
# 8 SMs, on a fresh machine
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[fp16 $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null; mkdir -p $W/bench/gguf
[ -d $W/trees/p95 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
for q in f16 q8_0 q6_k; do
  [ -f $W/bench/gguf/llama-3.2-1b-$q.gguf ] || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.2-1b --quant $q \
    --out $W/bench/gguf/llama-3.2-1b-$q.gguf > /dev/null 2>&1
done; log prep
for q in f16 q8_0 q6_k; do
  PYTHONPATH=$W/site timeout 80 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/llama-3.2-1b-$q.gguf --sms all,8 \
    --warmup 1 --tokens 2 --prefill 512 --build p95=$W/trees/p95 --out $W/pp-$q 2>&1 | grep "prefill"
  cp $W/pp-$q/bench.json $OUT/pp-llama-3.2-1b-$q.json; log $q
done
