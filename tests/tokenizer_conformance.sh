#!/usr/bin/env bash
# Token-for-token conformance with OpenAI's tiktoken (npm, its Rust core in
# wasm) for every supported encoding on a multi-megabyte corpus of many
# scripts plus edge cases (tests/peers/corpus.mjs), and on invalid UTF-8.
# llama3 is tiktoken's core with Llama 3's ranks and Meta's pattern.
set -uo pipefail
build=${BUILD:-build}
ordo=$build/ordo
peers=$build/peers
passed=0 failed=0
scripts/peers.sh || { echo "0 passed, 1 failed"; exit 1; }
node "$peers/corpus.mjs" "$peers/node_modules" > "$peers/corpus.jsonl"
echo "corpus: $(wc -l < "$peers/corpus.jsonl") texts, $(wc -c < "$peers/corpus.jsonl") bytes"

compare() { # name expected ours [corpus]
  local diff
  diff=$(cmp "$2" "$3" 2>&1) || true
  if [ -z "$diff" ]; then
    echo "ok   $1"; passed=$((passed + 1))
  else
    local line
    line=$(paste -d'\n' "$2" "$3" | awk 'NR%2==1{a=$0} NR%2==0{ if (a!=$0) { print NR/2; exit } }')
    echo "FAIL $1: first difference on line $line"
    [ "$1" = "invalid UTF-8" ] || echo "  text:     $(sed -n "${line}p" "${4:-$peers/corpus.jsonl}" | cut -c1-200)"
    echo "  tiktoken: $(sed -n "${line}p" "$2" | cut -c1-200)"
    echo "  ordo:     $(sed -n "${line}p" "$3" | cut -c1-200)"
    failed=$((failed + 1))
  fi
}

# Two encodings at a time (each writes its own files; the comparisons run
# after, in order).
# gpt2 is r50k_base's ranks and pattern under another name (in tiktoken
# too): it is checked on every 8th text of the corpus only.
awk 'NR % 8 == 1' "$peers/corpus.jsonl" > "$peers/corpus-eighth.jsonl"
encode() { # enc
  local file=$1 corpus=$peers/corpus.jsonl
  [ "$1" = gpt2 ] && file=r50k_base corpus=$peers/corpus-eighth.jsonl
  node "$peers/oracle.mjs" "$1" "$corpus" "$build/vocab/$file.tiktoken" > "$peers/$1.expected"
  "$ordo" tokens --jsonl --encoding "$1" --path "$build/vocab/$file.tiktoken" "$corpus" \
    > "$peers/$1.ours"
}
encodings=(gpt2 r50k_base p50k_base cl100k_base o200k_base llama3)
running=0
for enc in "${encodings[@]}"; do # a new one starts as soon as one of two ends
  encode "$enc" &
  running=$((running + 1))
  if [ "$running" -ge 2 ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
for enc in "${encodings[@]}"; do
  if [ "$enc" = gpt2 ]; then
    compare "gpt2 corpus (every 8th text)" "$peers/$enc.expected" "$peers/$enc.ours" \
      "$peers/corpus-eighth.jsonl"
  else
    compare "$enc corpus" "$peers/$enc.expected" "$peers/$enc.ours"
  fi
done

# Invalid UTF-8: ordo reads each maximal ill-formed subsequence as U+FFFD,
# as a WHATWG TextDecoder does; tiktoken then sees the decoded text.
printf 'ok \xff bad \xc3( \xe2\x82 end \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf x\xf4\x90\x80\x80y \xe9t\xe9' \
  > "$peers/invalid.bin"
(cd "$peers" && node -e '
  const fs = require("fs"); const { get_encoding } = require("tiktoken");
  const text = new TextDecoder("utf-8").decode(fs.readFileSync(process.argv[1]));
  const e = get_encoding("cl100k_base");
  console.log(Array.from(e.encode_ordinary(text)).join(" ")); e.free();' invalid.bin) \
  > "$peers/invalid.expected" 2>&1
"$ordo" tokens --encoding cl100k_base --path "$build/vocab/cl100k_base.tiktoken" \
  "$peers/invalid.bin" > "$peers/invalid.ours"
compare "invalid UTF-8" "$peers/invalid.expected" "$peers/invalid.ours"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
