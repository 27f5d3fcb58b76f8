#!/usr/bin/env bash
# Checks the include rules of loader/README.md, in the tree at ROOT
# (default: this checkout):
#   scripts/includes.sh [ROOT]
# - cli/, server/ and examples/ include no library header but ordo.h, and
#   none of another folder ("x/y.h", "../x.h") but one: cli/ includes the
#   service's entry, ../server/server_run.h (server/ nothing of cli/);
# - a module of loader/ includes another module only through that module's
#   header ("core/core.h", "ledger/ledger.h", ...), and only the modules
#   below it (the table below; ledger/sql.h is the ledger's SQL side, for
#   the ledger's views alone);
# - nothing in loader/tokenizer/ or loader/pipeline/ sees <sqlite3.h>, even
#   through other headers (the compiler's dependency list says).
# Prints one line per broken rule and, last, "N passed, N failed".
set -uo pipefail
root=${1:-.}
cd "$root" || exit 2
passed=0 failed=0
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
ok() { echo "ok   $*"; passed=$((passed + 1)); }

# What each module may include from the others.
declare -A may=(
  [core]=""
  [tokenizer]="core/core.h"
  [shards]="core/core.h"
  [ledger]="core/core.h shards/shards.h"
  [recipe]="core/core.h tokenizer/tokenizer.h shards/shards.h ledger/ledger.h"
  [pipeline]="core/core.h tokenizer/tokenizer.h shards/shards.h ledger/ledger.h recipe/recipe.h"
  [views]="core/core.h shards/shards.h ledger/ledger.h ledger/sql.h recipe/recipe.h pipeline/pipeline.h"
)

# 1. The programs over the library: ordo.h and their own folder's headers.
n=0
while IFS=: read -r file line text; do
  inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$text")
  [[ $file == cli/* && $inc == ../server/server_run.h ]] && continue
  if [ "$inc" != ordo.h ] && { [[ $inc == */* ]] || [ ! -e "$(dirname "$file")/$inc" ]; }; then
    bad "$file:$line includes \"$inc\": outside loader/, only \"ordo.h\" and the folder's own headers"
    n=$((n + 1))
  fi
done < <(grep -HnE '^\s*#\s*include\s+"' cli/*.[ch] server/*.[ch] examples/*.[ch] 2>/dev/null)
[ "$n" -eq 0 ] && ok "cli/, server/, examples/ include only ordo.h of the library (and cli/ server_run.h of server/)"

# 2. The modules: their own headers, or the module headers below them.
n=0
for dir in loader/*/; do
  module=$(basename "$dir")
  if [ -z "${may[$module]+set}" ]; then
    bad "loader/$module/ is not a module of loader/README.md"; n=$((n + 1)); continue
  fi
  while IFS=: read -r file line text; do
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$text")
    if [[ $inc != */* ]]; then
      [ "$inc" = ordo.h ] || [ -e "$dir$inc" ] && continue
      bad "$file:$line includes \"$inc\", not a header of $module/"; n=$((n + 1))
    elif [[ " ${may[$module]} " != *" $inc "* ]]; then
      bad "$file:$line includes \"$inc\": $module/ may include only: ${may[$module]:-nothing of another module}"
      n=$((n + 1))
    fi
  done < <(grep -HnE '^\s*#\s*include\s+"' "$dir"*.[ch])
done
for file in loader/*.c; do
  [ -e "$file" ] && { bad "$file: library sources live in a module folder"; n=$((n + 1)); }
done
[ "$n" -eq 0 ] && ok "every module of loader/ includes only the modules below it, through their headers"

# 3. The tokenizer and the pipeline never see SQLite.
cflags=$(pkg-config --cflags sqlite3 jansson libcrypto libzstd libpcre2-8 zlib snappy 2>/dev/null)
n=0
for file in loader/tokenizer/*.c loader/pipeline/*.c; do
  deps=$(${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L $cflags -Iloader -M "$file" 2>&1) ||
    { bad "$file: cannot list its headers: $deps"; n=$((n + 1)); continue; }
  grep -q 'sqlite3\.h' <<<"$deps" && { bad "$file sees <sqlite3.h>"; n=$((n + 1)); }
done
[ "$n" -eq 0 ] && ok "nothing in loader/tokenizer/ or loader/pipeline/ sees <sqlite3.h>"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
