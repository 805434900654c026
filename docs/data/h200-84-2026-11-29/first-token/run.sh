#!/usr/bin/env bash
# p83: the first token cold and warm (each model's bench run twice on one compile cache, whole GPU), then the attention of
# values-16-bytes-a-thread.diff against p83's in one process
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d21 $(date -u +%T) +${SECONDS}s] $*"; }
[ -d $W/trees/master ] || PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p83=master 2>&1 | grep -v WARNING | tail -1
rm -rf $W/trees/v16 && cp -r $W/trees/master $W/trees/v16 && cp $S/nv_v16.py $W/trees/v16/tinygrad/llm/kernels/nv.py
mkdir -p $W/bench/gguf
for m in "llama-3.2-1b q4_k_m" "qwen3-1.7b q4_k_m" "llama-3.1-8b q4_k_m"; do set -- $m; f=$W/bench/gguf/$1-$2.gguf
  [ -f $f ] || (PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset $1 --quant $2 --out $f.tmp && mv $f.tmp $f) > $W/gg-$1-$2.log 2>&1 &
done; wait; log prep
for m in llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.1-8b-q4_k_m; do for r in cold warm; do
  PYTHONPATH=$W/site timeout 60 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --warmup 1 --tokens 4 --build p83=$W/trees/master --out $W/ft-$m-$r > /dev/null 2>&1
  cp $W/ft-$m-$r/bench.json $OUT/ft-$m-$r.json && python3 -c "import json; r=json.load(open('$OUT/ft-$m-$r.json'))['results'][0]['rows'][0]; print('$m $r', round(r['load_s'],2), round(r['first_token_s'],2), r['first_token_compiled'])"; log $m $r; done; done
PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 240 python3 $S/attv16.py $S/scripts $S/nv_v16.py $OUT/attv16.json 2>&1 | grep -v WARN; log done
