#!/usr/bin/env bash
# p95's prompt matmuls alone (scripts/matmul_tiles.py), whole GPU: the heuristic's tiles against matmul_tiles' (a warp 64 tokens by 64
# rows, workgroups of 2 and of 4 warps) on the zoo's 512-token shapes (TxKxN)
set -u; W=/tmp/devbench; S=$PWD/.devrun/src; log() { echo "[tiles $(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target $W/site $S/whl/*.whl
python3 $S/scripts/series.py apply --base master --tree $W/trees/p95 --patches $S/patches-95 --cache $S 2>&1 | tail -1; log prep
SH="512x2048x8192 512x8192x2048 512x2048x3072 512x2048x2048 512x4096x14336 512x14336x4096 512x4096x6144 512x4096x4096 512x2048x12288 512x6144x2048"
export PYTHONPATH=$W/trees/p95:$W/site DEV=CUDA
for o in "" "TC:0:(-1,0,1) UPCAST:1:8 LOCAL:1:2 UPCAST:0:4" "TC:0:(-1,0,1) UPCAST:1:8 LOCAL:1:4 UPCAST:0:4"; do
  timeout 100 python3 scripts/matmul_tiles.py run $SH ${o:+--opts "$o"} 2>&1 | grep "MM\|Error" | tee -a $OUT/tiles-all.log
done; log done
