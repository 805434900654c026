#!/usr/bin/env bash
# p83 against p84 (a thread sums 4 dims of a head's values) from positions 1000 and 3000, whole GPU and 8 SMs; then the first token's
# host work on this machine's CPU (host_tokens.py, NULL device, tiny-16 twice on one cache)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d23 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master@four-dims --build p84=master 2>&1 | grep -v WARNING | tail -1
mkdir -p $W/bench/gguf
for m in "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m" "tiny-16 q6_k"; do set -- $m; f=$W/bench/gguf/$1-$2.gguf
  [ -f $f ] || (PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset $1 --quant $2 --out $f.tmp && mv $f.tmp $f) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
for r in cold warm; do CACHEDB=$W/host.db PYTHONPATH=$W/trees/master:$W/site python3 $S/scripts/host_tokens.py $W/bench/gguf/tiny-16-q6_k.gguf --tokens 3 --max-context 512 2>&1 | grep -v WARN | sed "s/^/host $r /"; done
for mp in qwen3-1.7b-q4_k_m:1000 llama-3.1-8b-q4_k_m:1000 qwen3-1.7b-q4_k_m:3000 llama-3.1-8b-q4_k_m:3000; do m=${mp%%:*} p=${mp#*:}
  PYTHONPATH=$W/site timeout 200 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --start-pos $p --max-context 4096 --sms all,8 --build p83=$W/trees/master_four_dims --build p84=$W/trees/master --out $W/long-$m-$p 2>&1 | grep "|" | tail -2
  cp $W/long-$m-$p/bench.json $OUT/long-$m-$p.json; log $m $p; done
