#!/usr/bin/env bash
# p83 against p85 (0084 as kept: 4 value dims a thread where 4 positions' loads are in flight; 0085 norms at load), p83 run again last:
# LLaMA-3.2-1B Q4_K_M through position 127 (heads of 64), whole GPU and 8 SMs; Qwen3 from position 3000, whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d25 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master@four-dims --build p85=master 2>&1 | grep -v WARNING | tail -1
mkdir -p $W/bench/gguf
for m in "llama-3.2-1b q4_k_m" "qwen3-1.7b q4_k_m"; do set -- $m; f=$W/bench/gguf/$1-$2.gguf
  [ -f $f ] || (PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset $1 --quant $2 --out $f.tmp && mv $f.tmp $f) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
B="--build p83=$W/trees/master_four_dims --build p85=$W/trees/master --build p83b=$W/trees/master_four_dims"
PYTHONPATH=$W/site timeout 200 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/llama-3.2-1b-q4_k_m.gguf --sms all,8 $B --out $W/tg-1b 2>&1 | grep "|" | tail -3
cp $W/tg-1b/bench.json $OUT/tg-llama-3.2-1b-q4_k_m.json; log 1b tg
PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/qwen3-1.7b-q4_k_m.gguf --start-pos 3000 --max-context 4096 --sms all $B --out $W/long-q3 2>&1 | grep "|" | tail -3
cp $W/long-q3/bench.json $OUT/long-qwen3-1.7b-q4_k_m-3000.json; log qwen3 3000
