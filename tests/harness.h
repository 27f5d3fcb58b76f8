/*
 * A small test harness: one TEST per behaviour, each run in its own forked
 * process with its own temporary directory. The list of tests is generated
 * at build time from the TEST(name) definitions (scripts/test_list.sh), so
 * defining a test is registering it. Assertions print both sides and are
 * never compiled out.
 */
#ifndef ORDO_TEST_HARNESS_H
#define ORDO_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ORDO_TEST_SCAN
/* scripts/test_list.sh preprocesses the test files: each definition leaves
 * one marker line that comments and strings cannot imitate */
#define TEST(name) ORDO_TEST_DEFINED name
#else
#define TEST(name)                                                                                 \
    void test_##name(void);                                                                        \
    void test_##name(void)
#endif

/* Stops the current test with a message (the process exits non-zero). */
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#define ASSERT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "assertion failed: %s", #cond);                          \
    } while (0)

#define ASSERT_EQ_INT(a, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);               \
    } while (0)

#define ASSERT_EQ_STR(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            test_fail(__FILE__, __LINE__, "%s == %s:\n  \"%s\"\n  \"%s\"", #a, #b,                 \
                      a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                     \
    } while (0)

#define ASSERT_CONTAINS(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_))                                                                \
            test_fail(__FILE__, __LINE__, "%s should contain \"%s\":\n  \"%s\"", #haystack, n_,    \
                      h_ ? h_ : "(null)");                                                         \
    } while (0)

/* Asserts a libordo call's status, printing the error message if it differs. */
#define ASSERT_STATUS(expr, expected, errp)                                                        \
    do {                                                                                           \
        ordo_status s_ = (expr);                                                                   \
        if (s_ != (expected))                                                                      \
            test_fail(__FILE__, __LINE__, "%s: status %s, expected %s (%s)", #expr,                \
                      ordo_status_name(s_), ordo_status_name(expected), (errp)->message);          \
    } while (0)

#define ASSERT_OK(expr, errp) ASSERT_STATUS(expr, ORDO_OK, errp)

/* A path inside this test's own temporary directory (static buffer ring). */
const char *test_path(const char *name);

/* Reads a whole file into a NUL-terminated buffer the caller frees; NULL if
 * it cannot be read. *size (may be NULL) receives its length. */
char *test_read_file(const char *path, size_t *size);

/* Writes `size` bytes to a file, replacing it; aborts the test on failure. */
void test_write_file(const char *path, const void *data, size_t size);

/* Result of running the ordo binary. */
typedef struct {
    int code;  /* exit code, or 128+signal */
    char *out; /* stdout, owned */
    char *err; /* stderr, owned */
} cli_result;

/* Runs $ORDO_BIN with the NULL-terminated arguments (and `env_db` as ORDO_DB
 * when not NULL); aborts the test if it cannot be started. */
cli_result run_ordo(const char *env_db, const char *const *args);

/* Runs $ORDO_BIN as an unprivileged user (uid/gid 65534 when the tests run
 * as root, else as the current user), without ORDO_DB. */
cli_result run_ordo_unprivileged(const char *const *args);

/* Frees what run_ordo returned. */
void cli_result_free(cli_result *result);

#endif
