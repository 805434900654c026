#!/usr/bin/env bash
# for the next device session: the zoo's 512-token prompts with the series (p95), with next/0096 (pg: a prompt's gate and up in one
# matmul), with 0096 and 0097 (pgn: and a prompt's RMSNorm a row a workgroup) and with those and relax/0096 (pgnr: 0070's tiles where
# they leave every SM 2 workgroups); SMS=all (4 builds) or 8 (p95, pg, pgn: relax changes nothing at 8 SMs). Prompts only (--tokens 2),
# no llama-bench: the zoo's pp512 is in zoo/.
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; D=docs/data/h200-95-2026-11-29; log() { echo "[next $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
for b in g gn gnr; do
  mkdir -p $S/patches-$b && cp $S/patches-master/* $S/patches-$b/
  for p in $D/next/0096-llm-*.patch $D/next/0097-llm-*.patch $D/relax/0096-relax.patch; do
    case $(basename $p) in 0096-llm*) k=g;; 0097-llm*) k=n;; *) k=r;; esac
    [[ $b == *$k* ]] && cp $p $S/patches-$b/ && basename $p >> $S/patches-$b/series
  done
  python3 $S/scripts/series.py apply --base master --tree $W/trees/p$b --patches $S/patches-$b --cache $S 2>&1 | tail -1
done
python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
[ -d $W/bench/gguf ] || PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
builds=(--build p95=$W/trees/p95 --build pg=$W/trees/pg --build pgn=$W/trees/pgn); [ $SMS = all ] && builds+=(--build pgnr=$W/trees/pgnr)
for m in llama-3.2-1b-q6_k llama-3.2-1b-q4_k_m qwen3-1.7b-q4_k_m llama-3.2-1b-q8_0 llama-3.1-8b-q4_k_m; do
  PYTHONPATH=$W/site timeout 150 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms $SMS --warmup 1 \
    --tokens 2 --prefill 512 "${builds[@]}" --out $W/next-$SMS-$m 2>&1 | grep "prefill"
  cp $W/next-$SMS-$m/bench.json $OUT/next-$SMS-$m.json; log $m
done
