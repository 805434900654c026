#!/usr/bin/env bash
# 0001-0005 vs 0001-0005 + docs/experiments/attn-norm-once.patch, three interleaved pairs, MV tuned, one profile, one JITBEAM=2.
# Run from the checkout the device tool ships, with .devrun/ as for device_decode_steps.sh plus extra/0006.patch; $OUT set.
set -uo pipefail
D=.devrun W=/tmp/devbench; G=$W/llama-3.2-1b-q6_k.gguf; MV="MV_BLOCKSIZE=4 MV_THREADS_PER_ROW=64 MV_ROWS_PER_THREAD=1"
bash $D/scripts/device_bench.sh $D $OUT gguf
mkdir -p $W/p5 && tar xzf $D/tinygrad-0.12.0.tar.gz -C $W/p5 --strip-components=1 || exit 1
for p in $(cat $D/patches/series); do patch -p1 -s -d $W/p5 < $D/patches/$p || exit 1; done
patch -p1 -s -d $W/p5 < $D/extra/0005.patch && cp -r $W/p5 $W/p6 && patch -p1 -s -d $W/p6 < $D/extra/0006.patch || exit 1
run(){ n=$1; t=$2; shift 2; env "$@" PYTHONPATH=$W/$t:$PYTHONPATH python3 $D/scripts/bench.py --devices CUDA --only llm --gguf $G --warmup 16 --tokens 64 --timeout 300 --out $W/s2/$n $X 2>&1 | grep "tok/s |" | sed "s/^/$n /"; }
X=""
run p5-a p5 $MV; run p6-a p6 $MV; run p5-b p5 $MV; run p6-b p6 $MV; run p5-c p5 $MV; run p6-c p6 $MV
X=--profile; run p6-prof p6 $MV
X=""; timeout 200 bash -c "$(declare -f run); W=$W G=$G D=$D X=; run p6-beam p6 JITBEAM=2"
python3 - $W/s2 $OUT/steps2.json <<'PY'
import json, pathlib, sys
d = pathlib.Path(sys.argv[1]); out = {}
for f in sorted(d.glob("*/bench.json")):
  rep = json.loads(f.read_text()); res = rep["results"][0]
  out[f.parent.name] = dict(env=res.get("env"), gpu=rep["gpu"], when=rep["when"], **res["rows"][0]) if res["rows"] else res
pathlib.Path(sys.argv[2]).write_text(json.dumps(out, indent=1))
for k, v in out.items(): print(k, round(v.get("value", 0), 1), v.get("kernels_per_token"), v.get("profile", {}).get("kernels"))
PY
