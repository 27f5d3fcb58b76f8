/* shards: the shard formats (internal, not installed): the chunk table of
 * a shard, reading a chunk and splitting it into records, indexing a shard
 * file. Depends on core. */
#ifndef ORDO_SHARDS_H
#define ORDO_SHARDS_H

#include <stdint.h>

#include "core/core.h"

enum ordo__format { ORDO_FORMAT_JSONL, ORDO_FORMAT_JSONL_ZST, ORDO_FORMAT_TXT };

/* One independently readable piece of a shard. */
typedef struct ordo__chunk {
    uint64_t offset;                        /* bytes into the file */
    uint64_t length;                        /* bytes in the file (compressed for .zst) */
    uint64_t raw_length;                    /* bytes of records once decompressed */
    uint32_t records;                       /* records (documents) it holds, skips included */
    unsigned char digest[ORDO_DIGEST_SIZE]; /* SHA-256 of its `length` bytes in the file */
} ordo__chunk;

typedef struct ordo__shard {
    char *path; /* as in the recipe: relative to the data root unless absolute */
    unsigned char sha256[ORDO_DIGEST_SIZE];
    uint64_t size;
    enum ordo__format format;
    int hashed;       /* sha256 was computed from the file's bytes by this process */
    int64_t mtime_ns; /* modification time seen at open (0: not looked at) */
    /* plan: */
    ordo__chunk *chunks;
    uint32_t chunk_count;
    uint64_t records;
    uint64_t skipped; /* empty documents, counted and left out */
} ordo__shard;

/* The most bytes one chunk (a zstd frame's content, a run of .jsonl lines,
 * a .txt file) may hold: a chunk is read into memory whole, and every lane
 * holds up to `prefetch` chunks with their texts and tokens, so the limit
 * is ORDO__CHUNK_BUDGET / lanes, at least ORDO__CHUNK_MIN and at most
 * ORDO__CHUNK_MAX (docs/recipe.md). */
#define ORDO__CHUNK_MAX ((uint64_t)256 << 20)
#define ORDO__CHUNK_BUDGET ((uint64_t)256 << 20)
#define ORDO__CHUNK_MIN ((uint64_t)4 << 20)

/* Called for each document kept (non-empty text); non-zero stops. */
typedef int (*ordo__doc_fn)(void *context, const char *text, size_t len);

/* Where the bytes came from, for error messages. */
typedef struct ordo__origin {
    const char *path; /* shard file */
    uint64_t frame;   /* file offset of the zstd frame; UINT64_MAX for plain bytes */
    uint64_t base;    /* file (or frame content) offset of the buffer's first byte */
    uint64_t line;    /* line number (from 1) in the shard's records of the buffer's
                           * first line; 0 when unknown (then lines count in the buffer) */
} ordo__origin;

/* Splits `data` into records of `format`, extracting `text_field` from each
 * JSON line, and calls `fn` for every non-empty document. Empty documents
 * and blank lines are counted in *skipped. A malformed record is an error
 * naming the file, the line number and the byte offset. *records (may be NULL) gets the count of
 * documents kept. */
ordo_status ordo__scan_records(enum ordo__format format, const char *data, size_t len,
                               const char *text_field, const ordo__origin *origin, ordo__doc_fn fn,
                               void *context, uint64_t *records, uint64_t *skipped,
                               ordo_error *err);

/* Reads chunk number `index` of a shard (pread + zstd) into *data (caller
 * frees); *len receives its raw length. The bytes read are checked against
 * the chunk's digest first: a chunk that changed since it was indexed is
 * ORDO_CONFLICT naming the shard, the chunk and both digests. */
ordo_status ordo__chunk_load(const char *path, enum ordo__format format, const ordo__chunk *chunk,
                             uint32_t index, char **data, size_t *len, ordo_error *err);

/* What a changed chunk's error says after "shard '<path>": the text the
 * chunk_mismatch event is read back from (chunk_event.c). */
#define ORDO__CHUNK_CHANGED "' changed since it was indexed: chunk "
#define ORDO__CHUNK_CHANGED_REST "%u (%llu bytes at byte %llu) had SHA-256 %s, now %s"

/* 1 (the default): ordo__chunk_load checks chunk digests. bench_loader
 * alone turns it off, between loaders, to measure what the check costs. */
extern int ordo__verify_chunk_digests;

/* Reads the shard file at `path` (whose size must still be shard->size)
 * and fills shard->chunks, chunk_count, records and skipped, validating
 * every record; chunks without any kept document are left out. A chunk of
 * more than `chunk_limit` bytes (ordo__chunk_limit of a recipe of `lanes`
 * lanes) is an error naming file and offset, found without holding more
 * than about chunk_limit bytes. */
ordo_status ordo__shard_index(const char *path, ordo__shard *shard, const char *field,
                              int per_chunk, uint64_t chunk_limit, int lanes, ordo_error *err);

#endif
