#!/usr/bin/env bash
# The decode benchmark on a GPU machine without network: tinygrad 0.12.0, either series and llama.cpp's llama-bench side by side on one
# generated LLaMA-3.2-1B-shaped Q6_K GGUF (scripts/synth_gguf.py) or --zoo's models, on the whole GPU and limited to fewer SMs through
# CUDA MPS.
#   scripts/device_bench.sh gather SRC                 # here, with network: what the GPU machine needs, into SRC (about 18 MB)
#   scripts/device_bench.sh run SRC OUT [bench.py args]  # there, as root: trees, llama-bench, then scripts/bench.py; results in OUT
# SRC holds tinygrad-0.12.0.tar.gz, patches/ (series and *.patch), upstream master's tinygrad-a9069c17.tar.xz (from ../shared/upstream)
# and its patches-master/, scripts/ (bench.py, series.py, synth_gguf.py, ...), whl/ (gguf) and
# llama.cpp-src.tar.gz (vendor/llama.cpp of the llama-cpp-python 0.3.36 sdist) or llama-bench.tar.xz* (what an earlier run left in OUT:
# llama-bench built there, static but for the CUDA libraries). PREP_ONLY=1 stops once the trees and the GGUF are made (llama.cpp building
# on). A bench.py --build LABEL=SPEC[;ENV=VAL...] (no = in LABEL) whose SPEC is base (the sdist),
# series (all of patches/v0.12.0/series), series@TEXT (the series before the first patch whose name holds TEXT), master or master@TEXT
# (the same of patches/master on upstream a9069c17) runs a tree that scripts/series.py makes; --gguf (unless --zoo) and --llama-bench are
# added. E.g.:
#   scripts/device_bench.sh run SRC OUT --devices CUDA --only llm --sms all,14,8 --prefill 512 --build "tinygrad 0.12.0=base" --build series=series
#   scripts/device_bench.sh run SRC OUT --devices CUDA --only llm --zoo --sms all --prefill 512 --build "master + series=master"
set -uo pipefail
cmd=$1 SRC=$(realpath -m "$2"); shift 2
LCP_VERSION=0.3.36
if [ "$cmd" = gather ]; then
  set -e; HERE=$(dirname "$(realpath "$0")"); tmp=$(mktemp -d); mkdir -p "$SRC/patches" "$SRC/scripts" "$SRC/whl"
  # the pinned sdist and upstream master's tarball, checked
  python3 -c "import sys, pathlib, shutil; sys.path.insert(0, '$HERE'); import series; src = pathlib.Path('$SRC'); series.V012.fetch(src)
