#!/usr/bin/env bash
# 8 SMs: non-GLU Q4_K matvecs at 4 rows a thread, 8 lanes a block against p78's 16
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d14 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --build p77=master 2>&1 | grep -v WARNING | tail -1
rm -rf $W/trees/p78 && cp -r $W/trees/master $W/trees/p78 && cp $S/nv_k8.py $W/trees/p78/tinygrad/llm/kernels/nv.py
log prep
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 VARS="2,4,2,1,8 1,4,2,1,8 1,4,4,1,8 2,4,1,1,8" PYTHONPATH=$W/trees/p78:$W/site DEV=CUDA timeout 300 python3 $S/mvb2.py "1b qk,1b o,1b down,qw qk,qw down,8b qk,8b o,8b down" $OUT/mvb8-r4.json 2>&1 | grep -v "^\[\|WARNING"
echo quit | nvidia-cuda-mps-control; log done
