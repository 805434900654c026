#!/usr/bin/env bash
# Decode on one NVIDIA GPU with the whole patch series: fp16 weights vs GGUF_QUANT=1 (Q6_K kept quantized), tuned
# and default MV knobs, an in-process MV sweep of the quantized build; fresh process per figure otherwise.
#   usage: scripts/device_quant_bench.sh SRC OUT   (SRC as for device_bench.sh, plus SRC/scripts/{bench,synth_gguf}.py;
#   pip wheels for gguf in .whl/; STOP: seconds after which no further run starts)
set -uo pipefail
SRC=$(realpath "$1") OUT=$(realpath "$2") W=/tmp/devbench; G=$W/llama-3.2-1b-q6_k.gguf T=$W/series S=$SRC/scripts
MV="MV_BLOCKSIZE=4 MV_THREADS_PER_ROW=64 MV_ROWS_PER_THREAD=1"; STOP=${STOP:-430}
log() { echo "[$(date -u +%T) +${SECONDS}s] $*"; }
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -2; python3 --version
mkdir -p $W $T $OUT; log gguf+tree
[ -f $G ] || python3 $S/synth_gguf.py --preset llama-3.2-1b --out $G > $OUT/gguf.log 2>&1 & gp=$!
tar xzf $SRC/tinygrad-0.12.0.tar.gz -C $T --strip-components=1 || exit 1
for p in $(cat $SRC/patches/series); do patch -p1 -s --no-backup-if-mismatch -d $T < $SRC/patches/$p || { echo "patch $p failed"; exit 1; }; done
wait $gp || { cat $OUT/gguf.log; exit 1; }; ls -l $G; log ready
run() {  # run NAME TIMEOUT [ENV=VAL...] [-- bench.py args]
  local n=$1 to=$2; shift 2; local envs=(); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  [ $SECONDS -gt $STOP ] && { log "skip $n: past STOP"; return; }
  log "run $n ${envs[*]} $*"
  env "${envs[@]}" PYTHONPATH=$T:/tmp/site timeout $to python3 $S/bench.py --devices CUDA --only llm --gguf $G --max-context 1024 \
    --warmup 16 --tokens 64 --timeout $to --out $W/o/$n "$@" > $OUT/$n.log 2>&1; echo "rc=$?" >> $OUT/$n.log
  grep -E "tok/s|Error|error|rc=" $OUT/$n.log | tail -12 | sed "s/^/$n: /"
  [ -f $W/o/$n/bench.json ] && cp $W/o/$n/bench.json $OUT/$n.json
}
run fp16-mv 150 $MV
run quant-mv 150 GGUF_QUANT=1 $MV
run quant-sweep 200 GGUF_QUANT=1 -- --mv 4,8,4 --mv 4,8,2 --mv 4,8,1 --mv 8,8,1 --mv 16,8,1 --mv 4,32,1 --mv 4,64,1
run quant-default 120 GGUF_QUANT=1
run fp16-mv-2 120 $MV
run quant-mv-2 120 GGUF_QUANT=1 $MV
log done
