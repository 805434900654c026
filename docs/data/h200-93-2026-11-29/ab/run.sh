#!/usr/bin/env bash
# p91 (patches/master), p92 (+ 0092, a prompt's q, k and v in one matmul), p93 (+ 0092, 0093, a prompt's softmax rows in one pass a
# warp), p91 again: 512-token prompts of the 1B Q6_K, the 8B and Qwen3-1.7B, whole GPU and 8 SMs; llama-bench built alongside
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; N=docs/data/h200-91-2026-11-29/next; log() { echo "[ab $(date -u +%T) +${SECONDS}s] $*"; }
PREP_ONLY=1 scripts/device_bench.sh run $S $OUT/prep --zoo --build p91=master 2>&1 | grep -v WARNING | tail -1
for n in 2 3; do
  mkdir -p $S/patches-9$n && cp $S/patches-master/* $S/patches-9$n/ && cp $N/009[2-$n]-llm-*.patch $S/patches-9$n/ \
    && (cd $S/patches-9$n && ls 009[2-$n]-llm-*.patch >> series)
  python3 $S/scripts/series.py apply --base master --tree $W/trees/p9$n --patches $S/patches-9$n --cache $S 2>&1 | tail -1
done
PYTHONPATH=$W/site python3 $S/scripts/synth_gguf.py --zoo --out $W/bench/gguf > /dev/null 2>&1; log prep
B="--build p91=$W/trees/master --build p92=$W/trees/p92 --build p93=$W/trees/p93 --build p91b=$W/trees/master"
for m in llama-3.2-1b-q6_k llama-3.1-8b-q4_k_m qwen3-1.7b-q4_k_m; do
  PYTHONPATH=$W/site timeout 170 python3 $S/scripts/bench.py --devices CUDA --only llm --gguf $W/bench/gguf/$m.gguf --sms all,8 \
    --warmup 2 --tokens 8 --prefill 512 $B --out $W/pp-$m 2>&1 | grep "|" | tail -6
  cp $W/pp-$m/bench.json $OUT/pp-$m.json; log $m
done
while [ ! -e $W/lc/DONE ] && [ ! -e $W/lc/FAILED ] && [ $SECONDS -lt 570 ]; do sleep 5; done
[ -e $W/lc/llama-bench.tar.xz ] && split -b 15M -d $W/lc/llama-bench.tar.xz $OUT/llama-bench.tar.xz.; ls $W/lc; log done
