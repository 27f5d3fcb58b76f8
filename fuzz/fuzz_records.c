/* Fuzzes the shard readers: JSON lines and plain text in memory, the
 * whole indexer (zstd frames included, chunk limits of 4 and 64 KiB) on a file
 * holding the input, and reading back every chunk it indexed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int count(void *context, const char *text, size_t len)
{
    (void)text;
    *(size_t *)context += len;
    return 0;
}

/* The read side: every indexed chunk loads, passes its digest check and
 * yields the documents the index counted. */
static void read_chunks(const char *path, const ordo__shard *shard)
{
    ordo_error err;
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        const ordo__chunk *chunk = &shard->chunks[c];
        char *text = NULL;
        size_t len = 0, bytes = 0;
        uint64_t kept = 0;
        if (ordo__chunk_load(path, shard->format, chunk, c, &text, &len, &err) != ORDO_OK)
            abort();
        int zst = shard->format == ORDO_FORMAT_JSONL_ZST;
        ordo__origin origin = {path, zst ? chunk->offset : UINT64_MAX, zst ? 0 : chunk->offset, 0};
        if (ordo__scan_records(shard->format, text, len, "text", &origin, count, &bytes, &kept,
                               NULL, &err) != ORDO_OK ||
            kept != chunk->records)
            abort();
        free(text);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ordo_error err;
    ordo__origin origin = {"fuzz", UINT64_MAX, 0, 1};
    uint64_t kept = 0, skipped = 0;
    size_t bytes = 0;
    ordo__scan_records(ORDO_FORMAT_JSONL, (const char *)data, size, "text", &origin, count, &bytes,
                       &kept, &skipped, &err);
    ordo__scan_records(ORDO_FORMAT_TXT, (const char *)data, size, "text", &origin, count, &bytes,
                       &kept, &skipped, &err);
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/ordo-fuzz-%d.shard", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    for (int format = ORDO_FORMAT_JSONL; format <= ORDO_FORMAT_TXT; format++) {
        ordo__shard shard = {.path = path, .format = (enum ordo__format)format};
        if (ordo__sha256_file(path, shard.sha256, &shard.size, &err) != ORDO_OK)
            break;
        uint64_t limit = size % 2 ? 4096 : (uint64_t)1 << 16; /* both sides of the limit */
        if (ordo__shard_index(path, &shard, "text", 3, limit, 4, &err) == ORDO_OK)
            read_chunks(path, &shard);
        free(shard.chunks);
    }
    return 0;
}
