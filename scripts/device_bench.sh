#!/usr/bin/env bash
# Side-by-side LLM decode on one NVIDIA GPU: tinygrad 0.12.0 (pristine sdist) vs 0.12.0 + patches/series vs llama.cpp,
# all on one generated LLaMA-3.2-1B-shaped Q6_K GGUF. Needs python3 with numpy+gguf, nvcc, cmake; no network.
#   usage: scripts/device_bench.sh SRC OUT PHASE...
#   SRC holds tinygrad-0.12.0.tar.gz, llama.cpp-src.tar.gz (vendor/llama.cpp of the llama-cpp-python sdist) and,
#   for the `ours` phases, patches/ (series + *.patch). Results land in /tmp/devbench/res; `collect` copies them to OUT.
#   phases: build (llama.cpp, in the background)  gguf  warm (fill tinygrad's compile cache)  up  ours
#           sweep (MV_SWEEP="4,8,4 8,16,2": MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD, in one process)
#           best (the sweep's fastest, in a fresh process)  llamacpp  suite  beam  collect
#   A measuring phase whose result exists is skipped, and none starts once BUDGET_S seconds have passed, so a second
#   call with the same phases finishes what the first could not.
set -uo pipefail
SRC=$(realpath "$1") OUT=$(realpath "$2"); shift 2
HERE=$(dirname "$(realpath "$0")") W=/tmp/devbench
GGUF=$W/llama-3.2-1b-q6_k.gguf RES=$W/res
TOKENS=${TOKENS:-64} WARMUP=${WARMUP:-16}
mkdir -p "$W" "$RES" "$OUT"
log() { echo "[device_bench $(date -u +%T) +${SECONDS}s] $*"; }
tree() {  # tree NAME [patches dir]: the sdist unpacked, patches applied in series order
  [ -d "$W/$1" ] && return 0
  mkdir -p "$W/$1" && tar xzf "$SRC/tinygrad-0.12.0.tar.gz" -C "$W/$1" --strip-components=1 || return 1
  if [ -n "${2:-}" ]; then
    while read -r p; do [ -z "$p" ] || [ "${p:0:1}" = "#" ] || (cd "$W/$1" && patch -p1 -s --no-backup-if-mismatch < "$2/$p") || return 1
    done < "$2/series"
  fi
}
decode() {  # decode TREE RESULT [bench.py args]: tinygrad decode tok/s on CUDA with that tree
  local tree=$1 res=$2; shift 2
  PYTHONPATH="$W/$tree:${PYTHONPATH:-}" python3 "$HERE/bench.py" --devices CUDA --only llm --gguf "$GGUF" --max-context 1024 \
    --warmup "$WARMUP" --tokens "$TOKENS" --out "$W/out/$res" --timeout 540 "$@" && cp "$W/out/$res/bench.json" "$RES/$res.json"
}
sweep_args() { for m in ${MV_SWEEP:-}; do echo --mv "$m"; done; }
for phase in "$@"; do
  if [ "$phase" != collect ] && [ "$SECONDS" -gt "${BUDGET_S:-100000}" ]; then log "skip $phase: past BUDGET_S"; continue; fi
  case $phase in up|ours|sweep|best|suite|beam) [ -f "$RES/$phase.json" ] && { log "have $phase"; continue; };; esac
  log "phase $phase"
  case $phase in
    build)
      [ -d "$W/lc" ] && continue
      mkdir -p "$W/lc" && tar xzf "$SRC/llama.cpp-src.tar.gz" -C "$W/lc"
      arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
      setsid nohup bash -c "cd $W/lc && cmake -S llama.cpp -B b -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DCMAKE_CUDA_COMPILER=\$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) && \
        nice -n 10 cmake --build b --target llama-bench -j \$(nproc) && touch DONE || touch FAILED" > "$W/lc/build.log" 2>&1 < /dev/null &
      log "llama.cpp build started for sm_$arch";;
    gguf) [ -f "$GGUF" ] || python3 "$HERE/synth_gguf.py" --preset llama-3.2-1b --out "$GGUF";;
    warm)  # compile every kernel once (tinygrad caches compiled programs on disk) so the timed phases time decode only
      tree up && tree ours "$SRC/patches" || exit 1
      TOKENS=4 WARMUP=2 decode up warm-up && TOKENS=4 WARMUP=2 decode ours warm-ours $(sweep_args);;
    up) tree up && decode up up;;
    ours) tree ours "$SRC/patches" && decode ours ours;;
    sweep) tree ours "$SRC/patches" && decode ours sweep $(sweep_args);;
    best)
      best=$(python3 -c "import json,sys; rows=json.load(open(sys.argv[1]))['results'][0]['rows']; print(max(rows, key=lambda r: r.get('value', 0))['mv'])" "$RES/sweep.json") || continue
      log "fastest in the sweep: MV=$best"
      IFS=, read -r b t r <<< "$best"
      MV_BLOCKSIZE=$b MV_THREADS_PER_ROW=$t MV_ROWS_PER_THREAD=$r decode ours best;;
    beam) tree ours "$SRC/patches" && JITBEAM=${JITBEAM:-2} decode ours beam;;
    llamacpp)
      [ -f "$RES/llama-bench.json" ] && { log "have llamacpp"; continue; }
      while [ ! -e "$W/lc/DONE" ] && [ ! -e "$W/lc/FAILED" ]; do sleep 5; done
      if [ -e "$W/lc/FAILED" ]; then tail -30 "$W/lc/build.log"; continue; fi
      "$W/lc/b/bin/llama-bench" -m "$GGUF" -ngl 99 -p 512 -n 128 -r 5 -o json > "$RES/llama-bench.json" 2> "$W/llama-bench.log" || tail "$W/llama-bench.log"
      python3 -c "import json,sys; [print(f\"llama.cpp {r['model_type']} {'pp' if r['n_prompt'] else 'tg'}{r['n_prompt'] or r['n_gen']}: {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} tok/s ({r['backends']}, fa={r.get('flash_attn')}, {r['gpu_info']})\") for r in json.load(open(sys.argv[1]))]" "$RES/llama-bench.json";;
    suite) tree up && PYTHONPATH="$W/up:${PYTHONPATH:-}" python3 "$HERE/bench.py" --devices NV,CUDA --out "$W/out/suite" --timeout 400 ${SUITE_ARGS:-} \
             && cp "$W/out/suite/bench.json" "$RES/suite.json" && cp "$W/out/suite/bench.png" "$RES/suite.png";;
    collect) cp "$RES"/* "$OUT"/ 2>/dev/null; ls "$OUT";;
    *) log "unknown phase $phase"; exit 2;;
  esac
done
