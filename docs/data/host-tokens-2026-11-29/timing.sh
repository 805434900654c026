#!/usr/bin/env bash
# host_tokens: before (/tmp/hb: 0075 with a realize a block) and after (build tree), alternated, warm CACHEDB
cd /work/main
for g in tiny32-q4km tiny16-q6k; do for t in /tmp/hb build/master/tinygrad; do CACHEDB=/tmp/ht/c.db PYTHONPATH=$t .venv/bin/python scripts/host_tokens.py /tmp/ht/$g.gguf --tokens 2 --max-context 512 > /dev/null 2>&1; done; done
for r in 1 2 3; do for g in tiny32-q4km tiny16-q6k; do for t in /tmp/hb build/master/tinygrad; do
  echo "$g $(basename $t) run $r: $(CACHEDB=/tmp/ht/c.db PYTHONPATH=$t .venv/bin/python scripts/host_tokens.py /tmp/ht/$g.gguf --tokens 2 --max-context 512 2>&1 | tr '\n' ' ')"
done; done; done
