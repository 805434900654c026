#!/usr/bin/env bash
# the zoo's 512-token prompts (--tokens 2, no llama-bench) with the series (p95), with h200-95-2026-11-29/next's 0096 (pg), 0096 and
# 0097 (pgn), and those and relax/0096-relax.patch (pgnr, SMS=all only: relax changes nothing at 8 SMs); SMS=8 or all, the models
# as arguments (default: the zoo's five)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-95-2026-11-29; log() { echo "[ab $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
for b in g gn gnr; do
  [ -d $W/trees/p$b ] && continue
  mkdir -p $S/patches-$b && cp $S/patches-master/* $S/patches-$b/
  for p in $D/next/0096-llm-*.patch $D/next/0097-llm-*.patch $D/relax/0096-relax.patch; do
    case $(basename $p) in 0096-llm*) k=g;; 0097-llm*) k=n;; *) k=r;; esac
    [[ $b == *$k* ]] && cp $p $S/patches-$b/ && basename $p >> $S/patches-$b/series
  done
  python3 $S/scripts/series.py apply --base master --tree $W/trees/p$b --patches $S/patches-$b --cache $S 2>&1 | tail -1
done
[ -d $W/trees/p95 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
[ -d $W/bench/gguf ] || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
builds=(--build p95=$W/trees/p95 --build pg=$W/trees/pg --build pgn=$W/trees/pgn); [ $SMS = all ] && builds+=(--build pgnr=$W/trees/pgnr)
models=("$@"); [ $# = 0 ] && models=(llama-3.2-1b-q6_k llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.2-1b-q8_0 llama-3.1-8b-q4_k_m)
for m in "${models[@]}"; do
  PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms $SMS --warmup 1 \
    --tokens 2 --prefill 512 "${builds[@]}" --out $W/ab-$SMS-$m 2>&1 | grep "prefill"
  cp $W/ab-$SMS-$m/bench.json $OUT/ab-$SMS-$m.json; log $m
done
