#!/usr/bin/env bash
# The batch provenance benchmark (docs/benchmarks.md, "Batch provenance"):
# a 10,000-step run at world size 8 checkpointed every 500 steps, then
# random steps regenerated from their flush epoch's lane state and, in the
# same run, from the checkpoints alone (build/bench_provenance). Two
# corpora, both from the demo's public-domain texts, cl100k_base, 0.7/0.3:
#   books: Moby-Dick by chapter and the State of the Union addresses, as
#          the demo shards them (long documents: 25 and 60 KB on average,
#          4 to a zstd frame);
#   web:   the same text cut at sentence ends into documents of 1.5 KB
#          and a little more, plain .jsonl of 256 records a chunk (the
#          size of a web page's text).
#   BUILD=build bench/provenance.sh [books|web]...   (default: both)
#   PROVENANCE_STEPS, PROVENANCE_FLUSH (16), PROVENANCE_COUNT (20) to vary
set -euo pipefail
build=${BUILD:-build}
ordo=$build/ordo
steps=${PROVENANCE_STEPS:-10000}
flush=${PROVENANCE_FLUSH:-16}
BUILD="$build" scripts/peers.sh >/dev/null
data=$build/peers/node_modules/@stdlib
corpora=${*:-books web}

# Documents of 1.5 KB and a little more from the .txt files of a dataset,
# cut at sentence ends, as JSON lines (deterministic: files in name order).
web_docs() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    doc = ""
    for name in sorted(n for n in os.listdir(src) if n.endswith(".txt")):
        text = open(os.path.join(src, name), encoding="utf-8").read().replace("\n", " ")
        for para in text.split(". "):
            para = para.strip()
            if not para:
                continue
            doc = f"{doc}. {para}" if doc else para
            if len(doc.encode()) >= 1500:
                f.write(json.dumps({"text": doc}) + "\n")
                doc = ""
    if doc:
        f.write(json.dumps({"text": doc}) + "\n")
PY
}

one() {
  local corpus=$1 dir=$build/bench-provenance/$1 paths
  mkdir -p "$dir"
  for source in moby-dick sotu; do
    if [ ! -f "$dir/$source/.done" ]; then
      rm -rf "${dir:?}/$source"
      mkdir -p "$dir/$source"
      if [ "$corpus" = books ]; then
        "$ordo" shard --out "$dir/$source" --docs-per-frame 4 "$data/datasets-$source/data" >/dev/null
      else
        web_docs "$data/datasets-$source/data" "$dir/$source/docs.jsonl"
      fi
      touch "$dir/$source/.done"
    fi
  done
  [ "$corpus" = books ] && paths='*.jsonl.zst' || paths='*.jsonl'
  cp "$build/vocab/cl100k_base.tiktoken" "$dir/cl100k_base.tiktoken"
  cat > "$dir/recipe.json" <<JSON
{"name": "provenance-bench-$corpus", "seed": 2026, "seq_len": 512, "global_batch": 64,
 "lanes": 64, "flush_every": $flush, "shuffle": true,
 "tokenizer": {"kind": "tiktoken", "encoding": "cl100k_base", "path": "cl100k_base.tiktoken"},
 "sources": [{"name": "moby-dick", "paths": ["moby-dick/$paths"], "weight": 0.7},
             {"name": "sotu", "paths": ["sotu/$paths"], "weight": 0.3}]}
JSON
  local db=$dir/ordo.db
  rm -f "$db" "$db-wal" "$db-shm"
  "$ordo" index "$dir/recipe.json" --db "$db" >/dev/null
  local start end
  start=$(date +%s.%N)
  "$ordo" run "$dir/recipe.json" --db "$db" --name bench --world-size 8 --steps "$steps" \
    --checkpoint-every 500 --quiet
  end=$(date +%s.%N)
  echo "== $corpus: $(sqlite3 "$db" 'SELECT sum(records), count(*) FROM shards' | tr '|' ' ') shards;" \
    "$(sqlite3 "$db" 'SELECT sum(chunks) FROM shards') chunks; recorded $steps steps" \
    "(flush_every $flush) in $(echo "$end - $start" | bc) s; lane states:" \
    "$(sqlite3 "$db" 'SELECT count(*) || " of " || sum(length(lane_state)) FROM epoch_states')" \
    "bytes; checkpoints: $(sqlite3 "$db" 'SELECT count(*) FROM checkpoints')"
  "$build/bench_provenance" --db "$db" --run bench --count "${PROVENANCE_COUNT:-20}" --rounds 3
}

for corpus in $corpora; do
  case $corpus in
    books | web) one "$corpus" ;;
    *) echo "bench/provenance.sh: corpus '$corpus' is not books or web" >&2; exit 2 ;;
  esac
done
