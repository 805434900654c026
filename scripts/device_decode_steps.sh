#!/usr/bin/env bash
# One machine, every decode step of issue 9 side by side: 0.12.0, + patches 0001-0004 (default and tuned MV), + 0005
# (argmax head), + a candidate diff (DECODE_FULL_CACHE), JITBEAM, and llama.cpp; fresh process per figure.
#   usage: scripts/device_decode_steps.sh SRC OUT prepare|measure
#   SRC as for device_bench.sh, plus extra/0005.patch (from patches/) and extra/attn.diff (docs/experiments/decode-full-cache.diff).
#   `prepare` builds llama.cpp in the background and compiles every configuration once (BEAM included);
#   `measure` (after it, on the same machine) times them.
set -uo pipefail
SRC=$(realpath "$1") OUT=$(realpath "$2") STEP=$3
HERE=$(dirname "$(realpath "$0")") W=/tmp/devbench
G=$W/llama-3.2-1b-q6_k.gguf MV="MV_BLOCKSIZE=4 MV_THREADS_PER_ROW=64 MV_ROWS_PER_THREAD=1"
run() {  # run NAME TREE TOKENS CONTEXT [ENV=VAL...]
  local n=$1 t=$2 tok=$3 ctx=$4; shift 4
  env "$@" PYTHONPATH="$W/$t:${PYTHONPATH:-}" python3 "$HERE/bench.py" --devices CUDA --only llm --gguf "$G" --warmup 16 --tokens "$tok" \
    --max-context "$ctx" --timeout 300 --out "$W/steps/$n" 2>&1 | grep "tok/s |" | sed "s/^/$n /"
}
case $STEP in
  prepare)
    bash "$HERE/device_bench.sh" "$SRC" "$OUT" build gguf
    [ -d "$W/attn" ] || { bash "$HERE/device_bench.sh" "$SRC" "$OUT" ours >/dev/null 2>&1; cp -r "$W/ours" "$W/attn" &&
      patch -p1 -s -d "$W/attn" < "$SRC/extra/0005.patch" && patch -p1 -s -d "$W/attn" < "$SRC/extra/attn.diff" || exit 1; }
    bash "$HERE/device_bench.sh" "$SRC" "$OUT" up >/dev/null 2>&1
    run w-ours-mv ours 4 1024 $MV; run w-argmax attn 4 1024 $MV DECODE_FULL_CACHE=0; run w-attn attn 4 1024 $MV
    run w-attn-4k attn 4 4096 $MV; run w-attn-beam attn 4 1024 JITBEAM=2
    while [ ! -e "$W/lc/DONE" ] && [ ! -e "$W/lc/FAILED" ]; do sleep 5; done; tail -2 "$W/lc/build.log";;
  measure)
    run up up 64 1024; run ours ours 64 1024; run ours-mv ours 64 1024 $MV; run argmax-mv attn 64 1024 $MV DECODE_FULL_CACHE=0
    run attn-mv attn 64 1024 $MV; run attn-mv-4k attn 64 4096 $MV; run attn-beam attn 64 1024 JITBEAM=2
    run ours-mv-2 ours 64 1024 $MV; run argmax-mv-2 attn 64 1024 $MV DECODE_FULL_CACHE=0; run attn-mv-2 attn 64 1024 $MV
    "$W/lc/b/bin/llama-bench" -m "$G" -ngl 99 -p 512 -n 128 -r 5 -o json > "$W/steps/llama-bench.json" 2>/dev/null
    python3 - "$W/steps" "$OUT/steps.json" <<'PY'
import json, pathlib, sys
d = pathlib.Path(sys.argv[1]); out = {}
for f in sorted(d.glob("*/bench.json")):
  rep = json.loads(f.read_text()); res = rep["results"][0]
  out[f.parent.name] = dict(env=res.get("env"), tinygrad=res.get("tinygrad"), gpu=rep["gpu"], when=rep["when"], **res["rows"][0]) if res["rows"] else res
out["llama-bench"] = json.loads((d / "llama-bench.json").read_text())
pathlib.Path(sys.argv[2]).write_text(json.dumps(out, indent=1))
for r in out["llama-bench"]: print(f"llama.cpp {'pp' if r['n_prompt'] else 'tg'}{r['n_prompt'] or r['n_gen']}: {r['avg_ts']:.1f} ± {r['stddev_ts']:.1f} tok/s")
PY
    ;;
esac