if (f:=series.BASES['master'].fetch(src)).parent != src: shutil.copy(f, src)"
  cp "$HERE"/../patches/v0.12.0/series "$HERE"/../patches/v0.12.0/*.patch "$SRC/patches/"; cp "$HERE"/*.py "$SRC/scripts/"
  mkdir -p "$SRC/patches-master" && cp "$HERE"/../patches/master/series "$HERE"/../patches/master/*.patch "$SRC/patches-master/"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$SRC/whl" gguf==0.17.1
  if [ ! -e "$SRC/llama.cpp-src.tar.gz" ]; then
    python3 -m pip download -q --no-deps --no-binary :all: -d "$tmp" "llama-cpp-python==$LCP_VERSION"
    tar xzf "$tmp/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$tmp"
    # models, docs and tests would push it past what the device tool carries
    tar czf "$SRC/llama.cpp-src.tar.gz" -C "$tmp/llama_cpp_python-$LCP_VERSION/vendor" \
      --exclude=llama.cpp/{models,docs,media,.github,benches,gguf-py,conversion,examples,tests} llama.cpp
  fi
  rm -rf "$tmp"; du -sh "$SRC"; exit 0
fi
[ "$cmd" = run ] || { echo "usage: $0 gather SRC | run SRC OUT [bench.py args]"; exit 2; }
OUT=$(realpath -m "$1"); shift
W=${TMPDIR:-/tmp}/devbench S=$SRC/scripts; G=$W/llama-3.2-1b-q6_k.gguf
log() { echo "[device_bench $(date -u +%T) +${SECONDS}s] $*"; }
mkdir -p "$W/trees" "$OUT"
command -v git > /dev/null || { echo "git is needed (scripts/series.py applies the patches with git am)"; exit 1; }
python3 -m pip install -q --no-index --no-deps --target "$W/site" "$SRC"/whl/*.whl && export PYTHONPATH="$W/site":${PYTHONPATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader; nvcc --version | tail -1; python3 --version
# llama-bench: unpacked from an earlier run's build, or built here in the background while the trees and the GGUF are made
LB=$W/lc/bin/llama-bench
if ls $SRC/llama-bench.tar.xz* > /dev/null 2>&1; then
  mkdir -p $W/lc && cat $SRC/llama-bench.tar.xz* | tar xJ -C $W/lc && touch $W/lc/DONE
elif [ ! -d $W/lc ]; then
  mkdir -p $W/lc && tar xzf $SRC/llama.cpp-src.tar.gz -C $W/lc
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  # its own session: the build goes on if this script is stopped (a later run on the same machine waits for it)
  setsid nohup bash -c "cd $W/lc && cmake -S llama.cpp -B b -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DCMAKE_CUDA_COMPILER=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) \
    && cmake --build b --target llama-bench -j $(nproc) && mkdir -p bin && cp b/bin/llama-bench bin/ \
    && tar cJf llama-bench.tar.xz bin/llama-bench && touch DONE || touch FAILED" > $W/lc/build.log 2>&1 < /dev/null &
  log "llama.cpp build started for sm_$arch"
fi
# --zoo generates its own models
zoo=; [[ " $* " == *" --zoo "* ]] && zoo=1
[ -n "$zoo" ] || [ -f "$G" ] || python3 "$S/synth_gguf.py" --preset llama-3.2-1b --out "$G" > "$W/gguf.log" 2>&1 || { cat "$W/gguf.log"; exit 1; }
# the trees the --build arguments name
args=()
for a in "$@"; do
  case $a in
    *=base|*=base\;*|*=series|*=series\;*|*=series@*|*=master|*=master\;*|*=master@*)
      label=${a%%=*} rest=${a#*=}; spec=${rest%%;*}; env=${rest#"$spec"}; dir=$W/trees/$(printf %s "$spec" | tr -c 'a-zA-Z0-9' _)
      base=v0.12.0; case $spec in master*) base=master;; esac
      case $spec in base) p=$W/nopatches; mkdir -p $p;; series) p=$SRC/patches;; master) p=$SRC/patches-master;;
        series@*) p=$SRC/patches; until=${spec#series@};; master@*) p=$SRC/patches-master; until=${spec#master@};; esac
      python3 $S/series.py apply --base $base --tree $dir --patches $p --cache $SRC ${until:+--until "$until"} || exit 1; unset until
      args+=("$label=$dir$env");;
    *) args+=("$a");;
  esac
done
[ -n "${PREP_ONLY:-}" ] && { log "trees and GGUF ready (PREP_ONLY)"; exit 0; }
while [ ! -e $W/lc/DONE ] && [ ! -e $W/lc/FAILED ]; do sleep 5; done
[ -e $W/lc/FAILED ] && { tail -30 $W/lc/build.log; log "llama.cpp build failed: no llama-bench column"; }
# what a later run carries instead of building (SRC/llama-bench.tar.xz*), in pieces the device tool returns
[ -e $W/lc/llama-bench.tar.xz ] && split -b 15M -d $W/lc/llama-bench.tar.xz $OUT/llama-bench.tar.xz.
log "bench.py ${args[*]}"
lb=(); [ -e $W/lc/DONE ] && lb=(--llama-bench $LB)
gg=(--gguf "$G"); [ -n "$zoo" ] && gg=()
python3 $S/bench.py "${gg[@]}" --out $W/bench "${lb[@]}" "${args[@]}" 2>&1 | tee $OUT/bench.log
cp $W/bench/bench.json $W/bench/bench.md $W/bench/bench.png $OUT/ 2>/dev/null; log done
