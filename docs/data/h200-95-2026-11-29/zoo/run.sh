#!/usr/bin/env bash
# the zoo with 93 patches (p93), with 0094 (p94, a prompt's long sums split where the heuristic's workgroups leave SMs idle) and with
# 0094 and 0095 (p95, a k32 tensor core: two m16n8k16 mmas a WMMA, 16-byte loads), llama.cpp's tg128 and pp512 at 5 repetitions
# beside them; SMS=8 or all
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[zoo $(date -u +%T) +${SECONDS}s] $*"; }
for n in 93 94 95; do
  p=$S/patches-$n; [ $n = 93 ] && p=$S/patches-master
  [ -d $W/trees/p$n ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p$n --patches $p --cache $S 2>&1 | tail -1
done; log prep
timeout 560 scripts/device_bench.sh run $S $W/zoo-$SMS --devices CUDA --only llm --zoo --sms $SMS --prefill 512 --llama-reps 5 \
  --build p93=$W/trees/p93 --build p94=$W/trees/p94 --build p95=$W/trees/p95 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -24
cp $W/bench/bench.json $OUT/zoo-$SMS.json; cp $W/zoo-$SMS/bench.log $OUT/zoo-$SMS.log; log zoo $SMS
