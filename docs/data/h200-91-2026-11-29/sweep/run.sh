#!/usr/bin/env bash
# 91 patches: Q4_K's 8-lane matvecs alone at more launch shapes (loads of 2 or 4 steps in flight a thread), whole GPU
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[d38 $(date -u +%T) +${SECONDS}s] $*"; }
python3 $S/scripts/series.py apply --base master --tree $W/trees/p91 --patches $S/patches-tc --cache $S 2>&1 | tail -1; log prep
cd $S/scripts && PYTHONPATH=$W/trees/p91 DEV=CUDA timeout 240 python3 -c "
import json, kernel_bench as kb
kb.SWEEP = [(1,2,2,1,8), (2,2,1,1,8), (1,2,2,2,8), (1,1,4,4,8), (1,1,2,4,8), (1,1,8,4,8), (2,1,2,2,8), (1,1,4,2,8)]
rows = kb.matvec(['8b qk', '8b o', 'qwen3 qk', 'qwen3 down', 'qwen3 glu', '8b glu'], True)
open('$OUT/sweep-all.json', 'w').write(json.dumps(rows, indent=1))
" 2>&1 | grep "GB/s"; log done
