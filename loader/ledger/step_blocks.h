/* Range digests of batch digests, by blocks of 120 steps (internal;
 * migration 0003). */
#ifndef ORDO_STEP_BLOCKS_H
#define ORDO_STEP_BLOCKS_H

#include "sql.h"

#define ORDO__BLOCK_STEPS 120
/* Keyed like steps: run id in the high bits, the block number in the low
 * 40 (blocks < 10^12 / 120 < 2^40). */
#define ORDO__BLOCK_BITS 40
#define ORDO__BLOCK_KEY(run_id, block)                                                             \
    ((int64_t)(run_id) * ((int64_t)1 << ORDO__BLOCK_BITS) + (block))
/* SQL for a run's block keys, the run id bound as `r`: the block number. */
#define ORDO__SQL_BLOCK_OF(r) "key - (" r " << 40)"
#define ORDO__SQL_BLOCK_KEY(r, block) "(" r " << 40) + " block

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
