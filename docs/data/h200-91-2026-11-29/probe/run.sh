#!/usr/bin/env bash
# 90 patches: what plain reads reach (whole GPU, 8 SMs), the 8B's and Qwen3's matvecs alone, the 8B's step by ncu; trees for d35
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d34 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p89=master@a-block-like --build p90=master 2>&1 | grep -v WARNING | tail -1
python3 $S/scripts/series.py apply --base master --tree $W/trees/q6 --patches $S/patches-q6 --cache $S 2>&1 | tail -1
(PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf; PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py \
  --preset llama-3.2-1b --quant f16 --out $W/bench/gguf/llama-3.2-1b-f16.gguf) > $W/gguf.log 2>&1 &
python3 $S/read_ceiling.py all 2>&1 | tee $OUT/read-all.log
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p /tmp/mps-pipe /tmp/mps-log; nvidia-cuda-mps-control -d
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 python3 $S/read_ceiling.py 8 2>&1 | tee $OUT/read-8.log
SH="8b qk,8b v,8b o,8b glu,8b down,8b out,qwen3 qk,qwen3 glu,qwen3 down"
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=6 PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 150 python3 $S/scripts/kernel_bench.py matvec --shapes "$SH" --json $OUT/mv-8.json 2>&1 | grep "GB/s"
echo quit | nvidia-cuda-mps-control; log "8 SMs done"
PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 120 python3 $S/scripts/kernel_bench.py matvec --shapes "$SH" --json $OUT/mv-all.json 2>&1 | grep "GB/s"
wait; log gguf
cd $S/scripts && PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 200 ncu --profile-from-start off --clock-control none --cache-control none --csv \
  --print-units base --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum \
  python3 ncu_step.py run $W/bench/gguf/llama-3.1-8b-q4_k_m.gguf > $OUT/ncu-8b.csv 2> $W/ncu.err; tail -3 $W/ncu.err
python3 ncu_step.py summary $OUT/ncu-8b.csv --json $OUT/ncu-8b.json 2>&1 | head -24; log done
