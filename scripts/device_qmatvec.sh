#!/usr/bin/env bash
# Decode on one NVIDIA GPU, the series' speed patches each measured against the tree without it: each LLaMA-3.2-1B projection as one
# kernel (scripts/qmatvec_bench.py: fp16, Q6_K of the whole series at QUANT_LANES 8/16/32, of tree nobits (0026's lane-first form),
# of tree pre25 (flat)), then decode tok/s with fp16 and GGUF_QUANT=1 weights per tree, then llama.cpp tg128/pp512 on the same file.
# Each tree is the sdist + SRC/patches/series cut as TREES says. llama.cpp builds in the background from the start; timed decode waits for it.
#   usage: scripts/device_qmatvec.sh SRC OUT PHASE...   (SRC as for device_bench.sh, plus SRC/scripts/{bench,synth_gguf,qmatvec_bench}.py;
#   pip wheels for gguf in SRC/whl/). phases: prep kernels decode qload older repeat profile llamacpp; none starts after STOP seconds, and a
#   second call on the same machine skips the decode runs the first finished. Logs and JSON land in OUT/results.tgz.
set -uo pipefail
SRC=$(realpath "$1") OUT=$(realpath "$2"); shift 2
W=/tmp/devbench; G=$W/llama-3.2-1b-q6_k.gguf S=$SRC/scripts STOP=${STOP:-480}
# NAME:N, the sdist + patches/series without its last N patches, or NAME@TEXT, up to the first patch whose name holds TEXT, in $W/NAME:
# each tree a prefix of the series, so each compares with the next shorter: all, nokv without the fp16 KV cache (0037), noxf32 also without
# x as float32 (0036), noxvec also without x's vector load (0034 on), nowords also without the blocks as words (0033 on), nox also
# without the x buffer (0032 on), nobits also without bytes-to-floats-by-bits, nofuse also without the fused projections, no28/no27/pre25
TREES=${TREES:-"all:0 nokv@keep-the-KV-cache-in-the-model noxf32@read-x-as-float32 noxvec@unroll-the-few-values nowords@read-the-blocks-as-words nox@quantized-matvecs-read-x nobits@quantized-matvecs-make-floats nofuse@project-q-k-and-v no28@a-reduce-to-one-value no27@decode-attends-over-the-KV pre25@matvec-opts-for-sums"}
MV="MV_BLOCKSIZE=4 MV_THREADS_PER_ROW=64 MV_ROWS_PER_THREAD=1"
log() { echo "[$(date -u +%T) +${SECONDS}s] $*"; }
mkdir -p $W $OUT; export PYTHONPATH=/tmp/site
decode() {  # decode NAME TREE TIMEOUT [ENV=VAL...] [-- bench.py args]: a fresh process
  local n=$1 tree=$W/$2 to=$3; shift 3; local envs=(); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  [ $SECONDS -gt $STOP ] && { log "skip $n: past STOP"; return; }
  [ -f $W/o/$n/bench.json ] && { log "have $n"; return; }  # done by an earlier call on this machine
  log "decode $n ${envs[*]} $*"
  env "${envs[@]}" PYTHONPATH=$tree:/tmp/site timeout $to python3 $S/bench.py --devices CUDA --only llm --gguf $G --max-context 1024 \
    --warmup 16 --tokens 64 --timeout $to --out $W/o/$n "$@" > $OUT/$n.log 2>&1; echo "rc=$?" >> $OUT/$n.log
  grep -E "tok/s|Error|error|rc=" $OUT/$n.log | tail -6 | sed "s/^/$n: /"
  [ -f $W/o/$n/bench.json ] && cp $W/o/$n/bench.json $OUT/$n.json
}
for phase in "$@"; do
  [ $SECONDS -gt $STOP ] && { log "skip $phase: past STOP"; continue; }
  log "phase $phase"
  case $phase in
    prep)
      python3 -m pip install -q --no-index --no-deps --target /tmp/site $SRC/whl/*.whl
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -2; python3 --version
      if [ ! -d $W/lc ]; then
        mkdir -p $W/lc && tar xzf $SRC/llama.cpp-src.tar.gz -C $W/lc
        arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
        setsid nohup bash -c "cd $W/lc && cmake -S llama.cpp -B b -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch -DCMAKE_BUILD_TYPE=Release \
          -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
          -DCMAKE_CUDA_COMPILER=\$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) && \
          nice -n 10 cmake --build b --target llama-bench -j \$(nproc) && touch DONE || touch FAILED" > $W/lc/build.log 2>&1 < /dev/null &
        log "llama.cpp build started for sm_$arch"
      fi
      [ -f $G ] || python3 $S/synth_gguf.py --preset llama-3.2-1b --out $G > $OUT/gguf.log 2>&1 & gp=$!
      for t in $TREES; do
        d=$W/${t%%[:@]*}; [ -d $d ] && continue
        case $t in
          *@*) n=$(( $(grep -n -m1 -F -- "${t#*@}" $SRC/patches/series | cut -d: -f1) - 1 )); [ $n -ge 0 ] || { echo "no patch holds ${t#*@}"; exit 1; };;
          *) n=$(( $(grep -c . $SRC/patches/series) - ${t#*:} ));;
        esac
        mkdir -p $d && tar xzf $SRC/tinygrad-0.12.0.tar.gz -C $d --strip-components=1 || exit 1
        for p in $(head -n $n $SRC/patches/series); do patch -p1 -s --no-backup-if-mismatch -d $d < $SRC/patches/$p || { echo "patch $p failed"; exit 1; }; done
        log "$d: up to $(head -n $n $SRC/patches/series | tail -1)"
      done
      wait $gp || { cat $OUT/gguf.log; exit 1; }; ls -l $G;;
    kernels)  # device-timed, so the llama.cpp build on the CPUs does not skew it
      PYTHONPATH=$W/all:/tmp/site timeout 300 python3 $S/qmatvec_bench.py --dev CUDA --out $OUT/qmatvec.json --lanes ${LANES:-8,16,32} \
        ${QMV:---mv 4,64,1 --mv 4,32,1 --mv 4,8,1} 2>&1 | tee $OUT/qmatvec.log | grep -v "^\["
      PYTHONPATH=$W/nobits:/tmp/site timeout 120 python3 $S/qmatvec_bench.py --dev CUDA --out $OUT/qmatvec-nobits.json --forms q6_k \
        --mv 4,64,1 --mv 4,32,1 --mv 4,8,1 2>&1 | tee $OUT/qmatvec-nobits.log | grep -v "^\["
      PYTHONPATH=$W/pre25:/tmp/site timeout 120 python3 $S/qmatvec_bench.py --dev CUDA --out $OUT/qmatvec-pre25.json --forms q6_k \
        --mv 4,64,1 --mv 4,8,1 2>&1 | tee $OUT/qmatvec-pre25.log | grep -v "^\[";;
    decode)  # the newest patches first: each tree one process, fp16 and Q6_K
      while [ ! -e $W/lc/DONE ] && [ ! -e $W/lc/FAILED ] && [ $SECONDS -lt $STOP ]; do sleep 5; done; log "llama.cpp build: $(ls $W/lc | grep -E 'DONE|FAILED')"
      decode quant-mv all 150 GGUF_QUANT=1 $MV
      decode fp16-mv all 120 $MV
      decode quant-mv-nokv nokv 150 GGUF_QUANT=1 $MV
      decode fp16-mv-nokv nokv 120 $MV
      # context 4096: steps at positions 4000-4095 over a fresh cache (bench.py --start-pos), fp16 cache (all) against float32 (nokv)
      decode quant-mv-4k all 150 GGUF_QUANT=1 $MV -- --max-context 4096 --start-pos 4000
      decode quant-mv-4k-nokv nokv 150 GGUF_QUANT=1 $MV -- --max-context 4096 --start-pos 4000
      decode fp16-mv-4k all 120 $MV -- --max-context 4096 --start-pos 4000
      decode fp16-mv-4k-nokv nokv 120 $MV -- --max-context 4096 --start-pos 4000
      decode quant-mv-nox nox 150 GGUF_QUANT=1 $MV
      decode quant-mv-nobits nobits 150 GGUF_QUANT=1 $MV
      decode quant-mv-nofuse nofuse 150 GGUF_QUANT=1 $MV
      decode fp16-mv-nofuse nofuse 120 $MV
      decode quant-mv-l16 all 150 GGUF_QUANT=1 QUANT_LANES=16 $MV
      decode quant-mv-l32 all 150 GGUF_QUANT=1 QUANT_LANES=32 $MV;;
    qload)  # 0033-0036 (blocks as words, x as one vector load, x as float32), each against the tree without it: kernels, then decode
      for t in nowords noxvec noxf32; do
        PYTHONPATH=$W/$t:/tmp/site timeout 120 python3 $S/qmatvec_bench.py --dev CUDA --out $OUT/qmatvec-$t.json --forms q6_k \
          --mv 4,64,1 --mv 4,32,1 2>&1 | tee $OUT/qmatvec-$t.log | grep -v "^\["
      done
      while [ ! -e $W/lc/DONE ] && [ ! -e $W/lc/FAILED ] && [ $SECONDS -lt $STOP ]; do sleep 5; done
      decode quant-mv all 150 GGUF_QUANT=1 $MV
      decode quant-mv-noxf32 noxf32 150 GGUF_QUANT=1 $MV
      decode quant-mv-noxvec noxvec 150 GGUF_QUANT=1 $MV
      decode quant-mv-nowords nowords 150 GGUF_QUANT=1 $MV;;
    older)  # 0025-0028, each against the tree without it
      decode quant-mv-no28 no28 150 GGUF_QUANT=1 $MV
      decode fp16-mv-no28 no28 120 $MV
      decode quant-mv-no27 no27 150 GGUF_QUANT=1 $MV
      decode fp16-mv-no27 no27 120 $MV
      decode quant-mv-pre25 pre25 150 GGUF_QUANT=1 $MV;;
    repeat)  # the same processes again, for the spread
      decode quant-mv-2 all 120 GGUF_QUANT=1 $MV
      decode fp16-mv-2 all 120 $MV
      decode quant-mv-nofuse-2 nofuse 150 GGUF_QUANT=1 $MV
      decode fp16-mv-nofuse-2 nofuse 120 $MV
      decode quant-default all 150 GGUF_QUANT=1;;
    profile) decode quant-prof all 150 GGUF_QUANT=1 $MV -- --profile --tokens 32;;
    llamacpp)
      while [ ! -e $W/lc/DONE ] && [ ! -e $W/lc/FAILED ]; do sleep 5; done
      [ -e $W/lc/FAILED ] && { tail -30 $W/lc/build.log; continue; }
      $W/lc/b/bin/llama-bench -m $G -ngl 99 -p 512 -n 128 -r 5 -o json > $OUT/llama-bench.json 2> $OUT/llama-bench.log || tail $OUT/llama-bench.log
      python3 -c "import json,sys; [print(f\"llama.cpp {r['model_type']} {'pp' if r['n_prompt'] else 'tg'}{r['n_prompt'] or r['n_gen']}: {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} tok/s ({r['backends']}, fa={r.get('flash_attn')}, {r['gpu_info']})\") for r in json.load(open(sys.argv[1]))]" $OUT/llama-bench.json;;
    *) log "unknown phase $phase"; exit 2;;
  esac
done
# what comes back from the device tool is at most 8 files: one archive
tar czf $W/results.tgz -C $OUT . && rm -rf $OUT/* && mv $W/results.tgz $OUT/
log done
