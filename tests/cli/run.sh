#!/usr/bin/env bash
# Runs the CLI cases: each a command line, the exit code it must end with
# and what its stdout and stderr must (not) hold. Prints one line per case
# and closes with "N passed, N failed"; exits non-zero when one failed.
#   BUILD=dir tests/cli/run.sh [--must-fail] [CASES_FILE] [FILTER...]
# CASES_FILE defaults to tests/cli/cases.txt; a FILTER keeps the cases whose
# name contains it. --must-fail inverts the verdict: every case must fail
# (tests/cli/must_fail.txt shows that each kind of expectation can).
#
# A case file holds blocks (blank lines and lines starting with # are
# ignored):
#   case NAME         starts a case (names are unique)
#   setup COMMAND     run first, must exit 0 (any number of them)
#   run COMMAND       the command line under test (bash words; `ordo` is
#                     $BUILD/ordo); exactly one
#   exit N            the exit code it must end with; exactly one
#   out TEXT          stdout holds TEXT (a fixed string)
#   err TEXT          stderr holds TEXT
#   out~ REGEX        a line of stdout matches the extended regex
#   err~ REGEX        the same for stderr
#   !out TEXT         stdout does not hold TEXT; !err likewise
#   after COMMAND     run last, must exit 0 (e.g. test ! -e ordo.db)
# Each case needs at least one out/err expectation. @SCHEMA@ in TEXT or
# REGEX stands for the ledger schema version `ordo --version` reports.
# Every case runs in a fresh temporary folder holding a copy of the
# fixtures (tests/cli/fixtures.sh), without $ORDO_DB, with $ORDO_VOCAB set
# to $BUILD/vocab (or $PEERS_BUILD/vocab), for at most 60 seconds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
must_fail=0
if [ "${1:-}" = --must-fail ]; then
  must_fail=1
  shift
fi
cases=$here/cases.txt
if [ $# -gt 0 ] && [ -f "$1" ]; then
  cases=$1
  shift
fi
filters=("$@")

ordo=$(cd "$(dirname "$build/ordo")" && pwd)/ordo
vocab=$(cd "${PEERS_BUILD:-$build}" && pwd)/vocab
if [ ! -x "$ordo" ]; then
  echo "cli: $ordo is missing (make first)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ordo-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$ordo" "$work/bin/ordo"
export PATH="$work/bin:$PATH"
unset ORDO_DB
export ORDO_VOCAB=$vocab LC_ALL=C
if ! "$here/fixtures.sh" "$work/fixtures" "$ordo" > "$work/fixtures.log" 2>&1; then
  cat "$work/fixtures.log" >&2
  echo "cli: the fixtures could not be made" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
schema=$("$ordo" --version | sed -n 's/.*ledger schema \([0-9]*\).*/\1/p')
passed=0 failed=0

selected() {
  [ ${#filters[@]} -eq 0 ] && return 0
  local f
  for f in "${filters[@]}"; do
    [[ $1 == *"$f"* ]] && return 0
  done
  return 1
}

# Checks one expectation against the captured output; prints why not.
expect() { # KIND ARGUMENT
  local kind=$1 arg=${2//@SCHEMA@/$schema} file
  case $kind in
    out | out~ | '!out') file=$dir/.stdout ;;
    *) file=$dir/.stderr ;;
  esac
  case $kind in
    out | err) grep -qF -- "$arg" "$file" || { echo "$kind does not hold '$arg'"; return 1; } ;;
    out~ | err~) grep -qE -- "$arg" "$file" || { echo "$kind does not match /$arg/"; return 1; } ;;
    '!out' | '!err') ! grep -qF -- "$arg" "$file" || { echo "$kind: holds '$arg'"; return 1; } ;;
  esac
}

