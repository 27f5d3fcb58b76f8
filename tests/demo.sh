#!/usr/bin/env bash
# Keeps the README's `make demo` true: runs the demo script (without
# serving) and checks that the elastic resumes at W = 8, 32 and 64 matched
# the baseline at every step and the rank-bound ones diverged right after
# the resume, and that the baseline yields the pinned batch digests.
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
# The baseline's 150 batch digests are pinned: code that changes the data
# the demo's recipe yields must change tests/golden/demo_baseline.txt in
# the same commit, on purpose.
digests=$("$build/ordo" show baseline --db "$build/demo/ordo.db" --json --steps 1:150 |
  /usr/bin/python3 -c 'import json, sys
for s in json.load(sys.stdin)["steps"]: print(s["step"], s["batch_digest"])') ||
  fail "could not read the baseline's digests"
# Every step of the baseline holds 32 +- 2 samples (of 64, seq_len 512) of
# each 0.5-weight source and no two lanes with the same digest.
"$build/ordo" show baseline --db "$build/demo/ordo.db" --json --steps 1:150 |
  /usr/bin/python3 -c 'import json, sys
bad = []
for s in json.load(sys.stdin)["steps"]:
    samples = [t / 512 for t in s["source_tokens"]]
    if any(abs(n - 32) > 2 for n in samples) or s["pad_tokens"] != 0:
        bad.append("step %d: samples per source %s, pad %d" % (s["step"], samples, s["pad_tokens"]))
    if len(set(s["lane_digests"])) != len(s["lane_digests"]):
        bad.append("step %d: duplicate lane digests" % s["step"])
sys.exit("; ".join(bad[:5]) if bad else 0)' || fail "the baseline's mix is off or lanes repeat each other"
diff <(echo "$digests") tests/golden/demo_baseline.txt > /dev/null ||
  fail "the baseline's batch digests differ from tests/golden/demo_baseline.txt (first: $(diff <(echo "$digests") tests/golden/demo_baseline.txt | sed -n 2p))"
echo "1 passed, 0 failed"
