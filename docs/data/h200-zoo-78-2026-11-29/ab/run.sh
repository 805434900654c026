#!/usr/bin/env bash
# p77 against p78 in one run: the zoo's Q4_K_M models, whole GPU and 8 SMs, decode through position 127
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d13 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p77=master 2>&1 | grep -v WARNING | tail -1
[ -d $W/trees/p78 ] || { cp -r $W/trees/master $W/trees/p78 && cp $S/nv_k8.py $W/trees/p78/tinygrad/llm/kernels/nv.py; }
mkdir -p $W/bench/gguf
for m in "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m" "llama-3.2-1b q4_k_m"; do set -- $m
  [ -f $W/bench/gguf/$1-$2.gguf ] || (PYTHONPATH=$W/site:$S/scripts python3 -c "from synth_gguf import write_llama_gguf; write_llama_gguf('$W/bench/gguf/$1-$2.gguf.tmp', '$1', '$2')" && mv $W/bench/gguf/$1-$2.gguf.tmp $W/bench/gguf/$1-$2.gguf) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 170 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 --build p77=$W/trees/master --build p78=$W/trees/p78 --out $W/ab-$m 2>&1 | grep "|" | tail -3
  cp $W/ab-$m/bench.json $OUT/ab-$m.json; log $m; done
