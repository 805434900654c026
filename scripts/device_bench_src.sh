#!/usr/bin/env bash
# Gather what scripts/device_bench.sh needs on a machine without network into DIR (about 12 MB):
# the pinned tinygrad sdist, vendor/llama.cpp of the llama-cpp-python sdist (minus models, docs and tests, which
# push it past the device tool's 64 MiB), and the patch series.
#   usage: scripts/device_bench_src.sh DIR [TINYGRAD_SDIST] [PATCHES_DIR]
set -euo pipefail
DIR=$1 SDIST=${2:-/tmp/sd/tinygrad-0.12.0.tar.gz} PATCHES=${3:-$(dirname "$(realpath "$0")")/../patches}
LCP_VERSION=${LCP_VERSION:-0.3.36}
mkdir -p "$DIR/patches" && tmp=$(mktemp -d)
cp "$SDIST" "$DIR/tinygrad-0.12.0.tar.gz"
cp "$PATCHES"/series "$PATCHES"/*.patch "$DIR/patches/"
python3 -m pip download -q --no-deps --no-binary :all: -d "$tmp" "llama-cpp-python==$LCP_VERSION"
tar xzf "$tmp/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$tmp"
tar czf "$DIR/llama.cpp-src.tar.gz" -C "$tmp/llama_cpp_python-$LCP_VERSION/vendor" \
  --exclude=llama.cpp/{models,docs,media,.github,benches,gguf-py,conversion,examples,tests} llama.cpp
rm -rf "$tmp"; du -sh "$DIR"
