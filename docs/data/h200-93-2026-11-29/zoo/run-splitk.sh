#!/usr/bin/env bash
# a prompt's matmuls with K split in runs (splitk.py), 91 patches (0092 and 0093 leave prompt_matmul as it is): whole GPU, then 8 SMs
# (MPS at 1%: 8 SMs on this H200, as bench.py found)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; Z=docs/data/h200-93-2026-11-29/zoo; log() { echo "[splitk $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --build p91=master 2>&1 | grep -v WARNING | tail -1
export PYTHONPATH=$W/trees/master:$W/site DEV=CUDA; log prep
timeout 200 python3 $Z/splitk.py $OUT/splitk-all.json 2>&1 | tail -40; log all
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p /tmp/mps-pipe /tmp/mps-log; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 timeout 250 python3 $Z/splitk.py $OUT/splitk-8.json 2>&1 | tail -40
echo quit | nvidia-cuda-mps-control; log done
