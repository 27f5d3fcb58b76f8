#!/usr/bin/env bash
# Checks that a shared libordo exports exactly the functions ordo.h
# declares: no internal symbol (ordo__*, or anything else) and none missing.
#   scripts/symbols.sh LIB [HEADER]   (HEADER default loader/ordo.h)
# Prints what differs and, last, "N passed, N failed".
set -uo pipefail
lib=$1 header=${2:-loader/ordo.h}
[ -r "$lib" ] || { echo "FAIL cannot read $lib"; echo "0 passed, 1 failed"; exit 1; }
# The header's declarations, preprocessed (comments and macros gone).
declared=$(${CC:-cc} -std=c11 -E -P -x c "$header" 2>/dev/null |
  grep -oE '\bordo_[a-z0-9_]+\s*\(' | sed -E 's/\s*\($//' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
failed=0
if [ -n "$extra" ]; then
  echo "FAIL $lib exports $(echo "$extra" | wc -l) symbols ordo.h does not declare: $(echo $extra | head -c 400)"
  failed=1
fi
if [ -n "$missing" ]; then
  echo "FAIL $lib lacks $(echo "$missing" | wc -l) functions ordo.h declares: $(echo $missing | head -c 400)"
  failed=1
fi
[ -n "$declared" ] || { echo "FAIL no function found in $header"; failed=1; }
[ "$failed" -eq 0 ] && echo "ok   $lib exports the $(echo "$declared" | wc -l) functions of ordo.h and nothing else"
echo "$((1 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
