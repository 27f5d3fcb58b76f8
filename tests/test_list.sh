#!/usr/bin/env bash
# The generated list of unit tests (scripts/test_list.sh): every TEST(name)
# of tests/*.c is in the built runner, in file then definition order; a
# TEST( in a comment, a string or an #if 0 block is not; a name defined
# twice stops the build naming both places.
#   BUILD=dir   the build whose test_ordo is checked (default build)
set -uo pipefail
build=${BUILD:-build}
passed=0 failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() { # NAME: the result of the previous command
  if [ "$1" -eq 0 ]; then
    echo "ok   $2"
    passed=$((passed + 1))
  else
    echo "FAIL $2"
    failed=$((failed + 1))
  fi
}

generate() { # OUT FILE...: the generator as the Makefile runs it
  CPPFLAGS="-Itests -Iloader" scripts/test_list.sh "$@"
}

# The definitions grep sees at the start of a line, files in C order.
grep_names() {
  local file
  for file in $(printf '%s\n' "$@" | LC_ALL=C sort); do
    sed -n 's/^TEST(\([A-Za-z0-9_]*\)).*/\1/p' "$file"
  done
}

# 1. the built runner lists exactly what grep finds, in the same order
grep_names tests/*.c > "$work/grep"
"$build/test_ordo" --list > "$work/built"
diff -u "$work/grep" "$work/built" > "$work/diff"
check $? "runner_lists_every_TEST_of_tests_in_file_order ($(wc -l < "$work/grep") tests)"
[ -s "$work/grep" ]
check $? "grep_finds_tests_at_all"

# 2. comments, strings and #if 0 do not define tests; order is by file name
mkdir -p "$work/t"
cat > "$work/t/b_tricky.c" <<'EOF'
#include "harness.h"
/* TEST(in_a_block_comment) */
// TEST(in_a_line_comment)
static const char *s = "TEST(in_a_string)";
#if 0
TEST(in_if_zero) {}
#endif
TEST(real_b_first) { (void)s; }
/*
TEST(in_a_long_comment)
*/
TEST(real_b_second) {}
EOF
cat > "$work/t/a_plain.c" <<'EOF'
#include "harness.h"
TEST(real_a) {}
EOF
generate "$work/list.h" "$work/t/b_tricky.c" "$work/t/a_plain.c"
check $? "generator_accepts_tricky_file"
sed -n 's/^ *X(\([a-z_]*\)).*/\1/p' "$work/list.h" > "$work/names"
printf 'real_a\nreal_b_first\nreal_b_second\n' | diff -u - "$work/names"
check $? "comments_strings_and_if_zero_are_not_tests"
grep -q 'b_tricky.c:12 ' "$work/list.h"
check $? "generated_list_names_file_and_line"

# 3. a duplicate name fails, naming both places, and leaves no list
cat > "$work/t/c_again.c" <<'EOF'
#include "harness.h"

TEST(real_a) {}
EOF
generate "$work/dup.h" "$work/t/"*.c 2> "$work/err"
[ $? -ne 0 ] && [ ! -e "$work/dup.h" ]
check $? "duplicate_name_fails_the_build"
grep -q "c_again.c:3: test real_a is already defined at .*a_plain.c:2" "$work/err"
check $? "duplicate_message_names_both_places: $(head -n 1 "$work/err")"

# 4. a file the preprocessor refuses fails the generation
printf '#include "no_such_header.h"\nTEST(x) {}\n' > "$work/t/d_broken.c"
generate "$work/broken.h" "$work/t/d_broken.c" 2> "$work/err"
[ $? -ne 0 ] && grep -q 'refused .*d_broken.c' "$work/err"
check $? "unreadable_file_fails_the_generation"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
