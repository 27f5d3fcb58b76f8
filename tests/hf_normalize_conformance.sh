#!/usr/bin/env bash
# tokenizer.json normalizers against Hugging Face tokenizers itself (npm
# `tokenizers`, pinned in tests/peers): the same lines through ordo
# (build/hf_normalize: ordo__hf_normalize) and through the library
# (tests/peers/hf_normalize_oracle.mjs) must give the same bytes, line for
# line, for NFC, NFD, NFKC, NFKD over every code point, every mark after
# several bases, marks in and out of canonical order, long runs of marks,
# Hangul, every decomposable character decomposed, random strings of all
# those characters, and tests/peers/normalization_cases.json; and for Lowercase, Strip, Prepend,
# Replace (String and Regex) and Sequence over the same lines.
# Needs node and the pinned peers (scripts/peers.sh); closing line
# "N passed, N failed".
set -uo pipefail
build=${BUILD:-build}
tool=$build/hf_normalize
peers=$build/peers
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

[ -x "$tool" ] || make -s --no-print-directory BUILD="$build" "$tool" >&2 || { fail "build $tool"; finish; }
[ -d "$peers/node_modules/tokenizers" ] || BUILD="$build" scripts/peers.sh >/dev/null || { fail "peers"; finish; }
cp tests/peers/hf_normalize_oracle.mjs "$peers/"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

node "$peers/hf_normalize_oracle.mjs" cases tests/peers/normalization_cases.json > "$dir/cases.jsonl" ||
  { fail "write the cases"; finish; }
lines=$(wc -l < "$dir/cases.jsonl")

# compare NAME NORMALIZER_JSON
compare() {
  if ! "$tool" "$2" < "$dir/cases.jsonl" > "$dir/ordo.txt"; then
    fail "$1" "ordo refused it"; return
  fi
  if ! node "$peers/hf_normalize_oracle.mjs" normalize "$2" < "$dir/cases.jsonl" > "$dir/ref.txt"; then
    fail "$1" "the library refused it"; return
  fi
  local first
  first=$(cmp "$dir/ordo.txt" "$dir/ref.txt" 2>&1 | head -1)
  if [ -z "$first" ]; then
    ok "$1: $lines lines as the library"
  else
    local n
    n=$(diff "$dir/ordo.txt" "$dir/ref.txt" | grep -c '^<')
    local at
    at=$(paste -d' ' "$dir/ordo.txt" "$dir/ref.txt" | awk '{ if ($1 != $2) { print NR; exit } }')
    fail "$1" "$n of $lines lines differ, first line $at: $(sed -n "${at}p" "$dir/cases.jsonl" | cut -c1-200)"
  fi
}

compare NFC '{"type":"NFC"}'
compare NFD '{"type":"NFD"}'
compare NFKC '{"type":"NFKC"}'
compare NFKD '{"type":"NFKD"}'
compare Lowercase '{"type":"Lowercase"}'
compare "Strip (both sides)" '{"type":"Strip","strip_left":true,"strip_right":true}'
compare "Sequence [Prepend, Replace String] (Llama 2)" \
  '{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}'
compare "Replace Regex \\s+, Strip right, NFC" \
  '{"type":"Sequence","normalizers":[{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "},{"type":"Strip","strip_left":false,"strip_right":true},{"type":"NFC"}]}'
compare "Replace Regex \\p{M}+, [\\p{L}\\p{N}]+ (Unicode 16 classes)" \
  '{"type":"Sequence","normalizers":[{"type":"Replace","pattern":{"Regex":"\\p{M}+"},"content":"<m>"},{"type":"Replace","pattern":{"Regex":"[\\p{L}\\p{N}]+"},"content":"w"}]}'
finish
