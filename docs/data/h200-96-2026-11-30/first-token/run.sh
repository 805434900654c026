#!/usr/bin/env bash
# a warm first token's parts on the whole GPU: probe.py twice a model (the first fills the compile cache), the second profiled too
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-96-2026-11-30/first-token
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null; mkdir -p $W/bench/gguf
[ -d $W/trees/p96 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p96 --patches $S/patches-master --cache $S 2>&1 | tail -1
nproc; lscpu | grep "Model name"
for q in q6_k q8_0; do
  g=$W/bench/gguf/llama-3.2-1b-$q.gguf; [ -f $g ] || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --preset llama-3.2-1b --quant $q --out $g > /dev/null
  for i in 1 2; do echo "== $q run $i"; PYTHONPATH=$W/trees/p96:$W/site DEV=CUDA python3 $D/probe.py $g ${i/1/} $([ $i = 2 ] && echo p) 2>&1 | head -60; done
done
