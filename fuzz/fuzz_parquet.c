/* Fuzzes the Parquet reader: the input decoded as a footer (FileMetaData)
 * and as a page header, then as a whole file: its columns scanned, the
 * shard indexed (chunk limits of 4 and 64 KiB, a large row group cut at
 * pages) and every chunk it indexed read back, without a filter and with
 * one over three columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int count(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(size_t *)context += len;
    return 0;
}

static int row(void *context, uint64_t number, const ordo__field_value *values)
{
    (void)number, (void)values;
    ++*(size_t *)context;
    return 0;
}

/* The read side: every indexed chunk passes its digest check and yields
 * the documents the index counted (ordo__chunk_read checks). */
static void read_chunks(const char *path, const ordo__shard *shard, const ordo__read_spec *spec)
{
    ordo_error err;
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        size_t bytes = 0;
        if (ordo__chunk_read(path, shard, c, spec, count, &bytes, NULL, &err) != ORDO_OK)
            abort();
        if (bytes > shard->chunks[c].raw_length)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ordo_error err;
    ordo__pq_meta meta;
    ordo__pq_meta_decode("fuzz", data, size, 0, &meta, &err);
    ordo__pq_meta_free(&meta);
    ordo__pq_page page;
    ordo__pq_page_header("fuzz", 0, data, size, &page, &err);
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/ordo-fuzz-%d.parquet", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    const char *columns[] = {"text", "id", "meta.lang", "meta.quality.score", "ok"};
    size_t rows = 0;
    ordo__pq_scan_columns(path, columns, 5, row, &rows, &err);
    ordo__shard shard = {.path = path, .format = ORDO_FORMAT_PARQUET};
    if (ordo__sha256_file(path, shard.sha256, &shard.size, &err) != ORDO_OK)
        return 0;
    ordo__read_spec spec = {"text", NULL, 0, 0};
    uint64_t limit = size % 2 ? 4096 : (uint64_t)1 << 16; /* both sides of the limit */
    ordo__index_spec index = {.read = spec, .chunk_limit = limit, .lanes = 4};
    if (ordo__shard_index(path, &shard, &index, &err) == ORDO_OK)
        read_chunks(path, &shard, &spec);
    free(shard.chunks);
    free(shard.aux);
    /* again with a filter over three columns: their pages read for each chunk's rows */
    static ordo__filter *filter;
    static int compiled;
    if (!compiled++) {
        json_t *json = json_loads("{\"any\": [{\"field\": \"id\", \"gt\": 3}, {\"field\": "
                                  "\"meta.lang\", \"eq\": \"en\"}, {\"field\": \"ok\", "
                                  "\"eq\": true}]}",
                                  0, NULL);
        if (ordo__filter_compile(json, "fuzz", &filter, &err) != ORDO_OK)
            filter = NULL; /* a build without filters */
        json_decref(json);
    }
    if (!filter)
        return 0;
    ordo__shard filtered = {.path = path, .format = ORDO_FORMAT_PARQUET};
    memcpy(filtered.sha256, shard.sha256, sizeof shard.sha256);
    filtered.size = shard.size;
    index.read.filter = filter;
    if (ordo__shard_index(path, &filtered, &index, &err) == ORDO_OK)
        read_chunks(path, &filtered, &index.read);
    free(filtered.chunks);
    free(filtered.aux);
    return 0;
}
