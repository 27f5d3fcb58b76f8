/* The shard formats by name, and reading a chunk or a whole file of any
 * of them through one call. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shards.h"

static const struct {
    const char *suffix;
    enum ordo__format format;
} known[] = {{".jsonl.zst", ORDO_FORMAT_JSONL_ZST}, {".jsonl.gz", ORDO_FORMAT_JSONL_GZ},
             {".json.gz", ORDO_FORMAT_JSONL_GZ},    {".jsonl", ORDO_FORMAT_JSONL},
             {".parquet", ORDO_FORMAT_PARQUET},     {".txt", ORDO_FORMAT_TXT}};

const char ordo__format_list[] = ".jsonl, .jsonl.zst, .jsonl.gz, .json.gz, .parquet or .txt";

/* The format a path's name ends in; see shards.h. */
int ordo__format_of(const char *path, enum ordo__format *format)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t m = strlen(known[i].suffix);
        if (n > m && strcmp(path + n - m, known[i].suffix) == 0) {
            *format = known[i].format;
            return 0;
        }
    }
    return -1;
}

/* Counting the documents a chunk yields, for the check against its table. */
typedef struct {
    ordo__doc_fn fn;
    void *context;
    uint64_t kept, base; /* base: added to record numbers */
    int stopped;
} counting;

static int count_doc(void *context, const char *text, size_t len, uint64_t record)
{
    counting *c = context;
    c->kept++;
    c->stopped = c->fn ? c->fn(c->context, text, len, c->base + record) : 0;
    return c->stopped;
}

static ordo_status read_plain(ordo__chunk_cache *cache, const char *path, const ordo__shard *shard,
                              uint32_t index, const ordo__read_spec *spec, ordo__doc_fn fn,
                              void *context, ordo__counts *counts, ordo_error *err)
{
    const ordo__chunk *chunk = &shard->chunks[index];
    char *data = NULL;
    size_t len = 0;
    int owned = 1;
    ordo_status status =
        cache ? ordo__chunk_cache_load(cache, path, shard, index, &data, &len, &owned, err)
              : ordo__chunk_load(path, shard->format, chunk, index, &data, &len, err);
    if (status != ORDO_OK)
        return status;
    int zst = shard->format == ORDO_FORMAT_JSONL_ZST;
    ordo__origin origin = {path, zst ? chunk->offset : UINT64_MAX, zst ? 0 : chunk->offset, 0,
                           NULL};
    status = ordo__scan_records(shard->format, data, len, spec, &origin, fn, context, counts, err);
    if (owned)
        free(data);
    return status;
}

/* Reads one chunk of any format; see shards.h. */
ordo_status ordo__chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                             const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                             ordo__counts *counts, ordo_error *err)
{
    return ordo__chunk_read_cached(NULL, path, shard, index, spec, fn, context, counts, err);
}

/* Reads one chunk of any format, plain ones through a cache; see shards.h. */
ordo_status ordo__chunk_read_cached(ordo__chunk_cache *cache, const char *path,
                                    const ordo__shard *shard, uint32_t index,
                                    const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                    ordo__counts *counts, ordo_error *err)
{
    const ordo__chunk *chunk = &shard->chunks[index];
    counting c = {fn, context, spec->skip_docs, 0, 0};
    ordo__counts here = {0};
    ordo_status status;
    if (shard->format == ORDO_FORMAT_JSONL_GZ)
        status = ordo__gz_chunk_read(path, shard, index, spec, count_doc, &c, &here, err);
    else if (shard->format == ORDO_FORMAT_PARQUET)
        status = ordo__parquet_chunk_read(path, shard, index, spec, count_doc, &c, &here, err);
    else
        status = read_plain(cache, path, shard, index, spec, count_doc, &c, &here, err);
    if (counts)
        *counts = here;
    if (status == ORDO_OK && !c.stopped && c.kept != chunk->records && spec->skip_records)
        status = ordo__error(
            err, ORDO_INVALID,
            "chunk %u at byte %llu of '%s' has %llu documents from record %llu "
            "on, not the %llu its index leaves after %llu documents before it",
            index, (unsigned long long)chunk->offset, path,
            (unsigned long long)(c.kept - spec->skip_docs), (unsigned long long)spec->skip_records,
            (unsigned long long)(chunk->records > spec->skip_docs ? chunk->records - spec->skip_docs
                                                                  : 0),
            (unsigned long long)spec->skip_docs);
    else if (status == ORDO_OK && !c.stopped && c.kept != chunk->records)
        status = ordo__error(err, ORDO_CONFLICT,
                             "shard '%s': chunk %u at byte %llu has %llu documents, its index "
                             "says %u (the file changed)",
                             path, index, (unsigned long long)chunk->offset,
                             (unsigned long long)c.kept, chunk->records);
    return status;
}

/* Reads a whole file without a chunk table; see shards.h. The file is
 * hashed, indexed in memory (chunks as a one-lane recipe cuts them) and
 * its chunks read in order. */
ordo_status ordo__file_scan(const char *path, enum ordo__format format, const ordo__read_spec *spec,
                            ordo__doc_fn fn, void *context, ordo__counts *counts, ordo_error *err)
{
    ordo__shard shard = {.path = (char *)path, .format = format};
    ordo_status status = ordo__sha256_file(path, shard.sha256, &shard.size, err);
    ordo__index_spec index = {
        .read = *spec, .per_chunk = 1 << 16, .chunk_limit = ORDO__CHUNK_MAX, .lanes = 1};
    if (status == ORDO_OK)
        status = ordo__shard_index(path, &shard, &index, err);
    counting c = {fn, context, 0, 0, 0};
    for (uint32_t i = 0; status == ORDO_OK && !c.stopped && i < shard.chunk_count; i++) {
        c.base = shard.chunks[i].first_record;
        status = ordo__chunk_read(path, &shard, i, spec, count_doc, &c, NULL, err);
    }
    if (counts)
        *counts = shard.counts;
    free(shard.chunks);
    free(shard.aux);
    return status;
}
