#!/usr/bin/env bash
# 8 SMs: p78 against p79 (non-GLU Q4_K/Q5_K matvecs at 4 rows a thread take 8 lanes a block too) in one run, the zoo's Q4_K_M models
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d15 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p77=master 2>&1 | grep -v WARNING | tail -1
for t in p78:nv_k8 p79:nv_p79; do rm -rf $W/trees/${t%%:*} && cp -r $W/trees/master $W/trees/${t%%:*} && cp $S/${t#*:}.py $W/trees/${t%%:*}/tinygrad/llm/kernels/nv.py; done
mkdir -p $W/bench/gguf
for m in "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m" "llama-3.2-1b q4_k_m"; do set -- $m
  [ -f $W/bench/gguf/$1-$2.gguf ] || (PYTHONPATH=$W/site:$S/scripts python3 -c "from synth_gguf import write_llama_gguf; write_llama_gguf('$W/bench/gguf/$1-$2.gguf.tmp', '$1', '$2')" && mv $W/bench/gguf/$1-$2.gguf.tmp $W/bench/gguf/$1-$2.gguf) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 120 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms 8 --build p78=$W/trees/p78 --build p79=$W/trees/p79 --out $W/ab8-$m 2>&1 | grep "|" | tail -2
  cp $W/ab8-$m/bench.json $OUT/ab8-$m.json; log $m; done
