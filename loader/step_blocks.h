/* Range digests of batch digests, by blocks of 120 steps (internal;
 * migration 0003). */
#ifndef ORDO_STEP_BLOCKS_H
#define ORDO_STEP_BLOCKS_H

#include "internal.h"

#define ORDO__BLOCK_STEPS 120
#define ORDO__BLOCK_BITS 30
#define ORDO__BLOCK_KEY(run_id, block) \
    ((int64_t)(run_id) * ((int64_t)1 << ORDO__BLOCK_BITS) + (block))

/* A step newly recorded: its number and batch digest. */
typedef struct ordo__fresh_step {
    int64_t step;
    unsigned char digest[ORDO_DIGEST_SIZE];
} ordo__fresh_step;

/* Brings the blocks of newly recorded steps (any order) up to date, inside
 * the caller's transaction. */
ordo_status ordo__step_blocks_add(ordo_ledger *ledger, int64_t run_id,
                                  const ordo__fresh_step *steps, size_t count, ordo_error *err);

/* Rebuilds every block from the steps table (migration 0003). */
ordo_status ordo__step_blocks_rebuild(ordo_ledger *ledger, ordo_error *err);

#endif
