/* Fuzzes the shard readers: JSON lines and plain text in memory, the
 * whole indexer (zstd frames included, chunk limits of 4 and 64 KiB) on a file
 * holding the input, and reading back every chunk it indexed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int count(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(size_t *)context += len;
    return 0;
}

/* The read side: every indexed chunk loads, passes its digest check and
 * yields the documents the index counted (ordo__chunk_read checks). */
static void read_chunks(const char *path, const ordo__shard *shard, const ordo__read_spec *spec)
{
    ordo_error err;
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        size_t bytes = 0;
        if (ordo__chunk_read(path, shard, c, spec, count, &bytes, NULL, &err) != ORDO_OK)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ordo_error err;
    ordo__origin origin = {"fuzz", UINT64_MAX, 0, 1, NULL};
    ordo__read_spec spec = {"text", NULL, 0, 0};
    ordo__counts counts = {0};
    size_t bytes = 0;
    ordo__scan_records(ORDO_FORMAT_JSONL, (const char *)data, size, &spec, &origin, count, &bytes,
                       &counts, &err);
    ordo__scan_records(ORDO_FORMAT_TXT, (const char *)data, size, &spec, &origin, count, &bytes,
                       &counts, &err);
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
        ordo__index_spec index = {.read = spec, .per_chunk = 3, .chunk_limit = limit, .lanes = 4};
        if (ordo__shard_index(path, &shard, &index, &err) == ORDO_OK)
            read_chunks(path, &shard, &spec);
        free(shard.chunks);
        free(shard.aux);
    }
    return 0;
}
