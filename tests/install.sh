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
  $(pkg-config --libs sqlite3 libmicrohttpd jansson libcrypto libzstd libpcre2-8 zlib snappy) -lm -lpthread \
  || fail "cannot build against the static library"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/record_shared" "$tmp/a.db" >/dev/null || fail "shared build did not run"
"$tmp/record_static" "$tmp/a.db" | grep -q "0 new, 120 already recorded" || fail "static build did not agree"
"$tmp/prefix/bin/ordo" runs --db "$tmp/a.db" | grep -q elastic || fail "installed ordo cannot list runs"
# one version: the pkg-config file, the installed library's file name,
# `ordo --version`, ordo_version() and ordo_version_string() agree
pc_version=$(pkg-config --modversion ordo)
cli_version=$("$tmp/prefix/bin/ordo" --version | awk '{print $2}')
[ -e "$tmp/prefix/lib/libordo.so.$pc_version" ] || fail "no lib/libordo.so.$pc_version"
printf '%s\n' '#include <stdio.h>' '#include <ordo.h>' 'int main(void) {' \
  '    unsigned v = ordo_version();' \
  '    printf("%u.%u.%u %s\n", v / 10000, v / 100 % 100, v % 100, ordo_version_string());' \
  '    return v == ORDO_VERSION_NUMBER ? 0 : 1;' '}' > "$tmp/version.c"
cc -std=c11 -Wall -Werror "$tmp/version.c" -o "$tmp/version" $(pkg-config --cflags --libs ordo) ||
  fail "cannot build the version check"
lib_version=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/version") ||
  fail "ordo_version() is not the header's ORDO_VERSION_NUMBER"
[ "$lib_version" = "$pc_version $pc_version" ] && [ "$cli_version" = "$pc_version" ] ||
  fail "versions differ: ordo.pc $pc_version, ordo --version $cli_version, ordo_version() and ordo_version_string() $lib_version"
echo "1 passed, 0 failed"
