#!/usr/bin/env bash
# the zoo's first tokens with the series (p96, its schedules keyed by tinygrad's flags, not the environment): each model's run (one
# warm-up and two timed steps, no prompt) then its first token again in a new process (--first-token-again); 8 SMs first, then the whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[first-token $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl 2>/dev/null
rm -rf $W/trees/p96; python3 $S/scripts/series.py apply --base master --tree $W/trees/p96 --patches $S/patches-master --cache $S 2>&1 | tail -1
for SMS in 8 all; do
  PYTHONPATH=$W/site timeout $([ $SMS = 8 ] && echo 320 || echo 240) python3 $S/scripts/bench.py --devices CUDA --only llm --zoo --sms $SMS --warmup 1 --tokens 2 \
    --first-token-again --build p96=$W/trees/p96 --out $W/ft 2>&1 | grep "^|"
  cp $W/ft/bench.json $OUT/ft-$SMS.json; log $SMS
done
