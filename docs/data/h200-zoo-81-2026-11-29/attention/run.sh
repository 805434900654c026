#!/usr/bin/env bash
# p80 against the hd-128 attention with U v loads in flight (u4, u8): the kernel alone, then Qwen3 and the 8B in one bench run each
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d16 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p80=master 2>&1 | grep -v WARNING | tail -1
for u in 4 8; do rm -rf $W/trees/u$u && cp -r $W/trees/master $W/trees/u$u && sed -i "s/return (256, 4) if hd <= 64 else (128, 1)/return (256, 4) if hd <= 64 else (128, $u)/" $W/trees/u$u/tinygrad/llm/kernels/nv.py && grep -c "(128, $u)" $W/trees/u$u/tinygrad/llm/kernels/nv.py; done
mkdir -p $W/bench/gguf
for m in "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m"; do set -- $m
  [ -f $W/bench/gguf/$1-$2.gguf ] || (PYTHONPATH=$W/site:$S/scripts python3 -c "from synth_gguf import write_llama_gguf; write_llama_gguf('$W/bench/gguf/$1-$2.gguf.tmp', '$1', '$2')" && mv $W/bench/gguf/$1-$2.gguf.tmp $W/bench/gguf/$1-$2.gguf) > $W/gg-$1-$2.log 2>&1 &
done
for t in master u4 u8; do PYTHONPATH=$W/trees/$t:$W/site DEV=CUDA timeout 100 python3 $S/scripts/kernel_bench.py attention --positions 40,100,200,300,1000,4000 --json $OUT/att-$t.json 2>&1 | grep -v WARN | sed "s/^/$t /"; done
wait; log prep
for m in qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 200 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 --build p80=$W/trees/master --build u$AB=$W/trees/u$AB --out $W/ab-$m 2>&1 | grep "|" | tail -4
  cp $W/ab-$m/bench.json $OUT/ab-$m.json; log $m; done
# d18: the same interleaved in one process (attab.py)
PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 300 python3 $S/attab.py $S/scripts $OUT/attab.json 2>&1 | grep -v WARN; log done
