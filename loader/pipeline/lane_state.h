/* Checkpoint encoding (internal).
 *
 *   byte     version (6; 5 is read too: positions without record)
 *   byte     binding (0 logical, 1 rank)
 *   varint   recipe tag: the first 32 bits of the recipe id
 *   varint   step the checkpoint follows
 *   varint   stride (lanes of the whole job)
 *   varint   sources S
 *
 * Logical lanes, then:
 *   varint   lane records n, then n × {lane, S × {unit, document, token
 *            offset, record}}: each packer's position at the start of the
 *            flush epoch of step `step` (epoch (step - 1) / flush_every;
 *            nothing before the first step), so the samples the lane
 *            delivered since follow from the step; record is where the
 *            document is in its chunk (ordo__pos).
 *
 * Rank-bound lanes (the contrast), then:
 *   varint×S stream bases (0 unless re-sharded)
 *   varint   lane records n, then n × {lane, flush epoch, samples delivered
 *            since that flush, S × chunks taken, S × estimated tokens}
 *   S ×      {units u, then u × {distance from the previous unit's
 *            position (the first's: from -1), tokens already delivered}}
 *
 * A source's units are what a rank-bound re-shard left of its stream
 * below the base: ascending positions, each with the tokens of its chunk
 * delivered before (docs/recipe.md, "Checkpoints"; docs/reliability.md,
 * "Checkpoints and resume"). None for logical lanes.
 * All varints are unsigned LEB128. Lane records are in lane order. */
#ifndef ORDO_LANE_STATE_H
#define ORDO_LANE_STATE_H

#include "packer.h"
#include "recipe/recipe.h"
#include "schedule.h"

typedef struct ordo__lane_record {
    uint64_t lane, epoch, delivered; /* logical: derived from the step */
    uint64_t *taken, *estimated;     /* S each; rank-bound only */
    ordo__pos *positions;            /* S; logical only */
} ordo__lane_record;

typedef struct ordo__state {
    int rank_bound;
    uint64_t step, stride;
    uint32_t sources;
    ordo__stream *streams; /* S, each owning its units */
    ordo__lane_record *lanes;
    uint64_t lane_count;
    uint32_t recipe_tag; /* ordo__recipe_tag of the recipe it belongs to */
} ordo__state;

/* The first 32 bits of a recipe's id: what a checkpoint carries to be
 * matched with its recipe. */
uint32_t ordo__recipe_tag(const ordo_recipe *recipe);

/* Decodes a checkpoint; refuses a truncated or malformed one, naming the
 * byte offset. Free with ordo__state_free. */
ordo_status ordo__state_decode(const void *data, size_t size, ordo__state *state, ordo_error *err);

/* Encodes; *data is owned by the caller. */
ordo_status ordo__state_encode(const ordo__state *state, unsigned char **data, size_t *size,
                               ordo_error *err);

void ordo__state_free(ordo__state *state);

/* Frees the units of `count` streams and the array. */
void ordo__streams_free(ordo__stream *streams, uint32_t count);

#endif
