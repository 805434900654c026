#!/usr/bin/env bash
# the first token on one machine, p83 against p86 (0084-0086), each tree's cache made by a cold run, then warm runs alternated
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d26 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master@four-dims --build p86=master 2>&1 | grep -v WARNING | tail -1
mkdir -p $W/bench/gguf
for m in "llama-3.2-1b q4_k_m" "qwen3-1.7b q4_k_m"; do set -- $m; f=$W/bench/gguf/$1-$2.gguf
  [ -f $f ] || (PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset $1 --quant $2 --out $f.tmp && mv $f.tmp $f) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m; do for r in cold warm1 warm2; do for t in p83:master_four_dims p86:master; do
  PYTHONPATH=$W/site timeout 40 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --warmup 1 --tokens 2 --build ${t%%:*}=$W/trees/${t#*:} --out $W/ft-$m-$r-${t%%:*} > /dev/null 2>&1
  cp $W/ft-$m-$r-${t%%:*}/bench.json $OUT/ft-$m-$r-${t%%:*}.json && python3 -c "import json; r=json.load(open('$OUT/ft-$m-$r-${t%%:*}.json'))['results'][0]['rows'][0]; print('$m $r ${t%%:*}', round(r['load_s'],2), round(r['first_token_s'],2), r['first_token_compiled'])"
done; done; log $m; done
