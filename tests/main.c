/* The test runner: forks each test, reports, prints "N passed, N failed".
 * The tests are every TEST(name) of the test files, listed at build time by
 * scripts/test_list.sh (test_list.h); arguments keep the tests whose name
 * holds one of them, --list prints the names. tests/README.md says how
 * the tests are organised and how to add one. */
#define _GNU_SOURCE /* nftw's FTW_DEPTH|FTW_PHYS flags */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#ifndef ORDO_TEST_SCAN /* the list is generated from the files, this one too */
#include "test_list.h"
#endif

#define TEST_TIMEOUT_SECONDS 120

#define DECLARE(name) void test_##name(void);
TEST_LIST(DECLARE)
#undef DECLARE

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

static const test_case tests[] = {
#define ENTRY(name) {#name, test_##name},
    TEST_LIST(ENTRY)
#undef ENTRY
};

static char test_dir[1024];

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

const char *test_path(const char *name)
{
    static char ring[8][4096];
    static int next;
    char *slot = ring[next++ % 8];
    snprintf(slot, sizeof ring[0], "%s/%s", test_dir, name);
    return slot;
}

char *test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t length = 0, capacity = 0;
    for (;;) {
        if (length + 4096 + 1 > capacity) {
            capacity = capacity ? capacity * 2 : 8192;
            char *grown = realloc(data, capacity);
            if (!grown) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
        }
        size_t n = fread(data + length, 1, 4096, f);
        length += n;
        if (n < 4096)
            break;
    }
    fclose(f);
    data[length] = '\0';
    if (size)
        *size = length;
    return data;
}

void test_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        test_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
}

cli_result run_ordo(const char *env_db, const char *const *args)
{
    const char *bin = getenv("ORDO_BIN");
    if (!bin)
        test_fail(__FILE__, __LINE__, "ORDO_BIN is not set (run through make)");
    const char *out_path = test_path(".stdout"), *err_path = test_path(".stderr");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (int i = 0; args[i] && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    if (env_db)
        setenv("ORDO_DB", env_db, 1);
    else
        unsetenv("ORDO_DB");
    extern char **environ;
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "cannot start %s: %s", bin, strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    cli_result result = {0};
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = test_read_file(out_path, NULL);
    result.err = test_read_file(err_path, NULL);
    return result;
}

cli_result run_ordo_unprivileged(const char *const *args)
{
    /* the checkout may sit in a folder only its owner can enter (a 0700
     * temporary clone): the other user runs a copy from the test's folder */
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", test_path("ordo-unprivileged"));
    size_t size = 0;
    char *bytes = test_read_file(getenv("ORDO_BIN"), &size);
    test_write_file(bin, bytes, size);
    free(bytes);
    if (chmod(bin, 0755) != 0 || chmod(test_path(""), 0755) != 0)
        test_fail(__FILE__, __LINE__, "cannot make %s runnable by another user", bin);
    const char *out_path = test_path(".stdout"), *err_path = test_path(".stderr");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        dup2(out, 1);
        dup2(err, 2);
        if (getuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
            _exit(126);
        char *argv[64];
        int argc = 0;
        argv[argc++] = (char *)bin;
        for (int i = 0; args[i] && argc < 63; i++)
            argv[argc++] = (char *)args[i];
        argv[argc] = NULL;
        unsetenv("ORDO_DB");
        execv(bin, argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    cli_result result = {0};
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = test_read_file(out_path, NULL);
    result.err = test_read_file(err_path, NULL);
    return result;
}

void cli_result_free(cli_result *result)
{
    free(result->out);
    free(result->err);
    result->out = result->err = NULL;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int run_one(const test_case *t)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(test_dir, sizeof test_dir, "%s/ordo-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(test_dir)) {
        fprintf(stderr, "cannot create a test directory: %s\n", strerror(errno));
        return 0;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(TEST_TIMEOUT_SECONDS);
        t->fn();
        exit(0); /* exit, not _exit: LeakSanitizer checks at exit */
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int passed = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (pid > 0 && WIFSIGNALED(status))
        fprintf(stderr, "  killed by signal %d%s\n", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
    if (passed)
        nftw(test_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "  files kept in %s\n", test_dir);
    return passed;
}

/* The tests named in the file $ORDO_TEST_SKIP (one per line; '#' starts a
 * comment) are left out; 1 when `name` is one of them. A name there that
 * no test has stops the run (exit 2), so the list cannot go stale. */
static int skipped(const char *name)
{
    static char *names[256];
    static size_t n;
    static int loaded;
    if (!loaded) {
        loaded = 1;
        const char *path = getenv("ORDO_TEST_SKIP");
        FILE *f = path && *path ? fopen(path, "r") : NULL;
        if (path && *path && !f) {
            fprintf(stderr, "cannot read the skip list %s: %s\n", path, strerror(errno));
            exit(2);
        }
        char line[512];
        while (f && fgets(line, sizeof line, f) && n < 256) {
            line[strcspn(line, "#\r\n")] = '\0';
            char *end = line + strlen(line);
            while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
                *--end = '\0';
            if (!*line)
                continue;
            int known = 0;
            for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
                known |= strcmp(tests[i].name, line) == 0;
            if (!known) {
                fprintf(stderr, "the skip list %s names no test: %s\n", path, line);
                exit(2);
            }
            names[n++] = strdup(line);
        }
        if (f)
            fclose(f);
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    /* Tests may chdir; keep the binary under test reachable. */
    const char *bin = getenv("ORDO_BIN");
    char absolute[4096];
    if (bin && realpath(bin, absolute))
        setenv("ORDO_BIN", absolute, 1);
    size_t count = sizeof tests / sizeof tests[0];
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < count; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    int passed = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        int selected = argc < 2;
        for (int a = 1; a < argc; a++)
            selected |= strstr(tests[i].name, argv[a]) != NULL;
        if (!selected || skipped(tests[i].name))
            continue;
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        int ok = run_one(&tests[i]);
        clock_gettime(CLOCK_MONOTONIC, &end);
        double ms = (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6;
        printf("%s %s (%.0f ms)\n", ok ? "ok  " : "FAIL", tests[i].name, ms);
        fflush(stdout);
        ok ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
