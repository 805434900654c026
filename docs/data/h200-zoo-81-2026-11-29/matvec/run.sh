# kb2.py: scripts/kernel_bench.py with SWEEP = 8-lane shapes at unroll 1-4
SWEEP = [(1,2,1,1,8), (1,2,2,1,8), (1,2,1,2,8), (1,2,2,2,8), (2,2,1,2,8), (1,1,4,2,8), (1,1,2,2,8), (1,1,4,4,8), (1,4,1,2,8), (2,1,2,2,8), (1,2,1,4,8)]
PYTHONPATH=$W/trees/master:$W/site DEV=CUDA timeout 240 python3 $S/scripts/kb2.py matvec --shapes "8b glu,8b down q4_k,8b qk,8b o,qwen3 glu,qwen3 down" --sweep --json $OUT/kb2.json 2>&1 | grep -v WARN; log done
