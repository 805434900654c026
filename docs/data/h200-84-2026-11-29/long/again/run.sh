#!/usr/bin/env bash
# p84 against p83 again from position 1000 (Qwen3, twice, p84 first), then the attention alone at 8 SMs (CUDA MPS), in one process
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d24 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master@four-dims --build p84=master 2>&1 | grep -v WARNING | tail -1
mkdir -p $W/bench/gguf; m=qwen3-1.7b-q4_k_m; f=$W/bench/gguf/$m.gguf
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset qwen3-1.7b --quant q4_k_m --out $f > /dev/null 2>&1; log prep
for r in 1 2; do
  PYTHONPATH=$W/site timeout 200 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $f --start-pos 1000 --max-context 4096 --sms all,8 --build p84=$W/trees/master --build p83=$W/trees/master_four_dims --out $W/long-$m-1000-r$r 2>&1 | grep "|" | tail -2
  cp $W/long-$m-1000-r$r/bench.json $OUT/long-$m-1000-r$r.json; log $m 1000 run $r; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 PYTHONPATH=$W/trees/master_four_dims:$W/site DEV=CUDA timeout 200 python3 $S/attv16.py $S/scripts $W/trees/master/tinygrad/llm/kernels/nv.py $OUT/attv16-sms8.json 127,1000,3000 2>&1 | grep -v WARN
echo quit | nvidia-cuda-mps-control; log done
