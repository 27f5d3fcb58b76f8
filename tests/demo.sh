#!/usr/bin/env bash
# Keeps the README's `make demo` true: runs the demo script (without
# serving) and checks that the elastic resumes at W = 8, 32 and 64 matched
# the baseline at every step and the rank-bound ones diverged right after
# the resume.
set -uo pipefail
build=${BUILD:-build}
out=$(DEMO_SERVE=0 BUILD="$build" scripts/demo.sh 2>&1)
code=$?
fail() { echo "$out" | tail -20; echo "demo: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
[ $code -eq 0 ] || fail "scripts/demo.sh exited $code"
for w in 8 32 64; do
  echo "$out" | grep -q "baseline elastic-w$w: every step matched" || fail "elastic-w$w did not match"
  echo "$out" | grep -q "rank-bound rank-bound-w$w: diverged from step 76" ||
    fail "rank-bound-w$w did not diverge at 76, the step after the resume"
done
echo "1 passed, 0 failed"
