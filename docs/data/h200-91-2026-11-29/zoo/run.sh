#!/usr/bin/env bash
# what plain reads reach (whole GPU, 8 SMs); the zoo with 91 patches, llama.cpp's tg128 and pp512 at 5 repetitions: 8 SMs, then the whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d37 $(date -u +%T) +${SECONDS}s] $*"; }
python3 $S/scripts/series.py apply --base master --tree $W/trees/p91 --patches $S/patches-tc --cache $S 2>&1 | tail -1; log prep
python3 $S/read_ceiling.py all 2>&1 | tee $OUT/read-all.log
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p /tmp/mps-pipe /tmp/mps-log; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 python3 $S/read_ceiling.py 8 2>&1 | tee $OUT/read-8.log
echo quit | nvidia-cuda-mps-control; sleep 2; log reads
for sms in 8 all; do
  timeout 330 scripts/device_bench.sh run $S $W/zoo-$sms --devices CUDA --only llm --zoo --sms $sms --prefill 512 --llama-reps 5 --build p91=$W/trees/p91 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -16
  cp $W/bench/bench.json $OUT/zoo-$sms.json; cp $W/zoo-$sms/bench.log $OUT/zoo-$sms.log; log zoo $sms
done
