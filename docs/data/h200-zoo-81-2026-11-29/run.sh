#!/usr/bin/env bash
# p80 against p81 (hd-128 split attention loads 4 positions' values at once) from position 1000 and 3000, then the zoo at SMS with p81
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d19 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p80=master 2>&1 | grep -v WARNING | tail -1
rm -rf $W/trees/p81 && cp -r $W/trees/master $W/trees/p81 && cp $S/nv_p81.py $W/trees/p81/tinygrad/llm/kernels/nv.py
mkdir -p $W/bench/gguf
for m in "llama-3.2-1b q6_k" "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m" "llama-3.2-1b q4_k_m" "llama-3.2-1b q8_0"; do set -- $m
  [ -f $W/bench/gguf/$1-$2.gguf ] || (PYTHONPATH=$W/site:$S/scripts python3 -c "from synth_gguf import write_llama_gguf; write_llama_gguf('$W/bench/gguf/$1-$2.gguf.tmp', '$1', '$2')" && mv $W/bench/gguf/$1-$2.gguf.tmp $W/bench/gguf/$1-$2.gguf) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
if [ -n "${LONG:-1}" ]; then for mp in qwen3-1.7b-q4_k_m:1000 llama-3.1-8b-q4_k_m:1000 qwen3-1.7b-q4_k_m:3000; do m=${mp%%:*} p=${mp#*:}
  PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --start-pos $p --max-context 4096 --build p80=$W/trees/master --build p81=$W/trees/p81 --out $W/long-$m-$p 2>&1 | grep "|" | tail -2
  cp $W/long-$m-$p/bench.json $OUT/long-$m-$p.json; log $m $p; done; fi
timeout ${TO:-300} scripts/device_bench.sh run $S $OUT/z --devices CUDA --only llm --zoo --sms $SMS --prefill 512 --build p81=$W/trees/p81 2>&1 | grep -v "^\[bench\|WARNING: Target" | tail -16
log done
