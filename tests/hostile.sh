#!/usr/bin/env bash
# Hostile HTTP against a real ordo serve: request bodies built to cost memory
# (tests/hostile_memory.py), then paths, tokens, trickled headers, heavy
# reads and malformed requests (tests/hostile.py). Prints the two suites'
# sum as "N passed, N failed".
set -uo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/ordo" migrate --db "$tmp/hostile.db" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
passed=0 failed=0
for suite in tests/hostile_memory.py tests/hostile.py; do
  /usr/bin/python3 "$suite" "$build/ordo" "$tmp" | tee "$tmp/out"
  last=$(tail -n 1 "$tmp/out")
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
  else
    echo "$suite: did not finish with a result line"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
