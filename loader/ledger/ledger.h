/* ledger: the SQLite ledger (internal, not installed). This is its face to
 * the modules above it (recipe, pipeline), without SQLite: what they store
 * and read through an opaque ordo_ledger. The ledger's own files and the
 * views see its SQL side, sql.h. Depends on core and shards. */
#ifndef ORDO_LEDGER_H
#define ORDO_LEDGER_H

#include <stdint.h>

#include "core/core.h"
#include "shards/shards.h"

/* Reads run `run_id`; ORDO_NOTFOUND naming the id when it is not there.
 * (Names are resolved once, by ordo_run_get; every other call takes ids.) */
ordo_status ordo__run_get_id(ordo_ledger *ledger, int64_t run_id, ordo_run_info *info,
                             ordo_error *err);

/* The digest recorded for a shard file (by its resolved path) at this size
 * and modification time; *found is 0 when there is none (or no ledger, or an
 * older schema). */
ordo_status ordo__shard_file_known(ordo_ledger *ledger, const char *path, uint64_t size,
                                   int64_t mtime_ns, unsigned char out[ORDO_DIGEST_SIZE],
                                   int *found, ordo_error *err);

/* Records what a hashed shard file was (size, time, digest), so the next
 * open takes its digest from the ledger. */
ordo_status ordo__shard_file_record(ordo_ledger *ledger, const char *path, uint64_t size,
                                    int64_t mtime_ns, const unsigned char sha256[ORDO_DIGEST_SIZE],
                                    ordo_error *err);

/* What a chunk table is made under, besides the shard's content (path,
 * SHA-256): the text field, the filter's canonical JSON ("" for none) and
 * `chunk_records` (the lines per chunk of a plain .jsonl shard, 0 for
 * other formats). */
typedef struct ordo__shard_key {
    const char *text_field;
    const char *filter;
    int chunk_records;
} ordo__shard_key;

/* Loading fills shard->chunks (owned by the shard), chunk_count, counts,
 * records, skipped, aux and aux_size; *found says whether one was stored
 * (one stored by an older ordo, without chunk digests or locators, counts
 * as none: the shard is indexed again and the row filled in). */
ordo_status ordo__chunk_table_load(ordo_ledger *ledger, ordo__shard *shard,
                                   const ordo__shard_key *key, int *found, ordo_error *err);
ordo_status ordo__chunk_table_store(ordo_ledger *ledger, const ordo__shard *shard,
                                    const ordo__shard_key *key, ordo_error *err);

/* Links the stored chunk table of a shard to position `position` of source
 * `source` of recipe `recipe_id`. */
ordo_status ordo__chunk_table_link(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                   uint32_t position, const ordo__shard *shard,
                                   const ordo__shard_key *key, ordo_error *err);

/* Loads the chunk table the ledger linked to shard `position` of source
 * `source` of recipe `recipe_id` when it was indexed (what
 * ordo__chunk_table_load fills in), without the recipe's text field,
 * filter or chunking: the link was made under them. shard->path and
 * shard->sha256 must be the recipe's; a row for another file or digest
 * counts as none (*found 0). */
ordo_status ordo__recipe_shard_load(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                    uint32_t position, ordo__shard *shard, int *found,
                                    ordo_error *err);

/* A source's token estimate: records, bytes and tokens of its sample. */
typedef struct ordo__estimate {
    uint64_t records, bytes, tokens;
} ordo__estimate;

/* Loads (*found: whether stored) or stores a source's token estimate. */
ordo_status ordo__estimate_load(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                ordo__estimate *sample, int *found, ordo_error *err);
ordo_status ordo__estimate_store(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                 const ordo__estimate *sample, ordo_error *err);

/* Refuses a resume from a checkpoint of `step` when the run (or, for a
 * fork's first steps, its baseline) has not recorded that step. */
ordo_status ordo__replay_reached(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                 ordo_error *err);

/* The recorded lane digests of `lane` for steps first..last of the run (a
 * fork's steps before its first segment are its baseline's): *digests, owned
 * by the caller, holds (last - first + 1) × 32 bytes. A step without a
 * recorded digest for the lane refuses the resume, naming step and lane. */
ordo_status ordo__replay_digests(ordo_ledger *ledger, int64_t run_id, int lane, int64_t first,
                                 int64_t last, unsigned char **digests, ordo_error *err);

#endif
