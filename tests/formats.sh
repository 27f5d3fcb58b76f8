#!/usr/bin/env bash
# One corpus in every shard format a recipe reads — .jsonl, .jsonl.zst
# (written by ordo shard), .jsonl.gz (several gzip members), .json.gz and
# .parquet (written by a real Parquet writer, npm parquet-wasm) — read
# through the same readers: `ordo tokens --count` gives the same documents
# and tokens for each, a filter keeps the same records of each, and a
# recipe over each format gives the same batches at W = 1, 2 and 4 and
# after a resume at another world size.
set -uo pipefail
build=${BUILD:-build}
build=$(cd "$build" && pwd)
ordo=$build/ordo
passed=0 failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/ordo formats.XXXXXX")
trap 'rm -rf "$work"' EXIT

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { # name command...
  local name=$1; shift
  if "$@" >"$work/out" 2>&1; then ok "$name"; else fail "$name: $(tail -c 600 "$work/out")"; fi
}

# Unfriendly records: tiny and long texts, multi-byte UTF-8, empty and null
# texts, blank lines, nested metadata with ints and reals, names with spaces.
/usr/bin/python3 - "$work/corpus.jsonl" <<'EOF'
import json, sys
words = ["data", "order", "lane", "caf\u00e9", "\u03bb", "r\u00e9sum\u00e9", "\u6f22\u5b57", "\U0001f600", "gradient", "seed"]
out = open(sys.argv[1], "w", encoding="utf-8")
for i in range(700):
    if i % 97 == 13:
        out.write("\n")  # a blank line: a record, empty
        continue
    n = (i * 37) % 50 + 1 if i % 50 else 4000 + i  # tiny to long
    text = " ".join(words[(i * 7 + w * 3) % len(words)] for w in range(n))
    if i % 89 == 5:
        text = ""
    record = {"id": i, "meta": {"text": text if i % 83 != 7 else None,
                                "score": round(((i * 53) % 100) / 100.0, 2),
                                "lang": "en" if i % 3 else "fr", "tokens": n}}
    out.write(json.dumps(record, ensure_ascii=i % 2 == 0) + "\n")
EOF
corpus=$work/corpus.jsonl
blank=$(grep -c '^$' "$corpus")

# The formats: zstd frames by ordo shard (it leaves empty records out, so
# only documents and tokens are compared for it), gzip members cut mid-line.
mkdir -p "$work/shards"
cp "$corpus" "$work/shards/web.jsonl"
"$ordo" shard --out "$work/zst" --text-field meta.text --docs-per-frame 37 "$corpus" >/dev/null &&
  mv "$work/zst/shard-00000.jsonl.zst" "$work/shards/web.jsonl.zst" || fail "ordo shard"
head -c 40000 "$corpus" | gzip -c >"$work/shards/web.jsonl.gz"
tail -c +40001 "$corpus" | gzip -c >>"$work/shards/web.jsonl.gz"
gzip -c "$corpus" >"$work/shards/web.json.gz"
formats=(jsonl jsonl.zst jsonl.gz json.gz)
# Parquet: a row a record (the writer leaves the blank lines out), ZSTD,
# row groups of 128 rows, the dictionary off so that long texts span pages.
echo '{"codec": "ZSTD", "row_group_rows": 128, "dictionary": false, "page_bytes": 4096}' \
  >"$work/parquet.json"
if scripts/peers.sh >/dev/null 2>&1 && [ -f "$build/peers/parquet_write.mjs" ] &&
  (cd "$build/peers" && node parquet_write.mjs jsonl "$corpus" "$work/shards/web.parquet" \
    "$work/parquet.json") >/dev/null 2>"$work/parquet.err"; then
  formats+=(parquet)
else
  fail "a real Parquet writer wrote the corpus: $(tail -c 300 "$work/parquet.err" 2>/dev/null)"
fi

count() { # format [--filter FILE]
  local f=$1; shift
  "$ordo" tokens --encoding cl100k_base --path "$build/vocab/cl100k_base.tiktoken" --count --json \
    --text-field meta.text "$@" "$work/shards/web.$f" |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["records"]; print(d["documents"], d["tokens"], r["read"], r["filtered"], r["empty"])'
}

# ordo shard reads the gzip and Parquet copies back into zstd shards,
# metadata kept (the filter below reads it).
for f in jsonl.gz parquet; do
  [[ " ${formats[*]} " == *" $f "* ]] || continue
  if "$ordo" shard --out "$work/from-$f" --text-field meta.text "$work/shards/web.$f" >"$work/shard.log" 2>&1; then
    mv "$work/from-$f/shard-00000.jsonl.zst" "$work/shards/web.from-$f.jsonl.zst"
    formats+=("from-$f.jsonl.zst")
  else
    fail "ordo shard of .$f: $(tail -c 300 "$work/shard.log")"
  fi
