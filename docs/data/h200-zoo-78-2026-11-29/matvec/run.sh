#!/usr/bin/env bash
# matvec launches alone (mvb2.py): p77's defaults, then the k8 tree's variants, whole GPU and 8 SMs (MPS)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d11 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --build p77=master 2>&1 | grep -v WARNING | tail -1
[ -d $W/trees/k8 ] || { cp -r $W/trees/master $W/trees/k8 && cp $S/nv_k8.py $W/trees/k8/tinygrad/llm/kernels/nv.py; }
log prep
mb() { PYTHONPATH=$W/trees/$1:$W/site DEV=CUDA timeout ${MVTO:-300} python3 $S/mvb2.py "${MVS:-}" $OUT/$2.json 2>&1 | grep -v "^\[\|WARNING"; }
VARS="" mb master mvb-p77; log p77
mb k8 mvb-k8; log k8
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; nvidia-cuda-mps-control -d
export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6
VARS="" mb master mvb8-p77; log p77-8
VARS="1,2,1,1,8 1,2,2,1,8 2,2,1,1,8 2,2,2,1,8" mb k8 mvb8-k8; log k8-8
echo quit | nvidia-cuda-mps-control
