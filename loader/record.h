/* Records: splitting chunk bytes into documents (internal). */
#ifndef ORDO_RECORD_H
#define ORDO_RECORD_H

#include "recipe_model.h"

/* Called for each document kept (non-empty text); non-zero stops. */
typedef int (*ordo__doc_fn)(void *context, const char *text, size_t len);

/* Where the bytes came from, for error messages. */
typedef struct ordo__origin {
    const char *path;     /* shard file */
    uint64_t frame;       /* file offset of the zstd frame; UINT64_MAX for plain bytes */
    uint64_t base;        /* file (or frame content) offset of the buffer's first byte */
    uint64_t line;        /* line number (from 1) in the shard's records of the buffer's
                           * first line; 0 when unknown (then lines count in the buffer) */
} ordo__origin;

/* Splits `data` into records of `format`, extracting `text_field` from each
 * JSON line, and calls `fn` for every non-empty document. Empty documents
 * and blank lines are counted in *skipped. A malformed record is an error
 * naming the file, the line number and the byte offset. *records (may be NULL) gets the count of
 * documents kept. */
ordo_status ordo__scan_records(enum ordo__format format, const char *data, size_t len,
                               const char *text_field, const ordo__origin *origin,
                               ordo__doc_fn fn, void *context, uint64_t *records,
                               uint64_t *skipped, ordo_error *err);

/* Reads chunk number `index` of a shard (pread + zstd) into *data (caller
 * frees); *len receives its raw length. The bytes read are checked against
 * the chunk's digest first: a chunk that changed since it was indexed is
 * ORDO_CONFLICT naming the shard, the chunk and both digests. */
ordo_status ordo__chunk_load(const char *path, enum ordo__format format,
                             const ordo__chunk *chunk, uint32_t index, char **data, size_t *len,
                             ordo_error *err);

/* What a changed chunk's error says after "shard '<path>": the text the
 * chunk_mismatch event is read back from (chunk_event.c). */
#define ORDO__CHUNK_CHANGED "' changed since it was indexed: chunk "
#define ORDO__CHUNK_CHANGED_REST "%u (%llu bytes at byte %llu) had SHA-256 %s, now %s"

/* 1 (the default): ordo__chunk_load checks chunk digests. bench_loader
 * alone turns it off, between loaders, to measure what the check costs. */
extern int ordo__verify_chunk_digests;

#endif