# Runs the case gathered in name/setups/command/code/checks/afters.
run_case() {
  local why='' problem
  dir=$work/case
  rm -rf "$dir"
  cp -a "$work/fixtures" "$dir"
  local s
  for s in "${setups[@]}"; do
    if ! (cd "$dir" && timeout 60 bash -c "$s") > "$work/setup.log" 2>&1; then
      why="setup failed: $s: $(tail -n 3 "$work/setup.log" | tr '\n' ' ')"
      break
    fi
  done
  if [ -z "$why" ]; then
    (cd "$dir" && timeout 60 bash -c "$command") > "$dir/.stdout" 2> "$dir/.stderr"
    local got=$?
    [ "$got" -eq "$code" ] || why="exit $got, expected $code"
    local i
    for ((i = 0; i < ${#checks[@]}; i += 2)); do
      problem=$(expect "${checks[i]}" "${checks[i + 1]}") || why="${why:+$why; }$problem"
    done
    for s in "${afters[@]}"; do
      (cd "$dir" && timeout 60 bash -c "$s") > /dev/null 2>&1 || why="${why:+$why; }after failed: $s"
    done
  fi
  if [ "$must_fail" -eq 1 ]; then
    if [ -n "$why" ]; then
      echo "ok   $name (fails as it must: $why)"
      passed=$((passed + 1))
    else
      echo "FAIL $name: passed, but must fail"
      failed=$((failed + 1))
    fi
  elif [ -z "$why" ]; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $why"
    echo "  \$ $command"
    [ -f "$dir/.stdout" ] && sed 's/^/  stdout: /' "$dir/.stdout" | head -n 20
    [ -f "$dir/.stderr" ] && sed 's/^/  stderr: /' "$dir/.stderr" | head -n 20
    failed=$((failed + 1))
  fi
}

# A case that is written wrong fails (once), naming its line.
malformed() {
  [ "$broken" -eq 1 ] && return
  [ -n "$name" ] && broken=1
  if [ "$must_fail" -eq 1 ]; then
    echo "ok   ${name:-?} (refused as it must: $cases:$1: $2)"
    passed=$((passed + 1))
  else
    echo "FAIL ${name:-?}: $cases:$1: $2"
    failed=$((failed + 1))
  fi
}

finish_case() {
  [ -z "$name" ] && return
  if [ "$broken" -eq 1 ]; then
    : # reported where it broke
  elif [ -z "$command" ]; then
    malformed "$start" "case $name has no run line"
  elif [ -z "$code" ]; then
    malformed "$start" "case $name has no exit line"
  elif [ ${#checks[@]} -eq 0 ]; then
    malformed "$start" "case $name checks neither stdout nor stderr"
  elif selected "$name"; then
    run_case
  fi
  name=''
}

declare -A seen=()
name='' start=0 lineno=0 broken=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
  line=${line#"${line%%[![:space:]]*}"}
  keyword=${line%% *}
  argument=${line#"$keyword"}
  argument=${argument# }
  if [ "$keyword" = case ]; then
    finish_case
    name=$argument start=$lineno command='' code='' setups=() afters=() checks=() broken=0
    if [ -z "$name" ]; then
      name='?'
      malformed "$lineno" "a case without a name"
    elif [ -n "${seen[$name]:-}" ]; then
      malformed "$lineno" "case $name is already defined at line ${seen[$name]}"
    else
      seen[$name]=$lineno
    fi
    continue
  fi
  if [ -z "$name" ]; then
    malformed "$lineno" "'$keyword' outside a case"
    continue
  fi
  case $keyword in
    setup) setups+=("$argument") ;;
    after) afters+=("$argument") ;;
    run)
      [ -n "$command" ] && malformed "$lineno" "a second run line"
      command=$argument
      ;;
    exit)
      [[ $argument =~ ^[0-9]+$ ]] || malformed "$lineno" "exit '$argument' is not a number"
      code=$argument
      ;;
    out | err | out~ | err~ | '!out' | '!err')
      if [ -z "$argument" ]; then
        malformed "$lineno" "an empty $keyword expectation"
      elif [[ $keyword == *~ ]] && printf '\n' | grep -qE -- "$argument"; then
        malformed "$lineno" "$keyword /$argument/ matches an empty output too"
      else
        checks+=("$keyword" "$argument")
      fi
      ;;
    *) malformed "$lineno" "unknown keyword '$keyword'" ;;
  esac
done < "$cases"
finish_case

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
