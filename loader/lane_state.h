/* Checkpoint encoding (internal).
 *
 *   byte     version (1)
 *   byte     binding (0 logical, 1 rank)
 *   varint   step the checkpoint follows
 *   varint   stride (lanes of the whole job)
 *   varint   sources S
 *   varint×S stream base offsets (0 unless re-sharded)
 *   varint   lane records n, then n × {lane, flush epoch, samples delivered
 *            since that flush, S × chunks taken, S × estimated tokens}
 *
 * All varints are unsigned LEB128. Lane records are in lane order. */
#ifndef ORDO_LANE_STATE_H
#define ORDO_LANE_STATE_H

#include "recipe_model.h"

typedef struct ordo__lane_record {
    uint64_t lane, epoch, delivered;
    uint64_t *taken, *estimated; /* S each */
} ordo__lane_record;

typedef struct ordo__state {
    int rank_bound;
    uint64_t step, stride;
    uint32_t sources;
    uint64_t *base;
    ordo__lane_record *lanes;
    uint64_t lane_count;
} ordo__state;

/* Decodes a checkpoint; refuses a truncated or malformed one, naming the
 * byte offset. Free with ordo__state_free. */
ordo_status ordo__state_decode(const void *data, size_t size, ordo__state *state,
                               ordo_error *err);

/* Encodes; *data is owned by the caller. */
ordo_status ordo__state_encode(const ordo__state *state, unsigned char **data, size_t *size,
                               ordo_error *err);

void ordo__state_free(ordo__state *state);

#endif
