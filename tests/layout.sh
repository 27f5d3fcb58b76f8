#!/usr/bin/env bash
# The layout's rules (loader/README.md) hold, and their checks catch a
# violation: scripts/includes.sh on this tree and on copies with one broken
# rule each; scripts/symbols.sh on build/libordo.so and on a library that
# exports an internal symbol. Closing line "N passed, N failed".
set -uo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

if out=$(scripts/includes.sh . 2>&1); then ok "include rules hold"; else bad "include rules: $out"; fi

# A copy of the sources with one edit; the check must fail naming it.
broken() { # name, file, line to add, what the failure must say
  rm -rf "$tmp/tree" && mkdir -p "$tmp/tree"
  cp -r loader cli server examples "$tmp/tree/"
  sed -i "0,/^#include/s||$3\n#include|" "$tmp/tree/$2"
  if out=$(scripts/includes.sh "$tmp/tree" 2>&1); then
    bad "$1: the include check passed"
  elif grep -q "$4" <<<"$out"; then
    ok "$1: the include check fails: $(grep -m1 "$4" <<<"$out" | cut -c1-160)"
  else
    bad "$1: the include check failed without naming $4: $out"
  fi
}
broken "cli/ reaching an internal header" cli/cmd_runs.c '#include "../loader/ledger/sql.h"' \
  'cli/cmd_runs.c:[0-9]* includes "../loader/ledger/sql.h"'
broken "server/ reaching an internal header" server/auth.c '#include "core/core.h"' \
  'server/auth.c:[0-9]* includes "core/core.h"'
broken "server/ reaching into cli/" server/routes.c '#include "../cli/cli.h"' \
  'server/routes.c:[0-9]* includes "../cli/cli.h"'
broken "cli/ reaching past the service's entry" cli/cmd_serve.c '#include "../server/server.h"' \
  'cli/cmd_serve.c:[0-9]* includes "../server/server.h"'
broken "the pipeline reaching SQL" loader/pipeline/pool.c '#include "ledger/sql.h"' \
  'pipeline/pool.c:[0-9]* includes "ledger/sql.h"'
broken "the tokenizer seeing SQLite" loader/tokenizer/tokens.c '#include <sqlite3.h>' \
  'tokenizer/tokens.c sees <sqlite3.h>'
broken "a module reaching another's private header" loader/recipe/recipe.c '#include "pipeline/schedule.h"' \
  'recipe/recipe.c:[0-9]* includes "pipeline/schedule.h"'

if out=$(scripts/symbols.sh "$build/libordo.so" 2>&1); then ok "$(head -1 <<<"$out" | cut -c6-)"
else bad "symbols: $out"; fi
# The same objects plus one internal function built without hidden
# visibility: the symbol check must name it.
printf 'int ordo__leaked(void);\n__attribute__((visibility("default"))) int ordo__leaked(void) { return 1; }\n' \
  > "$tmp/leak.c"
if cc -shared -fPIC -o "$tmp/libleak.so" "$tmp/leak.c" -Wl,--whole-archive "$build/libordo.a" \
     -Wl,--no-whole-archive $(pkg-config --libs sqlite3 jansson libcrypto libzstd libpcre2-8) -lm -lpthread 2>"$tmp/cc.log"; then
  if out=$(scripts/symbols.sh "$tmp/libleak.so" 2>&1); then bad "the symbol check passed a library exporting ordo__leaked"
  elif grep -q 'ordo__leaked' <<<"$out"; then ok "the symbol check fails: $(head -1 <<<"$out" | cut -c1-160)"
  else bad "the symbol check failed without naming ordo__leaked: $out"; fi
else
  bad "cannot build the leaking library: $(head -5 "$tmp/cc.log")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
