/* Fuzzes the shard readers: JSON lines and plain text in memory, and the
 * whole indexer (zstd frames included) on a file holding the input. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record.h"
#include "shard_index.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int count(void *context, const char *text, size_t len)
{
    (void)text;
    *(size_t *)context += len;
    return 0;
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
        ordo__shard_index(path, &shard, "text", 3, (uint64_t)1 << 16, 4, &err);
        free(shard.chunks);
    }
    return 0;
}
