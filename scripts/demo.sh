#!/usr/bin/env bash
# The end-to-end example behind `make demo`: shards a small corpus (this
# project's own code and docs, as two sources of very different document
# lengths), plays a data-parallel job at world size 4, resumes it at 8 and
# at 2 with logical lanes and, for contrast, with the standard rank-bound
# loader, then shows which resumes saw the same batches as the baseline.
set -euo pipefail
build=${BUILD:-build}
ordo=$build/ordo
demo=$build/demo
db=$demo/ordo.db
rm -rf "$demo"
mkdir -p "$demo/raw/code" "$demo/raw/docs"

for f in loader/*.c loader/*.h cli/*.c tests/*.c; do
  cp "$f" "$demo/raw/code/$(echo "$f" | tr / _).txt"
done
for f in README.md docs/*.md migrations/*.sql; do
  cp "$f" "$demo/raw/docs/$(echo "$f" | tr / _).txt"
done
"$ordo" shard --out "$demo/code" --docs-per-frame 2 "$demo/raw/code" >/dev/null
"$ordo" shard --out "$demo/docs" --docs-per-frame 1 "$demo/raw/docs" >/dev/null

cat > "$demo/recipe.json" <<'JSON'
{"name": "demo", "seed": 2026, "seq_len": 256, "global_batch": 32, "lanes": 16,
 "flush_every": 2, "shuffle_window": 8, "tokenizer": {"kind": "bytes"},
 "sources": [{"name": "code", "paths": ["code/*.jsonl.zst"], "weight": 0.5},
             {"name": "docs", "paths": ["docs/*.jsonl.zst"], "weight": 0.5}]}
JSON

echo "== ordo index"
"$ordo" index "$demo/recipe.json" --db "$db"
echo
echo "== baseline at world size 4, then resumes from step 60"
"$ordo" run "$demo/recipe.json" --db "$db" --name baseline --world-size 4 --steps 120 \
  --checkpoint-every 20 --group demo
"$ordo" resume baseline --db "$db" --from-step 60 --as elastic-w8 --world-size 8 --steps 120
"$ordo" resume baseline --db "$db" --from-step 60 --as elastic-w2 --world-size 2 --steps 120
"$ordo" run "$demo/recipe.json" --db "$db" --name rank-bound --world-size 4 --steps 120 \
  --checkpoint-every 20 --lane-binding rank --group demo
"$ordo" resume rank-bound --db "$db" --from-step 60 --as rank-bound-w8 --world-size 8 --steps 120
echo
echo "== ordo runs"
"$ordo" runs --db "$db"
echo
echo "== which resumes saw the baseline's batches"
for pair in "baseline elastic-w8" "baseline elastic-w2" "rank-bound rank-bound-w8"; do
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
echo "ledger: $db   (try: $ordo show elastic-w8 --db $db)"
