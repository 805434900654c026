#!/usr/bin/env bash
# Side-by-side LLM decode on one NVIDIA GPU: tinygrad 0.12.0 (pristine sdist) vs 0.12.0 + patches/series vs llama.cpp,
# all on one generated LLaMA-3.2-1B-shaped Q6_K GGUF. Needs python3 with numpy+gguf, nvcc, cmake; no network.
#   usage: scripts/device_bench.sh SRC OUT PHASE...
#   SRC holds tinygrad-0.12.0.tar.gz, llama.cpp-src.tar.gz (vendor/llama.cpp of the llama-cpp-python sdist) and,
#   for the `ours` phase, patches/ (series + *.patch); OUT receives JSON and logs.
#   phases, in the order given: build (llama.cpp in the background) gguf up ours llamacpp suite
#   MV_SWEEP="4,8,4 8,16,2" sweeps MV_BLOCKSIZE,MV_THREADS_PER_ROW,MV_ROWS_PER_THREAD in the `ours` phase.
set -uo pipefail
SRC=$(realpath "$1") OUT=$(realpath "$2"); shift 2
HERE=$(dirname "$(realpath "$0")") W=/tmp/devbench
GGUF=$W/llama-3.2-1b-q6_k.gguf
TOKENS=${TOKENS:-64} WARMUP=${WARMUP:-16}
mkdir -p "$W" "$OUT"
log() { echo "[device_bench $(date -u +%T)] $*"; }
tree() {  # tree NAME [patches dir]: the sdist unpacked, patches applied in series order
  [ -d "$W/$1" ] && return 0
  mkdir -p "$W/$1" && tar xzf "$SRC/tinygrad-0.12.0.tar.gz" -C "$W/$1" --strip-components=1 || return 1
  if [ -n "${2:-}" ]; then
    while read -r p; do [ -z "$p" ] || [ "${p:0:1}" = "#" ] || (cd "$W/$1" && patch -p1 -s --no-backup-if-mismatch < "$2/$p") || return 1
    done < "$2/series"
  fi
}
decode() {  # decode NAME [bench.py args]: tinygrad decode tok/s on CUDA with that tree
  local name=$1; shift
  PYTHONPATH="$W/$name:${PYTHONPATH:-}" python3 "$HERE/bench.py" --devices CUDA --only llm --gguf "$GGUF" --max-context 1024 \
    --warmup "$WARMUP" --tokens "$TOKENS" --out "$OUT/$name" --timeout 540 "$@"
}
for phase in "$@"; do
  log "phase $phase"
  case $phase in
    build)
      mkdir -p "$W/lc" && tar xzf "$SRC/llama.cpp-src.tar.gz" -C "$W/lc"
      arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
      setsid nohup bash -c "cd $W/lc && cmake -S llama.cpp -B b -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DCMAKE_CUDA_COMPILER=\$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) && \
        nice -n 10 cmake --build b --target llama-bench -j \$(nproc) && touch DONE || touch FAILED" > "$W/lc/build.log" 2>&1 < /dev/null &
      log "llama.cpp build started for sm_$arch";;
    gguf) [ -f "$GGUF" ] || python3 "$HERE/synth_gguf.py" --preset llama-3.2-1b --out "$GGUF";;
    up) tree up && decode up;;
    ours) tree ours "$SRC/patches" && decode ours $(for m in ${MV_SWEEP:-}; do echo --mv "$m"; done);;
    llamacpp)
      while [ ! -e "$W/lc/DONE" ] && [ ! -e "$W/lc/FAILED" ]; do sleep 5; done
      if [ -e "$W/lc/FAILED" ]; then tail -30 "$W/lc/build.log"; cp "$W/lc/build.log" "$OUT/llamacpp-build.log"; continue; fi
      "$W/lc/b/bin/llama-bench" -m "$GGUF" -ngl 99 -p 512 -n 128 -r 5 -o json > "$OUT/llama-bench.json" 2> "$OUT/llama-bench.log"
      python3 -c "import json,sys; [print(f\"llama.cpp {r['model_type']} {'pp' if r['n_prompt'] else 'tg'}{r['n_prompt'] or r['n_gen']}: {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} tok/s ({r['backends']}, fa={r.get('flash_attn')}, {r['gpu_info']}, build {r['build_commit']})\") for r in json.load(open(sys.argv[1]))]" "$OUT/llama-bench.json" || tail -20 "$OUT/llama-bench.log";;
    suite) tree up && PYTHONPATH="$W/up:${PYTHONPATH:-}" python3 "$HERE/bench.py" --devices NV,CUDA --out "$OUT/suite" --timeout 300 ${SUITE_ARGS:-};;
    *) log "unknown phase $phase"; exit 2;;
  esac
done
