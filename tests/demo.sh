#!/usr/bin/env bash
# Keeps the README's `make demo` true: runs the demo script and checks that
# the elastic resumes matched and the rank-bound one diverged after it.
set -uo pipefail
build=${BUILD:-build}
out=$(BUILD="$build" scripts/demo.sh 2>&1)
code=$?
fail() { echo "$out" | tail -20; echo "demo: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
[ $code -eq 0 ] || fail "scripts/demo.sh exited $code"
echo "$out" | grep -q "baseline elastic-w8: every step matched" || fail "elastic-w8 did not match"
echo "$out" | grep -q "baseline elastic-w2: every step matched" || fail "elastic-w2 did not match"
echo "$out" | grep -q "rank-bound rank-bound-w8: diverged from step 61" || fail "rank-bound did not diverge at 61"
echo "1 passed, 0 failed"
