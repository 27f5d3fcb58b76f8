/* Progress bars and lines on stderr; see progress.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "progress.h"

#define BAR_WIDTH 24

/* Starts `p`; see progress.h. */
void progress_start(progress *p, const char *what, progress_unit unit, int terminal, int quiet,
                    double now)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->unit = unit;
    p->terminal = terminal;
    p->quiet = quiet;
    p->start = p->last = now;
}

/* "512 B", "85 MB", "1.2 GB" (decimal units); "" suffix for counts:
 * "1.6M". One decimal below 10, none from there. */
static void si(double value, const char *unit, char *out, size_t size)
{
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P"};
    int k = 0;
    while (value >= 999.5 && k < 5)
        value /= 1000, k++;
    const char *space = *unit ? " " : "";
    if (k == 0)
        snprintf(out, size, "%.0f%s%s", value, space, unit);
    else
        snprintf(out, size, value < 9.95 ? "%.1f%s%s%s" : "%.0f%s%s%s", value, space, prefixes[k],
                 unit);
}

/* "33 s", "4 min 05 s", "2 h 07 min"; under 10 s with a decimal when
 * `tenths`. */
static void duration(double seconds, int tenths, char *out, size_t size)
{
    if (seconds < 0)
        seconds = 0;
    if (tenths && seconds < 9.95)
        snprintf(out, size, "%.1f s", seconds);
    else if (seconds < 59.5)
        snprintf(out, size, "%.0f s", seconds);
    else if (seconds < 3599.5) {
        long s = (long)(seconds + 0.5);
        snprintf(out, size, "%ld min %02ld s", s / 60, s % 60);
    } else {
        long m = (long)(seconds / 60 + 0.5);
        snprintf(out, size, "%ld h %02ld min", m / 60, m % 60);
    }
}

/* The rate of `amount` per second since the start: "85 MB/s", "12.5
 * steps/s, 1.6M tokens/s"; "" when no time has passed or nothing is done. */
static void rate(const progress *p, double elapsed, char *out, size_t size)
{
    *out = '\0';
    if (elapsed <= 0 || p->done == 0)
        return;
    char a[32], b[32];
    if (p->unit == PROGRESS_BYTES) {
        si((double)p->done / elapsed, "B", a, sizeof a);
        snprintf(out, size, "%s/s", a);
        return;
    }
    double steps = (double)p->done / elapsed;
    snprintf(a, sizeof a, steps < 99.95 ? "%.1f" : "%.0f", steps);
    if (p->tokens) {
        si((double)p->tokens / elapsed, "", b, sizeof b);
        snprintf(out, size, "%s steps/s, %s tokens/s", a, b);
    } else
        snprintf(out, size, "%s steps/s", a);
}

/* "1.2 GB of 4.0 GB" or "step 40 of 100". */
static void amount(const progress *p, char *out, size_t size)
{
    char a[32], b[32];
    if (p->unit == PROGRESS_BYTES) {
        si((double)p->done, "B", a, sizeof a);
        si((double)p->total, "B", b, sizeof b);
        snprintf(out, size, "%s of %s", a, b);
    } else
        snprintf(out, size, "step %llu of %llu", (unsigned long long)p->done,
                 (unsigned long long)p->total);
}

/* ", ETA 33 s" from the rate so far; "" when it is not known yet. */
static void eta(const progress *p, double elapsed, char *out, size_t size)
{
    *out = '\0';
    if (elapsed <= 0 || p->done == 0 || p->done >= p->total)
        return;
    char d[32];
    duration((double)(p->total - p->done) * elapsed / (double)p->done, 0, d, sizeof d);
    snprintf(out, size, ", ETA %s", d);
}

/* A bar's text: '\r', the text, blanks over what the last bar had more. */
static void as_bar(progress *p, const char *text, char *line, size_t size)
{
    size_t n = strlen(text);
    size_t pad = p->shown > n ? p->shown - n : 0;
    snprintf(line, size, "\r%s%*s", text, (int)pad, "");
    p->shown = n;
}

