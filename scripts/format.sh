#!/usr/bin/env bash
# The tree's C sources are formatted by .clang-format (clang-format 14,
# Debian's; installed by scripts/deps.sh when missing).
#   scripts/format.sh          check: lists the files that differ, fails if any
#   scripts/format.sh --fix    formats them in place
# Generated tables (loader/tokenizer/unicode_classes.h) are left alone.
# Closing line of the check: "N passed, N failed".
set -uo pipefail
scripts/deps.sh clang-format >&2 || { echo "0 passed, 1 failed"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v -e '^loader/tokenizer/unicode_classes\.h$' -e '^fuzz/corpus/' -e '^fuzz/regressions/')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "FAIL $f is not formatted (scripts/format.sh --fix)"
    bad=$((bad + 1))
  fi
done
[ "$bad" -eq 0 ] && echo "ok   ${#files[@]} C files formatted by .clang-format"
echo "$((bad == 0 ? 1 : 0)) passed, $((bad == 0 ? 0 : 1)) failed"
[ "$bad" -eq 0 ]
