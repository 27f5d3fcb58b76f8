#!/usr/bin/env bash
# Installs into a temporary prefix and builds a program against the
# installed header, library and pkg-config file, as a user of libordo would.
set -euo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

make -s install PREFIX="$tmp/prefix" BUILD="$build" >/dev/null || fail "make install failed"
for f in bin/ordo lib/libordo.a lib/libordo.so lib/libordo.so.0 include/ordo.h lib/pkgconfig/ordo.pc; do
  [ -e "$tmp/prefix/$f" ] || fail "missing $f"
done
# the shared library exports the public API and nothing else
out=$(scripts/symbols.sh "$tmp/prefix/lib/libordo.so" "$tmp/prefix/include/ordo.h") || fail "$out"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc -std=c11 -Wall -Werror examples/record_run.c -o "$tmp/record_shared" \
  $(pkg-config --cflags --libs ordo) || fail "cannot build against the shared library"
cc -std=c11 -Wall -Werror examples/record_run.c -o "$tmp/record_static" \
  $(pkg-config --cflags ordo) "$tmp/prefix/lib/libordo.a" \
  $(pkg-config --libs sqlite3 libmicrohttpd jansson libcrypto libzstd) -lm -lpthread \
  || fail "cannot build against the static library"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/record_shared" "$tmp/a.db" >/dev/null || fail "shared build did not run"
"$tmp/record_static" "$tmp/a.db" | grep -q "0 new, 120 already recorded" || fail "static build did not agree"
"$tmp/prefix/bin/ordo" runs --db "$tmp/a.db" | grep -q elastic || fail "installed ordo cannot list runs"
echo "1 passed, 0 failed"
