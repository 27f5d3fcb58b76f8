/* Indexing one shard (internal). */
#ifndef ORDO_SHARD_INDEX_H
#define ORDO_SHARD_INDEX_H

#include "recipe_model.h"

/* Reads the shard file at `path` (whose size must still be shard->size)
 * and fills shard->chunks, chunk_count, records and skipped, validating
 * every record; chunks without any kept document are left out. A chunk of
 * more than `chunk_limit` bytes (ordo__chunk_limit of a recipe of `lanes`
 * lanes) is an error naming file and offset, found without holding more
 * than about chunk_limit bytes. */
ordo_status ordo__shard_index(const char *path, ordo__shard *shard, const char *field,
                              int per_chunk, uint64_t chunk_limit, int lanes, ordo_error *err);

#endif
