#!/usr/bin/env bash
# the zoo (llama-bench's tg128 and pp512 at 5 repetitions beside) with the builds named on the command line: p95 (patches/master's
# 95 patches) and pw (p95 with h200-97-2026-11-30/next's 0096); SMS=8 or all
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; N=docs/data/h200-97-2026-11-30/next; log() { echo "[zoo $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
[ -d $W/trees/p95 ] || python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-master --cache $S 2>&1 | tail -1
if [ ! -d $W/trees/pw ]; then
  rm -rf $S/patches-w && cp -r $S/patches-master $S/patches-w && cp $N/0096-*.patch $S/patches-w/ && basename $N/0096-*.patch >> $S/patches-w/series
  python3 $S/scripts/series.py apply --base master --tree $W/trees/pw --patches $S/patches-w --cache $S 2>&1 | tail -1
fi
builds=(); for b in "$@"; do builds+=(--build $b=$W/trees/$b); done; log prep
timeout 540 scripts/device_bench.sh run $S $W/zoo-$SMS --devices CUDA --only llm --zoo --sms $SMS --prefill 512 --llama-reps 5 \
  "${builds[@]}" 2>&1 | grep -v WARNING | grep "|\|device_bench" | tail -24
cp $W/bench/bench.json $OUT/zoo-$SMS.json; cp $W/zoo-$SMS/bench.log $OUT/zoo-$SMS.log; log zoo $SMS
