/* Progress of long work on stderr (ordo index, ordo run, ordo resume): on a
 * terminal a bar redrawn in place (carriage return) at most 4 times a
 * second; otherwise one plain line every 5 seconds; and a final line. The
 * lines are made by functions that take the clock as an argument, so their
 * formats, rates, ETA and rate limit are tested without waiting
 * (tests/test_cli_progress.c); progress_update and progress_end read the
 * clock and write. */
#ifndef ORDO_CLI_PROGRESS_H
#define ORDO_CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define PROGRESS_TERMINAL_EVERY 0.25 /* seconds between a bar's redraws */
#define PROGRESS_PLAIN_EVERY 5.0     /* seconds between plain lines */
#define PROGRESS_LINE_MAX 512

typedef enum { PROGRESS_BYTES, PROGRESS_STEPS } progress_unit;

typedef struct progress {
    const char *what; /* the lines' first word: "index", "run" */
    progress_unit unit;
    int terminal;                 /* 1: a bar redrawn in place */
    int quiet;                    /* 1: nothing at all */
    double start;                 /* the clock when the work started, in seconds */
    double last;                  /* the clock of the last line drawn (start before any) */
    int drawn;                    /* lines drawn */
    int open;                     /* a bar is on the terminal's line (no newline after it yet) */
    size_t shown;                 /* characters of the bar last drawn, blanked by the next */
    uint64_t done, total, tokens; /* as last given */
    const char *note; /* NULL, or said in parentheses by the final line instead of a rate */
} progress;

/* Starts `p` at clock `now`; `terminal`: stderr is one; `quiet`: silent. */
void progress_start(progress *p, const char *what, progress_unit unit, int terminal, int quiet,
                    double now);

/* Notes `done` of `total` (and, for steps, `tokens` delivered so far) at
 * clock `now` and, when a line is due, writes it into line[size] (a bar
 * starts with '\r'; no newline) and returns 1; 0 when none is due: quiet,
 * or less than PROGRESS_TERMINAL_EVERY (a bar; the first is drawn at once)
 * or PROGRESS_PLAIN_EVERY (plain lines, the first one too) since the last. */
int progress_line(progress *p, uint64_t done, uint64_t total, uint64_t tokens, double now,
                  char *line, size_t size);

/* The final line at clock `now` into line[size] ("index: 4.0 GB in 47 s,
 * 85 MB/s", or with a note "index: 4.0 GB in 0.0 s (all from the
 * ledger)"; a bar's starts with '\r' and blanks it), no newline; 0 when
 * quiet. */
int progress_final(progress *p, double now, char *line, size_t size);

/* progress_line at the monotonic clock, written to stderr. */
void progress_update(progress *p, uint64_t done, uint64_t total, uint64_t tokens);

/* How the work ended, for progress_end. */
typedef enum {
    PROGRESS_DONE,   /* the final line (and a newline) */
    PROGRESS_FAILED, /* the bar's line is ended: an error prints on a line of its own */
    PROGRESS_ERASED  /* the bar is blanked out (nothing worth a line happened) */
} progress_outcome;

/* Ends the work on stderr as `outcome` says. */
void progress_end(progress *p, progress_outcome outcome);

/* Ends a bar's line before another message goes to stderr. */
void progress_break(progress *p);

/* The monotonic clock in seconds. */
double progress_clock(void);

#endif
