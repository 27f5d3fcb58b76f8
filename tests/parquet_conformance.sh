#!/usr/bin/env bash
# Parquet conformance: files a real writer (the Rust parquet crate, through
# parquet-wasm) writes at test time, over every codec × dictionary on/off ×
# data page v1/v2 with nulls, several row groups and a struct column, one
# file per value encoding, and row groups far larger than a chunk; ordo must
# read exactly what the writer was given, row by row and document by
# document, and what an independent reader (hyparquet) reads:
#   - every leaf column's values (build/parquet_dump columns: ordo__pq_scan_columns)
#   - the documents of `text` and of the dotted `meta.text` (ordo__file_scan)
#   - the same through a chunk table of small chunks (ordo__chunk_read)
#   - a JSON-lines file and its Parquet copy give the same documents
# Needs node and the pinned peers (scripts/peers.sh); closing line
# "N passed, N failed".
set -uo pipefail
build=${BUILD:-build}
dump=$build/parquet_dump
peers=$build/peers
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

[ -x "$dump" ] || make -s --no-print-directory BUILD="$build" "$dump" >&2 || { fail "build $dump"; finish; }
[ -f "$peers/parquet_write.mjs" ] || BUILD="$build" scripts/peers.sh >/dev/null || { fail "peers"; finish; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

node "$peers/parquet_cases.mjs" "$dir" || { fail "write the cases"; finish; }
if node "$peers/parquet_write.mjs" write "$dir/spec.json" > "$dir/written.jsonl"; then
  ok "the writer wrote $(wc -l < "$dir/written.jsonl") files and hyparquet reads back every row of each"
else
  fail "the writer or hyparquet's check"; finish
fi

leaves=(text id n32 flag f32 score meta.text meta.lang meta.quality.score)
node "$peers/parquet_write.mjs" read-each "$(IFS=,; echo "${leaves[*]}")" "$dir"/*.parquet ||
  fail "hyparquet's columns"

small=65536 # chunk limit: the large row groups are many chunks
for file in "$dir"/*.parquet; do
  name=$(basename "$file" .parquet)
  "$dump" columns "$file" "${leaves[@]}" > "$dir/$name.ordo" 2> "$dir/$name.err" ||
    { fail "$name: ordo's columns" "$(cat "$dir/$name.err")"; continue; }
  for field in text meta.text; do
    "$dump" docs "$file" "$field" > "$dir/$name.$field.docs" 2> "$dir/$name.err" ||
      fail "$name: ordo's documents of $field" "$(cat "$dir/$name.err")"
    limit=$small
    "$dump" chunks "$file" "$field" "$limit" > "$dir/$name.$field.chunks" 2> "$dir/$name.err" ||
      fail "$name: ordo's chunks of $field" "$(cat "$dir/$name.err")"
  done
done

# The JSON-lines file and its Parquet copy (text and metadata columns).
if node "$peers/parquet_write.mjs" jsonl "$dir/cross.jsonl" "$dir/cross.parquet" > /dev/null &&
   "$dump" docs "$dir/cross.jsonl" text > "$dir/cross.jsonl.docs" &&
   "$dump" docs "$dir/cross.parquet" text > "$dir/cross.parquet.docs"; then
  if cmp -s "$dir/cross.jsonl.docs" "$dir/cross.parquet.docs" && [ -s "$dir/cross.jsonl.docs" ]; then
    ok "a JSON-lines file and its Parquet copy give the same $(($(wc -l < "$dir/cross.jsonl.docs") - 1)) documents and counts"
  else
    fail "JSON lines and Parquet differ" "$(diff "$dir/cross.jsonl.docs" "$dir/cross.parquet.docs" | head -5)"
  fi
else
  fail "the JSON-lines / Parquet comparison did not run"
fi

# Compares, file by file, what ordo read with what the writer was given
# (spec.json) and with what hyparquet read; prints ok/FAIL lines.
python3 - "$dir" "$small" "${leaves[@]}" <<'EOF' > "$dir/compare.out"
import json, math, os, struct, sys
d, small, leaves = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
spec = json.load(open(os.path.join(d, 'spec.json')))
types = {}
def walk(cols, prefix=''):
    for c in cols:
        if c['type'] == 'struct': walk(c['fields'], prefix + c['name'] + '.')
        else: types[prefix + c['name']] = c['type']
walk(spec['columns'])
def at(row, path):
    v = row
    for k in path.split('.'):
        if not isinstance(v, dict): return None
        v = v.get(k)
    return v
def norm(t, v):
    if v is None: return None
    if t in ('int64', 'int32'): return int(v)
    if t == 'float32': return struct.unpack('<f', struct.pack('<f', v))[0]
    if t == 'float64': return float(v)
    return v
def lines(name):
    with open(os.path.join(d, name)) as f: return [json.loads(l) for l in f]
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b and type(a) == type(b)
def rows_equal(got, want):
    if len(got) != len(want): return 'has %d rows, %d written' % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        for j, leaf in enumerate(leaves):
            if not same(g[j], w[j]): return 'row %d column %s: %r, %r written' % (i, leaf, g[j], w[j])
    return None
for f in spec['files']:
    name = os.path.basename(f['path'])[:-len('.parquet')]
    rows = f.get('rows', spec['rows'])
    want = [[norm(types[l], at(r, l)) for l in leaves] for r in rows]
    for who in ('ordo', 'hyparquet'):
        try: problem = rows_equal(lines(name + '.' + who), want)
        except Exception as e: problem = 'unreadable: %s' % e
        print(('FAIL %s: %s\'s columns: %s' % (name, who, problem)) if problem else
              'ok   %s: %s reads every value of %d columns in %d rows' % (name, who, len(leaves), len(rows)))
    for field in ('text', 'meta.text'):
        texts = [at(r, field) for r in rows]
        docs = [{'record': i, 'text': t} for i, t in enumerate(texts) if t]
        empty = sum(1 for t in texts if not t)
        counts = {'read': len(rows), 'passed': len(docs), 'filtered': 0, 'empty': empty}
        for how in ('docs', 'chunks'):
            try:
                got = lines('%s.%s.%s' % (name, field, how))
                table = got.pop() if how == 'chunks' else {}
                chunks = table.get('chunks')
                got_counts = got.pop()
                problem = None
                if got_counts != counts: problem = 'counts %r, %r written' % (got_counts, counts)
                elif len(got) != len(docs): problem = '%d documents, %d written' % (len(got), len(docs))
                else:
                    for g, w in zip(got, docs):
                        if g != w: problem = 'record %d: %r, %r written' % (w['record'], g, w); break
                if not problem and how == 'chunks':
                    text_bytes = sum(len(t.encode()) for t in texts if t)
                    if chunks < text_bytes // small: problem = '%d chunks for %d bytes of text' % (chunks, text_bytes)
                    elif table['largest'] > small: problem = 'a chunk of %d bytes, the limit %d' % (table['largest'], small)
            except Exception as e: problem = 'unreadable: %s' % e
            what = '%s %s of %s' % (len(docs), 'documents' if how == 'docs' else 'documents through %s chunks' % chunks, field)
            print(('FAIL %s: %s: %s' % (name, how, problem)) if problem else 'ok   %s: %s' % (name, what))
EOF
while IFS= read -r line; do
  case $line in
    ok*) ok "${line#ok   }" ;;
    *) fail "${line#FAIL }" ;;
  esac
done < "$dir/compare.out"
[ -s "$dir/compare.out" ] || fail "the comparison printed nothing"
finish
