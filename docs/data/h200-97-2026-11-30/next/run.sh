#!/usr/bin/env bash
# for the next device session: the zoo's 512-token prompts (--tokens 2, no llama-bench) with the series (p95), with next/0096 (pw: 2-warp
# matmul tiles past 3 workgroups an SM) and with the series again (p95b); SMS=8 or all, the models as arguments (default:
# the zoo's five)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-97-2026-11-30; log() { echo "[next $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null; mkdir -p $W/bench
[ -d $W/trees/p95 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
# pw from this checkout's 0096 each time: a warm machine's tree may hold an earlier one
rm -rf $S/patches-w $W/trees/pw && cp -r $S/patches-master $S/patches-w && cp $D/next/0096-*.patch $S/patches-w/
basename $D/next/0096-*.patch >> $S/patches-w/series
python3 $S/scripts/series.py apply --base master --tree $W/trees/pw --patches $S/patches-w --cache $S 2>&1 | tail -1
# writes only the zoo's files that are missing
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
models=("$@"); [ $# = 0 ] && models=(llama-3.2-1b-q6_k llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.2-1b-q8_0 llama-3.1-8b-q4_k_m)
for m in "${models[@]}"; do
  PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms $SMS --warmup 1 \
    --tokens 2 --prefill 512 --build p95=$W/trees/p95 --build pw=$W/trees/pw --build p95b=$W/trees/p95 --out $W/next-$SMS-$m 2>&1 | grep "prefill\|Error"
  cp $W/next-$SMS-$m/bench.json $OUT/next-$SMS-$m.json; log $m
done
