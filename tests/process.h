/* Running the ordo binary as a watched process: a deadline, its peak
 * memory and how long it took. */
#ifndef ORDO_TEST_PROCESS_H
#define ORDO_TEST_PROCESS_H

#include "harness.h"

/* What a watched run measured besides its exit code and output. */
typedef struct {
    cli_result result; /* code 128+14 (SIGALRM) when the deadline killed it */
    long max_rss_kb;   /* peak resident memory (wait4's ru_maxrss) */
    double seconds;    /* wall time from start to exit */
} watched_run;

/* Runs $ORDO_BIN with `args`, the NAME=VALUE strings of `env` (NULL-ended,
 * may be NULL) added to the environment, and SIGALRM after `deadline`
 * seconds (the alarm survives exec, so a hung command is ended). The
 * caller frees result with cli_result_free. */
watched_run run_ordo_watched(const char *const *env, const char *const *args, unsigned deadline);

#endif
