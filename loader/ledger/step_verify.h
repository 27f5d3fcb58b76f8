/* Batch digest verification beside a batch's inserts (internal). */
#ifndef ORDO_STEP_VERIFY_H
#define ORDO_STEP_VERIFY_H

#include <pthread.h>

#include "sql.h"

typedef struct ordo__digest_check {
    const ordo_step *steps;
    size_t count;
    size_t mismatch; /* index of the first wrong batch digest, or count */
    int threaded;
    pthread_t thread;
} ordo__digest_check;

/* Starts checking `count` steps (borrowed until finish); on a helper
 * thread when the batch is large and a thread can be had. */
void ordo__digest_check_start(ordo__digest_check *check, const ordo_step *steps, size_t count);

/* Waits for the check (or runs it now with `ctx`); returns the index of the
 * first step whose batch digest is wrong, or the step count when none. */
size_t ordo__digest_check_finish(ordo__digest_check *check, EVP_MD_CTX *ctx);

#endif
