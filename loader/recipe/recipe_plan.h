/* The plan document's chunk records (recipe_plan.c writes them,
 * recipe_plan_read.c reads them; docs/api.md, "GET
 * /api/recipes/{id}/plan"). Internal to recipe/. */
#ifndef ORDO_RECIPE_PLAN_H
#define ORDO_RECIPE_PLAN_H

#include "recipe.h"

/* The document's "format". */
#define ORDO__PLAN_NAME "ordo-plan"

/* Bytes of one chunk in a shard's "chunks": offset, length, raw_length,
 * first_record, aux_offset (u64), records, aux_length (u32), all
 * little-endian, then the chunk's SHA-256. */
#define ORDO__PLAN_CHUNK 80

/* Writes chunk `c` as its ORDO__PLAN_CHUNK bytes. */
void ordo__plan_chunk_put(const ordo__chunk *c, unsigned char out[ORDO__PLAN_CHUNK]);

/* Reads a chunk from its ORDO__PLAN_CHUNK bytes. */
void ordo__plan_chunk_get(const unsigned char in[ORDO__PLAN_CHUNK], ordo__chunk *c);

#endif
