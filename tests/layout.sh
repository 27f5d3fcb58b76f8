#!/usr/bin/env bash
# Which module may include which (server/README.md, design §1): cli/ and
# server/ include from the library only ordo.h; server/ includes nothing
# from cli/; cli/ includes from server/ only its entry, server_run.h.
#   ROOT=dir   the tree to check (default: this checkout)
set -uo pipefail
shopt -s lastpipe # check runs in this shell, so it counts
root=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
passed=0 failed=0

check() { # check NAME: the offending lines on stdin; none passes
  local name=$1 offending
  offending=$(cat)
  if [ -z "$offending" ]; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"; echo "$offending" | sed 's/^/    /'
  fi
}

quoted_includes() { # quoted_includes DIR: "file:line:#include "x"" for DIR's sources
  (cd "$root" && grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1"/*.c "$1"/*.h)
}

quoted_includes server | grep -E '"(\.\./)*cli/|"cli\.h"|"job\.h"|"http_get\.h"' |
  check "server/ includes nothing from cli/"
quoted_includes cli | grep -E '"(\.\./)*server/' | grep -v '"\.\./server/server_run\.h"' |
  check "cli/ includes from server/ only server_run.h"
{ quoted_includes cli; quoted_includes server; } | grep -E '"(\.\./)*loader/|"internal\.h"|"testing\.h"' |
  grep -v '"\(\.\./\)*\(loader/\)\?ordo\.h"' | check "cli/ and server/ include from the library only ordo.h"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
