/* The work source of one lane (docs/recipe.md, "How a lane's data is decided"),
 * internal. A pure function of
 * (recipe, lane, stride, base offsets): it never reads the world size, a
 * rank or a worker count. */
#ifndef ORDO_SCHEDULE_H
#define ORDO_SCHEDULE_H

#include "permute.h"
#include "recipe/recipe.h"

/* Where a lane's schedule stands: per source, chunks taken and estimated
 * tokens taken. This is all a checkpoint keeps of it. */
typedef struct ordo__ws_state {
    uint64_t *taken;
    uint64_t *estimated;
} ordo__ws_state;

/* The next chunk a lane reads: its tokens [skip, end) are packed (end 0:
 * to the chunk's end); a whole chunk unless a rank-bound re-shard left
 * only part of it. */
typedef struct ordo__pick {
    uint32_t source;
    ordo__chunk_ref ref;
    uint64_t position; /* in the source's stream of passes (pass = position / chunks) */
    uint64_t skip, end;
} ordo__pick;

/* One unit of a re-sharded stream: a stream position and the tokens of
 * its chunk [skip, end) not yet delivered (end 0: to the chunk's end). A
 * position may have several units (the parts of a chunk a shuffle window
 * held back), ascending by skip. */
typedef struct ordo__unit {
    uint64_t position, skip, end;
} ordo__unit;

/* What remains of a source's stream after rank-bound re-shards: the units
 * left below `base` (ascending), then every position from `base` on. All
 * zero for logical lanes and a job never re-sharded. */
typedef struct ordo__stream {
    uint64_t base, count;
    ordo__unit *units;
} ordo__stream;

typedef struct ordo__schedule {
    const ordo_recipe *recipe;
    uint64_t lane, stride;       /* the lane takes stream entries lane + k * stride */
    const ordo__stream *streams; /* per source, borrowed; NULL: never re-sharded */
    ordo__ws_state state;
    ordo__permutation *order; /* per source: the chunk order of order_epoch */
    uint64_t *order_epoch;    /* UINT64_MAX when not yet made */
} ordo__schedule;

/* Sets a schedule up at its start (all zero); streams (borrowed, must
 * outlive it) may be NULL. */
ordo_status ordo__schedule_init(ordo__schedule *s, const ordo_recipe *recipe, uint64_t lane,
                                uint64_t stride, const ordo__stream *streams, ordo_error *err);

/* Frees what the schedule holds. */
void ordo__schedule_free(ordo__schedule *s);

/* Picks the next chunk: the source furthest behind its token share (ties
 * to the lower index), then that source's next stream position. */
ordo_status ordo__schedule_next(ordo__schedule *s, ordo__pick *pick, ordo_error *err);

/* Copies a state (arrays of source_count) into/out of the schedule. */
void ordo__schedule_save(const ordo__schedule *s, uint64_t *taken, uint64_t *estimated);
void ordo__schedule_restore(ordo__schedule *s, const uint64_t *taken, const uint64_t *estimated);

/* Estimated tokens of a chunk of source `source`: its record bytes times
 * the source's measured tokens per byte, at least 1. */
uint64_t ordo__estimated_tokens(const ordo_recipe *recipe, uint32_t source,
                                const ordo__chunk *chunk);

#endif
