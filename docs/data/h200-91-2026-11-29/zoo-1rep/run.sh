#!/usr/bin/env bash
# the zoo with 91 patches (+ tc: a lane's four halves of a row in one load), llama.cpp beside it: 8 SMs, then the whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d36 $(date -u +%T) +${SECONDS}s] $*"; }
python3 $S/scripts/series.py apply --base master --tree $W/trees/p91 --patches $S/patches-tc --cache $S 2>&1 | tail -1
ls $W/bench/gguf/*.gguf > /dev/null 2>&1 || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
for sms in 8 all; do
  timeout 270 scripts/device_bench.sh run $S $OUT/zoo-$sms --devices CUDA --only llm --zoo --sms $sms --prefill 512 --llama-reps 1 --build p91=$W/trees/p91 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -16
  cp $W/bench/bench.json $OUT/zoo-$sms.json; log zoo $sms
done
