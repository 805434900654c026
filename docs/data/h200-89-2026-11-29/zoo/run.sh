#!/usr/bin/env bash
# the zoo with llama.cpp beside it, 89 patches: whole GPU, then 8 SMs
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d31 $(date -u +%T) +${SECONDS}s] $*"; }
for sms in all 8; do
  timeout 280 scripts/device_bench.sh run $S $OUT/zoo-$sms --devices CUDA --only llm --zoo --sms $sms --prefill 512 --build p89=master 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -16
  cp $W/bench/bench.json $OUT/zoo-$sms.json; log zoo $sms
done
