#!/usr/bin/env bash
# the zoo at SMS with p78 (patches/master + Q4_K/Q5_K 16-byte lanes: nv_k8.py), llama.cpp beside it, decode through position 127
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d12 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p77=master 2>&1 | grep -v WARNING | tail -1
rm -rf $W/trees/p78 && cp -r $W/trees/master $W/trees/p78 && cp $S/nv_k8.py $W/trees/p78/tinygrad/llm/kernels/nv.py
mkdir -p $W/bench/gguf
for m in "llama-3.2-1b q6_k" "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m" "llama-3.2-1b q4_k_m" "llama-3.2-1b q8_0"; do set -- $m
  [ -f $W/bench/gguf/$1-$2.gguf ] || (PYTHONPATH=$W/site:$S/scripts python3 -c "from synth_gguf import write_llama_gguf; write_llama_gguf('$W/bench/gguf/$1-$2.gguf.tmp', '$1', '$2')" && mv $W/bench/gguf/$1-$2.gguf.tmp $W/bench/gguf/$1-$2.gguf) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
timeout ${TO:-540} scripts/device_bench.sh run $S $OUT/z --devices CUDA --only llm --zoo --sms $SMS --prefill 512 --build p78=$W/trees/p78 2>&1 | grep -v "^\[bench\|WARNING: Target" | tail -16
log done
