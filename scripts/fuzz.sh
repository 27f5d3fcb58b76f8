#!/usr/bin/env bash
# Builds the libFuzzer targets (clang; ASan + UBSan) and runs each one:
#   scripts/fuzz.sh [SECONDS]   (default 60 per target; `make fuzz`)
# First every file under fuzz/regressions/TARGET/ (crashes found before,
# kept as regression tests) and the seeds under fuzz/corpus/TARGET/ run
# once; then the fuzzer runs for SECONDS from those seeds. The closing line
# is "N passed, N failed".
set -uo pipefail
seconds=${1:-60}
build=${BUILD:-build}
fuzz=$build/fuzz
scripts/deps.sh clang libclang-rt-14-dev >&2 || { echo "0 passed, 1 failed"; exit 1; }
BUILD="$build" scripts/peers.sh >/dev/null 2>&1 || true # the tokenizer's rank files
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
make -s -j2 --no-print-directory BUILD="$fuzz" CC=clang OPT=-O1 SANITIZE="$flags" \
  "$fuzz/libordo.a" "$fuzz/ordo" >&2 || { echo "0 passed, 1 failed"; exit 1; }
. "$fuzz/config.mk" 2>/dev/null || true
PKG_CFLAGS=$(pkg-config --cflags sqlite3 libmicrohttpd jansson libcrypto libzstd libpcre2-8 zlib snappy)
PKG_LIBS=$(pkg-config --libs sqlite3 libmicrohttpd jansson libcrypto libzstd libpcre2-8 zlib snappy)
server_objs=$(ls "$fuzz"/server/*.o "$fuzz"/gen/web.o)
export ORDO_VOCAB=$build/vocab ORDO_BIN=$fuzz/ordo

# One target: build, its regressions, then the fuzzer; its verdict line
# goes to $fuzz/TARGET.result ("ok ..." or "FAIL ..."), its log to
# $fuzz/TARGET.log. Each target has its own files, so two run at once.
one() {
  local target=$1 extra="" out=$fuzz/$1.result
  [ "$target" = api ] || [ "$target" = path ] && extra="$server_objs"
  if ! clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
      -Iloader $PKG_CFLAGS -o "$fuzz/fuzz_$target" "fuzz/fuzz_$target.c" $extra \
      "$fuzz/libordo.a" $PKG_LIBS -lm -lpthread > "$fuzz/$target.log" 2>&1; then
    echo "FAIL $target: does not build (see $fuzz/$target.log)" > "$out"; return
  fi
  mkdir -p "fuzz/corpus/$target" "$fuzz/corpus/$target"
  local regressions=(fuzz/regressions/$target/*)
  if [ -e "${regressions[0]}" ] && ! "$fuzz/fuzz_$target" "${regressions[@]}" > "$fuzz/$target.log" 2>&1; then
    echo "FAIL $target: a regression input crashes again (see $fuzz/$target.log)" > "$out"; return
  fi
  if "$fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=4096 -artifact_prefix="$fuzz/crash-$target-" \
      "$fuzz/corpus/$target" "fuzz/corpus/$target" > "$fuzz/$target.log" 2>&1; then
    local runs
    runs=$(grep -o 'Done [0-9]* runs' "$fuzz/$target.log" | tail -1)
    echo "ok   $target: ${runs:-ran} in ${seconds} s" > "$out"
  else
    echo "FAIL $target: see $fuzz/$target.log and $fuzz/crash-$target-*" > "$out"
  fi
}

# Every fuzz/fuzz_TARGET.c is a target (none is left out by a list kept by hand).
targets=()
for file in fuzz/fuzz_*.c; do
  name=${file#fuzz/fuzz_}
  targets+=("${name%.c}")
done
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  rm -f "$fuzz/${targets[$i]}.result" "$fuzz/${targets[$((i + 1))]:-none}.result"
  one "${targets[$i]}" &
  [ $((i + 1)) -lt ${#targets[@]} ] && one "${targets[$((i + 1))]}"
  wait
done
passed=0 failed=0
for target in "${targets[@]}"; do
  line=$(cat "$fuzz/$target.result" 2>/dev/null || echo "FAIL $target: no verdict")
  echo "$line"
  if [[ $line == ok* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    tail -30 "$fuzz/$target.log" >&2
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
