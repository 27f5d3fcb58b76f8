/* Progress on long work (cli/progress.c): the lines' formats, rates, ETA
 * and rate limit at clock values given by the test, so nothing here waits
 * or depends on timing; and what `ordo index` and `ordo run` really print:
 * a final line in the format (not a terminal), nothing with --quiet, a bar
 * redrawn with carriage returns under a pseudo-terminal (python3's pty). */
#define _DEFAULT_SOURCE /* fork, execvp */
#include <fcntl.h>
#include <regex.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"

/* The code under test is the CLI's (not part of libordo): compiled in. */
#include "../cli/progress.c"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char line[PROGRESS_LINE_MAX + 8];

TEST(progress_plain_lines_give_bytes_rate_and_eta)
{
    progress p;
    progress_start(&p, "index", PROGRESS_BYTES, 0, 0, 100.0);
    /* not a terminal: the first line only after PROGRESS_PLAIN_EVERY */
    ASSERT_EQ_INT(progress_line(&p, 1000, 4000000000u, 0, 104.9, line, sizeof line), 0);
    /* 1.2 GB in 1.2e9 / 85e6 s: 85 MB/s, 2.8 GB left take 32.9 s */
    ASSERT_EQ_INT(
        progress_line(&p, 1200000000u, 4000000000u, 0, 100.0 + 1.2e9 / 85e6, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "index: 1.2 GB of 4.0 GB (30%), 85 MB/s, ETA 33 s");
    /* the next one 5 s after it, not before */
    double then = 100.0 + 1.2e9 / 85e6;
    ASSERT_EQ_INT(progress_line(&p, 1300000000u, 4000000000u, 0, then + 4.99, line, sizeof line),
                  0);
    ASSERT_EQ_INT(progress_line(&p, 1300000000u, 4000000000u, 0, then + 5.0, line, sizeof line), 1);
    ASSERT_CONTAINS(line, "index: 1.3 GB of 4.0 GB (32%), ");
    /* the final line: what was done, how long it took, the rate */
    progress_line(&p, 4000000000u, 4000000000u, 0, then + 5.5, line, sizeof line);
    ASSERT_EQ_INT(progress_final(&p, 100.0 + 4e9 / 85e6, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "index: 4.0 GB in 47 s, 85 MB/s");
    /* nothing read: the final line says why, and no rate */
    progress_start(&p, "index", PROGRESS_BYTES, 0, 0, 0.0);
    progress_line(&p, 6100, 6100, 0, 0.001, line, sizeof line);
    p.note = "all from the ledger";
    ASSERT_EQ_INT(progress_final(&p, 0.002, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "index: 6.1 kB in 0.0 s (all from the ledger)");
}

TEST(progress_lines_of_steps_give_steps_and_tokens_per_second)
{
    progress p;
    progress_start(&p, "run", PROGRESS_STEPS, 0, 0, 0.0);
    ASSERT_EQ_INT(progress_line(&p, 40, 100, 5120000, 5.0, line, sizeof line), 1);
    /* 40 steps in 5 s: 8 steps/s, 1.0M tokens/s; 60 steps left: 7.5 s */
    ASSERT_EQ_STR(line, "run: step 40 of 100 (40%), 8.0 steps/s, 1.0M tokens/s, ETA 8 s");
    progress_line(&p, 100, 100, 12800000, 6.0, line, sizeof line);
    ASSERT_EQ_INT(progress_final(&p, 8.0, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "run: 100 steps in 8.0 s, 12.5 steps/s, 1.6M tokens/s");
    /* nothing done yet: no rate, no ETA */
    progress_start(&p, "run", PROGRESS_STEPS, 0, 0, 0.0);
    ASSERT_EQ_INT(progress_line(&p, 0, 100, 0, 6.0, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "run: step 0 of 100 (0%)");
}

/* A terminal: drawn at once, then at most every PROGRESS_TERMINAL_EVERY
 * seconds, each bar over the last with a carriage return; the final line
 * blanks what a longer bar left. */
TEST(progress_bar_redraws_in_place_a_few_times_a_second)
{
    progress p;
    progress_start(&p, "index", PROGRESS_BYTES, 1, 0, 0.0);
    ASSERT_EQ_INT(progress_line(&p, 0, 2000000, 0, 0.0, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "\rindex [                        ]   0%  0 B of 2.0 MB");
    ASSERT_EQ_INT(progress_line(&p, 500000, 2000000, 0, 0.2, line, sizeof line), 0);
    ASSERT_EQ_INT(progress_line(&p, 1000000, 2000000, 0, 0.25, line, sizeof line), 1);
    ASSERT_EQ_STR(line, "\rindex [############            ]  50%  1.0 MB of 2.0 MB, 4.0 MB/s, "
                        "ETA 0 s");
    size_t bar = strlen(line);
    int drawn = 0; /* 100 updates over one second: at most 4 more bars */
    for (int i = 1; i <= 100; i++)
        if (progress_line(&p, 1000000 + 10000u * (unsigned)i, 2000000, 0, 0.25 + i / 100.0, line,
                          sizeof line))
            drawn++, bar = strlen(line);
    while (bar > 0 && line[bar - 1] == ' ') /* what is on the screen: the last bar's text */
        bar--;
    ASSERT(drawn >= 3 && drawn <= 4);
    ASSERT_EQ_INT(progress_final(&p, 2.0, line, sizeof line), 1);
    ASSERT(line[0] == '\r');
    ASSERT_CONTAINS(line, "index: 2.0 MB in 2.0 s, 1.0 MB/s");
    ASSERT(strlen(line) == bar); /* blanks over the last bar's text, which is longer */
    ASSERT(line[strlen(line) - 1] == ' ');
}

TEST(progress_quiet_draws_nothing)
{
    progress p;
    progress_start(&p, "run", PROGRESS_STEPS, 1, 1, 0.0);
    ASSERT_EQ_INT(progress_line(&p, 1, 10, 0, 0.0, line, sizeof line), 0);
    ASSERT_EQ_INT(progress_line(&p, 10, 10, 0, 60.0, line, sizeof line), 0);
    ASSERT_EQ_INT(progress_final(&p, 60.0, line, sizeof line), 0);
}

TEST(progress_formats_sizes_and_durations)
{
    char out[64];
    const struct {
        double value;
        const char *want;
    } sizes[] = {{0, "0 B"},        {512, "512 B"},     {999.4, "999 B"},
                 {999.6, "1.0 kB"}, {9949, "9.9 kB"},   {9960, "10 kB"},
                 {85e6, "85 MB"},   {1.25e9, "1.2 GB"}, {4e12, "4.0 TB"}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        si(sizes[i].value, "B", out, sizeof out);
        ASSERT_EQ_STR(out, sizes[i].want);
    }
    si(1.6e6, "", out, sizeof out);
    ASSERT_EQ_STR(out, "1.6M");
    const struct {
        double seconds;
        int tenths;
        const char *want;
    } times[] = {{0.04, 1, "0.0 s"},      {3.26, 1, "3.3 s"},      {3.26, 0, "3 s"},
                 {59.4, 0, "59 s"},       {59.6, 0, "1 min 00 s"}, {245, 0, "4 min 05 s"},
                 {7620, 0, "2 h 07 min"}, {-1, 0, "0 s"}};
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        duration(times[i].seconds, times[i].tenths, out, sizeof out);
        ASSERT_EQ_STR(out, times[i].want);
    }
}

/* Every line of `text` matches `pattern`; returns how many there are. */
static int lines_match(const char *text, const char *pattern)
{
    regex_t re;
    ASSERT(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0);
    int n = 0;
    for (const char *at = text; *at;) {
        const char *end = strchr(at, '\n');
        ASSERT(end != NULL); /* every line ends */
        char one[512];
        snprintf(one, sizeof one, "%.*s", (int)(end - at), at);
        if (regexec(&re, one, 0, NULL, 0) != 0)
            test_fail(__FILE__, __LINE__, "line '%s' does not match /%s/", one, pattern);
        n++;
        at = end + 1;
    }
    regfree(&re);
    return n;
}

/* The last line of `text` (which ends with a newline). */
static const char *last_line(const char *text)
{
    static char last[512];
    size_t n = strlen(text);
    ASSERT(n > 0 && text[n - 1] == '\n');
    size_t start = n - 1;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(last, sizeof last, "%.*s", (int)(n - 1 - start), text + start);
    return last;
}

#define INDEX_LINE                                                                                 \
    "^index: [0-9.]+ [kMGT]?B (of [0-9.]+ [kMGT]?B \\([0-9]+%\\)(, [0-9.]+ [kMGT]?B/s, ETA .+)?|"  \
    "in [0-9.]+ s(, [0-9.]+ [kMGT]?B/s| \\(all from the ledger\\))?)$"
#define RUN_LINE                                                                                   \
    "^run: (step [0-9]+ of [0-9]+ \\([0-9]+%\\)(, [0-9.]+ steps/s, [0-9.]+[kMGT]? tokens/s, ETA "  \
    ".+)?|[0-9]+ steps in [0-9.]+ s(, [0-9.]+ steps/s, [0-9.]+[kMGT]? tokens/s)?)$"

/* Not a terminal: the lines ordo index and ordo run print are of the
 * format, the last is the final one; --quiet prints nothing. */
TEST(progress_of_index_and_run_not_on_a_terminal)
{
    corpus_jsonl("data", "doc", 2, 200, 20, 400, 5);
    const char *recipe = corpus_one_source(4, 8, 32, 2, 0);
    char db[1024];
    snprintf(db, sizeof db, "%s", test_path("p.db"));
    cli_result r = run_ordo(NULL, A("index", recipe, "--db", db));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT(lines_match(r.err, INDEX_LINE) >= 1);
    ASSERT_CONTAINS(last_line(r.err), "index: ");
    ASSERT_CONTAINS(last_line(r.err), " in ");
    cli_result_free(&r);
    r = run_ordo(NULL, A("index", recipe, "--db", db)); /* again: nothing to read */
    ASSERT_EQ_INT(r.code, 0);
    ASSERT(lines_match(r.err, INDEX_LINE) >= 1);
    ASSERT_CONTAINS(last_line(r.err), " (all from the ledger)");
    cli_result_free(&r);
    r = run_ordo(NULL,
                 A("run", recipe, "--db", db, "--name", "a", "--world-size", "2", "--steps", "12"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT(lines_match(r.err, RUN_LINE) >= 1);
    ASSERT_CONTAINS(last_line(r.err), "run: 12 steps in ");
    cli_result_free(&r);
    /* --quiet: nothing on stderr, and errors still print */
    r = run_ordo(NULL, A("run", recipe, "--db", db, "--name", "b", "--world-size", "2", "--steps",
                         "12", "--quiet"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_EQ_STR(r.err, "");
    cli_result_free(&r);
    r = run_ordo(NULL, A("index", recipe, "--db", test_path("q.db"), "--quiet"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_EQ_STR(r.err, "");
    cli_result_free(&r);
    r = run_ordo(NULL, A("index", test_path("none.json"), "--db", db, "--quiet"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "none.json");
    cli_result_free(&r);
}

/* Runs `args` (argv of ordo, after the binary) with stderr on a pseudo-
 * terminal through python3's pty module; returns what the terminal got
 * (owned) and its exit code in *code. */
static char *on_a_terminal(const char *const *args, int *code)
{
    static const char script[] =
        "import os, pty, subprocess, sys\n"
        "master, slave = pty.openpty()\n"
        "child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL,\n"
        "                         stdout=subprocess.DEVNULL, stderr=slave)\n"
        "os.close(slave)\n"
        "got = b''\n"
        "while True:\n"
        "    try:\n"
        "        chunk = os.read(master, 65536)\n"
        "    except OSError:\n"
        "        break\n"
        "    if not chunk:\n"
        "        break\n"
        "    got += chunk\n"
        "open(sys.argv[1], 'wb').write(got)\n"
        "sys.exit(child.wait())\n";
    const char *out = corpus_kept(test_path("terminal.out"));
    const char *argv[32] = {"python3", "-c", script, out, getenv("ORDO_BIN")};
    int n = 5;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        execvp("python3", (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    ASSERT(waitpid(pid, &status, 0) == pid);
    ASSERT(WIFEXITED(status));
    *code = WEXITSTATUS(status);
    size_t size = 0;
    return test_read_file(out, &size);
}

/* On a terminal: a bar drawn at once and redrawn with carriage returns,
 * then the final line; --quiet draws nothing there either. */
TEST(progress_bar_on_a_terminal_uses_carriage_returns)
{
    corpus_jsonl("data", "doc", 2, 200, 20, 400, 5);
    const char *recipe = corpus_one_source(4, 8, 32, 2, 0);
    char db[1024];
    snprintf(db, sizeof db, "%s", test_path("t.db"));
    int code = -1;
    char *got = on_a_terminal(A("index", recipe, "--db", db), &code);
    ASSERT_EQ_INT(code, 0);
    ASSERT_CONTAINS(got, "\rindex [");
    ASSERT_CONTAINS(got, "\rindex: ");
    free(got);
    got = on_a_terminal(
        A("run", recipe, "--db", db, "--name", "a", "--world-size", "2", "--steps", "12"), &code);
    ASSERT_EQ_INT(code, 0);
    ASSERT_CONTAINS(got, "\rrun [");
    ASSERT_CONTAINS(got, "\rrun: 12 steps in ");
    size_t n = strlen(got);
    ASSERT(n >= 2 && got[n - 1] == '\n'); /* the terminal's line discipline: \r\n */
    free(got);
    got = on_a_terminal(A("run", recipe, "--db", db, "--name", "b", "--world-size", "2", "--steps",
                          "12", "--quiet"),
                        &code);
    ASSERT_EQ_INT(code, 0);
    ASSERT_EQ_STR(got, "");
    free(got);
}
