#!/usr/bin/env bash
# first tokens on one machine, p83 (0001-0083) against p89, a cold run each then warm runs in ABBA order
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d32 $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master@four-dims --build p89=master 2>&1 | grep -v WARNING | tail -1
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do for r in cold:p83 cold:p89 w1:p83 w1:p89 w2:p89 w2:p83; do
  t=${r#*:}; d=$W/trees/master; [ $t = p83 ] && d=$W/trees/master_four_dims; o=$W/ft-$m-${r/:/-}
  PYTHONPATH=$W/site timeout 60 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --warmup 1 --tokens 2 --build $t=$d --out $o > /dev/null 2>&1
  cp $o/bench.json $OUT/ft-$m-${r/:/-}.json && python3 -c "import json; r=json.load(open('$OUT/ft-$m-${r/:/-}.json'))['results'][0]['rows'][0]; print('$m $r', round(r['load_s'],2), round(r['first_token_s'],2), r['first_token_compiled'])"
done; log $m; done
