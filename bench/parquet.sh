#!/usr/bin/env bash
# The Parquet benchmark (make bench; figures in docs/benchmarks.md):
#   1. text extraction MB/s of ordo's chunk reads against the raw
#      decompressor alone on the same pages, snappy and zstd files of
#      PARQUET_EXTRACT_BYTES of text (default 200 MB);
#   2. the time to index a PARQUET_BENCH_BYTES file (default 1 GB of text,
#      snappy) against SHA-256 of it.
# The files are written by the Rust parquet writer (parquet-wasm,
# bench/parquet_corpus.mjs) into $BUILD/bench-data/parquet and kept for the
# next run of the same size.
set -euo pipefail
build=${BUILD:-build}
extract_bytes=${PARQUET_EXTRACT_BYTES:-200000000}
index_bytes=${PARQUET_BENCH_BYTES:-1000000000}
rounds=${PARQUET_ROUNDS:-7}
data=$build/bench-data/parquet
modules=$build/peers/node_modules
mkdir -p "$data"
[ -d "$modules/parquet-wasm" ] || BUILD="$build" scripts/peers.sh >/dev/null

corpus() { # NAME BYTES CODEC
  local file=$data/$1-$2.parquet
  if [ ! -s "$file.pages" ]; then
    node bench/parquet_corpus.mjs "$modules" "$file" "$2" "$3" > "$file.pages.partial"
    mv "$file.pages.partial" "$file.pages"
  fi
  echo "$file"
}

snappy=$(corpus extract-snappy "$extract_bytes" SNAPPY)
zstd=$(corpus extract-zstd "$extract_bytes" ZSTD)
"$build/bench_parquet" extract "$snappy" "$snappy.pages" snappy "$rounds"
"$build/bench_parquet" extract "$zstd" "$zstd.pages" zstd "$rounds"
large=$(corpus index-snappy "$index_bytes" SNAPPY)
"$build/bench_parquet" index "$large" 3
