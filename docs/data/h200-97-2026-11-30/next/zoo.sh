#!/usr/bin/env bash
# the zoo with the builds named on the command line (trees ab/run.sh or next/run.sh made), llama.cpp's
# tg128 and pp512 at 5 repetitions beside them; SMS=8 or all
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[zoo $(date -u +%T) +${SECONDS}s] $*"; }
builds=(); for b in "$@"; do [ -d $W/trees/$b ] || { echo "no tree $b: run ab/run.sh or next/run.sh first"; exit 1; }; builds+=(--build $b=$W/trees/$b); done
timeout 560 scripts/device_bench.sh run $S $W/zoo-$SMS --devices CUDA --only llm --zoo --sms $SMS --prefill 512 --llama-reps 5 \
  "${builds[@]}" 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -24
cp $W/bench/bench.json $OUT/zoo-$SMS.json; cp $W/zoo-$SMS/bench.log $OUT/zoo-$SMS.log; log zoo $SMS
