#!/usr/bin/env bash
# Regenerates loader/tokenizer/hf_normalize_tables.h (see tables.c, data.mjs).
# Needs Node.js with npm, a C compiler, utf8proc (libutf8proc-dev) and
# clang-format (the output is formatted as the tree's C is).
#   scripts/unicode/normalize/tables.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
(cd "$root" && scripts/deps.sh libutf8proc-dev clang-format) >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
cc -O2 -std=c11 -Wall -Wextra -Werror -o "$tmp/tables" "$here/tables.c" \
  $(pkg-config --cflags --libs libutf8proc)
(cd "$here" && node data.mjs) | "$tmp/tables" > "$tmp/tables.h"
out=$root/loader/tokenizer/hf_normalize_tables.h
(cd "$root" && clang-format --assume-filename="$out" < "$tmp/tables.h") > "$tmp/formatted.h"
mv "$tmp/formatted.h" "$out"
