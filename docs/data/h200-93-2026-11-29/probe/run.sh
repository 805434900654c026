#!/usr/bin/env bash
# the decode attention below SPLIT_FROM with its positions forced into S runs, p91: whole GPU, then 8 SMs
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; P=docs/data/h200-93-2026-11-29/probe; log() { echo "[probe $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p91=master 2>&1 | grep -v WARNING | tail -1
log prep; export PYTHONPATH=$W/trees/master:$W/site DEV=CUDA
timeout 200 python3 $P/attsplit.py $S/scripts $OUT/attsplit-all.json 2>&1 | grep -v "^$" | tail -48; log attsplit all
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p /tmp/mps-pipe /tmp/mps-log; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 timeout 100 python3 $P/attsplit.py $S/scripts $OUT/attsplit-8.json 23,80,127 1,2,4 2>&1 | tail -30
echo quit | nvidia-cuda-mps-control; log done
