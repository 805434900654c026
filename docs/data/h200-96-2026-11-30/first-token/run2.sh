#!/usr/bin/env bash
# a warm first token (LLaMA-3.2-1B Q6_K, whole GPU) loaded as tinygrad.llm's cli loads (the path) and as bench.py does (LOAD=tensor),
# then bench.py's own first token twice
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-96-2026-11-30/first-token; g=$W/bench/gguf/llama-3.2-1b-q6_k.gguf
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null; mkdir -p $W/bench/gguf
[ -d $W/trees/p96 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p96 --patches $S/patches-master --cache $S 2>&1 | tail -1
[ -f $g ] || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.2-1b --quant q6_k --out $g > /dev/null
for l in path path path tensor tensor; do echo "== load $l"; LOAD=$l PYTHONPATH=$W/trees/p96:$W/site DEV=CUDA python3 $D/probe.py $g 2>&1 | head -9; done
for i in 1 2; do PYTHONPATH=$W/site python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $g --sms all --warmup 1 --tokens 2 \
  --build p96=$W/trees/p96 --out $W/ft-bench-$i > /dev/null 2>&1; python3 -c "import json; r=json.load(open('$W/ft-bench-$i/bench.json'))['results'][0]['rows'][0]
print('bench.py first token', round(r['first_token_s'], 3), 'lowered', r['first_token_compiled'], 'load', round(r['load_s'], 2))"; done
