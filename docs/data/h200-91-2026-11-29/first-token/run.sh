#!/usr/bin/env bash
# first tokens, p89 (0001-0089) against p90 (+ block traces) on one compile cache: a cold run each, then warm runs in ABBA order
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d35 $(date -u +%T) +${SECONDS}s] $*"; }
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do for r in cold:p89 w1:p90 w1:p89 w2:p89 w2:p90 w3:p90 w3:p89; do
  t=${r#*:}; d=$W/trees/master; [ $t = p89 ] && d=$W/trees/master_a_block_like; o=$W/ft-$m-${r/:/-}
  PYTHONPATH=$W/site timeout 60 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --warmup 1 --tokens 2 --build $t=$d --out $o > /dev/null 2>&1
  python3 -c "import json; r=json.load(open('$o/bench.json'))['results'][0]['rows'][0]; print('$m $r', round(r['load_s'],2), round(r['first_token_s'],2), r['first_token_compiled'])" | tee -a $OUT/first-tokens.txt
done; log $m; done
for m in llama-3.2-1b-f16 llama-3.2-1b-q6_k; do
  PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 --warmup 2 --tokens 8 --prefill 512 --build p90=$W/trees/master --out $W/pp-$m 2>&1 | grep "|" | tail -3
  cp $W/pp-$m/bench.json $OUT/pp-$m.json; log $m
done