/* The line due at `now`, if any; see progress.h. */
int progress_line(progress *p, uint64_t done, uint64_t total, uint64_t tokens, double now,
                  char *line, size_t size)
{
    p->done = done, p->total = total, p->tokens = tokens;
    double since = now - p->last;
    if (p->quiet || (p->terminal && p->drawn && since < PROGRESS_TERMINAL_EVERY) ||
        (!p->terminal && since < PROGRESS_PLAIN_EVERY))
        return 0;
    double elapsed = now - p->start;
    int percent = total ? (int)((double)(done > total ? total : done) * 100 / (double)total) : 0;
    char what[80], r[96], e[48], text[PROGRESS_LINE_MAX];
    amount(p, what, sizeof what);
    rate(p, elapsed, r, sizeof r);
    eta(p, elapsed, e, sizeof e);
    if (p->terminal) {
        int filled = percent * BAR_WIDTH / 100;
        snprintf(text, sizeof text, "%s [%.*s%*s] %3d%%  %s%s%s%s", p->what, filled,
                 "########################", BAR_WIDTH - filled, "", percent, what, *r ? ", " : "",
                 r, e);
        as_bar(p, text, line, size);
        p->open = 1;
    } else
        snprintf(line, size, "%s: %s (%d%%)%s%s%s", p->what, what, percent, *r ? ", " : "", r, e);
    p->last = now;
    p->drawn++;
    return 1;
}

/* The final line; see progress.h. */
int progress_final(progress *p, double now, char *line, size_t size)
{
    if (p->quiet)
        return 0;
    double elapsed = now - p->start;
    char what[32], took[32], r[96], text[PROGRESS_LINE_MAX];
    if (p->unit == PROGRESS_BYTES)
        si((double)p->done, "B", what, sizeof what);
    else
        snprintf(what, sizeof what, "%llu step%s", (unsigned long long)p->done,
                 p->done == 1 ? "" : "s");
    duration(elapsed, 1, took, sizeof took);
    rate(p, elapsed, r, sizeof r);
    if (p->note)
        snprintf(text, sizeof text, "%s: %s in %s (%s)", p->what, what, took, p->note);
    else
        snprintf(text, sizeof text, "%s: %s in %s%s%s", p->what, what, took, *r ? ", " : "", r);
    if (p->terminal)
        as_bar(p, text, line, size);
    else
        snprintf(line, size, "%s", text);
    p->open = 0;
    return 1;
}

/* CLOCK_MONOTONIC in seconds. */
double progress_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Writes the line due now to stderr; see progress.h. */
void progress_update(progress *p, uint64_t done, uint64_t total, uint64_t tokens)
{
    char line[PROGRESS_LINE_MAX + 8];
    if (!progress_line(p, done, total, tokens, progress_clock(), line, sizeof line))
        return;
    fputs(line, stderr);
    fputs(p->terminal ? "" : "\n", stderr);
    fflush(stderr);
}

/* Ends an open bar's line; see progress.h. */
void progress_break(progress *p)
{
    if (p && p->open) {
        fputc('\n', stderr);
        p->open = 0;
        p->shown = 0;
    }
}

/* The final line, the bar's line ended, or the bar blanked; see
 * progress.h. */
void progress_end(progress *p, progress_outcome outcome)
{
    char line[PROGRESS_LINE_MAX + 8];
    if (outcome == PROGRESS_FAILED)
        progress_break(p);
    else if (outcome == PROGRESS_ERASED && p->open)
        fprintf(stderr, "\r%*s\r", (int)p->shown, "");
    else if (outcome == PROGRESS_DONE && progress_final(p, progress_clock(), line, sizeof line))
        fprintf(stderr, "%s\n", line);
    p->open = 0;
    fflush(stderr);
}
