#!/usr/bin/env bash
# Hostile HTTP against a real ordo serve (tests/hostile.py).
set -uo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/ordo" migrate --db "$tmp/hostile.db" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
/usr/bin/python3 tests/hostile_memory.py "$build/ordo" "$tmp" || { echo "0 passed, 1 failed"; exit 1; }
/usr/bin/python3 tests/hostile.py "$build/ordo" "$tmp"