done

# The same documents and tokens, and the same records where the file holds them all.
expected=$(count jsonl)
read -r docs tokens read _ empty <<<"$expected"
[ "${docs:-0}" -gt 600 ] && [ "${empty:-0}" -gt 10 ] && ok "jsonl: $docs documents, $tokens tokens, $empty empty of $read" ||
  fail "jsonl counts: $expected"
for f in "${formats[@]:1}"; do
  got=$(count "$f")
  if [[ $f == *jsonl.zst ]]; then # ordo shard leaves empty records out
    [ "$(cut -d' ' -f1,2 <<<"$got")" = "$docs $tokens" ] && ok "$f: same documents and tokens" ||
      fail "$f: $got, jsonl $expected"
  elif [ "$f" = parquet ]; then # no blank lines in a table
    [ "$got" = "$docs $tokens $((read - blank)) 0 $((empty - blank))" ] &&
      ok "$f: same documents and tokens, and records but for the $blank blank lines" ||
      fail "$f: $got, jsonl $expected ($blank blank lines)"
  else
    [ "$got" = "$expected" ] && ok "$f: same documents, tokens and records" ||
      fail "$f: $got, jsonl $expected"
  fi
done

# A filter keeps the same records of every format (exact reals, nested
# fields, a missing field's comparison false).
cat >"$work/filter.json" <<'EOF'
{"all": [{"field": "meta.lang", "in": ["en"]}, {"field": "meta.score", "ge": 0.35},
         {"not": {"field": "meta.missing", "eq": 1}}, {"field": "$bytes", "ge": 20}]}
EOF
expected_filtered=$(count jsonl --filter "$work/filter.json")
/usr/bin/python3 - "$corpus" >"$work/independent" <<'EOF'
import json, sys
docs = filtered = 0
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.strip():
        continue
    r = json.loads(line)
    text = r["meta"]["text"]
    if not text:
        continue
    keep = r["meta"]["lang"] in ["en"] and r["meta"]["score"] >= 0.35 and len(text.encode()) >= 20
    docs += keep
    filtered += not keep
print(docs, filtered)
EOF
[ "$(cut -d' ' -f1,4 <<<"$expected_filtered")" = "$(cat "$work/independent")" ] &&
  ok "filter: counts equal an independent computation ($(cat "$work/independent"))" ||
  fail "filter: ordo $expected_filtered, independent $(cat "$work/independent")"
for f in "${formats[@]:1}"; do
  got=$(count "$f" --filter "$work/filter.json")
  same=$got want=$expected_filtered
  if [[ $f == *jsonl.zst ]] || [ "$f" = parquet ]; then # documents, tokens and filtered
    same=$(cut -d' ' -f1,2,4 <<<"$got") want=$(cut -d' ' -f1,2,4 <<<"$expected_filtered")
  fi
  [ -n "$got" ] && [ "$same" = "$want" ] && ok "$f: the filter keeps the same records" ||
    fail "$f filtered: $got, jsonl $expected_filtered"
done

# A recipe over each format: the same batches at W = 1, 2, 4 and after a
# resume at another W. Uneven weights against a second, tiny source.
printf '{"text": "a tiny second source %s"}\n' one two three four five six seven eight >"$work/shards/tiny.jsonl"
for f in "${formats[@]}"; do
  db="$work/$f.db" recipe="$work/recipe-$f.json"
  cat >"$recipe" <<EOF
{"name": "formats $f", "seed": 7, "seq_len": 32, "global_batch": 8, "lanes": 4, "flush_every": 4,
 "tokenizer": {"kind": "bytes"},
 "sources": [{"name": "web", "paths": ["shards/web.$f"], "weight": 0.7, "text_field": "meta.text",
              "filter": {"field": "meta.score", "ge": 0.2}},
             {"name": "tiny", "paths": ["shards/tiny.jsonl"], "weight": 0.3}]}
EOF
  (cd "$work" &&
    "$ordo" run "$recipe" --db "$db" --name w1 --world-size 1 --steps 40 --quiet &&
    "$ordo" run "$recipe" --db "$db" --name w4 --world-size 4 --steps 40 --quiet &&
    "$ordo" run "$recipe" --db "$db" --name w2 --world-size 2 --steps 17 --checkpoint-every 8 --quiet &&
    "$ordo" resume w2 --db "$db" --world-size 4 --steps 40 --quiet) >"$work/run.log" 2>&1 ||
    { fail "$f: runs: $(tail -c 400 "$work/run.log")"; continue; }
  check "$f: W=4 gives W=1's batches" "$ordo" compare w1 w4 --db "$db"
  check "$f: a resume from W=2 to W=4 gives W=1's batches" "$ordo" compare w1 w2 --db "$db"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
