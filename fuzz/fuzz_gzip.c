/* Fuzzes the gzip shard reader (access points every 512 bytes of output):
 * the input as a .jsonl.gz file, indexed and every chunk read back; the
 * input as records gzipped in members (their size and the level from its
 * first bytes), which must give what the same records in .jsonl give; and
 * the input as the stored access point of a good shard's chunk (aux bytes
 * from a corrupt or hostile ledger), decoded and read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int count(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(uint64_t *)context += len + 1;
    return 0;
}

static const ordo__read_spec spec = {"text", NULL, 0, 0};

static void write_file(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (len && fwrite(bytes, 1, len, f) != len)
        abort();
    fclose(f);
}

/* Gzips `len` bytes into `path`, a member every `member` bytes and a
 * deflate block boundary (Z_BLOCK, at any bit) every `block` bytes. */
static void write_gz(const char *path, const unsigned char *bytes, size_t len, size_t member,
                     size_t block, int level)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    size_t at = 0;
    do {
        size_t n = len - at < member ? len - at : member;
        z_stream z = {0};
        if (deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            abort();
        unsigned char out[1 << 17];
        z.next_in = (unsigned char *)bytes + at;
        int ret;
        for (size_t done = 0; done < n;) {
            size_t piece = n - done < block ? n - done : block;
            z.avail_in = (uInt)piece;
            do {
                z.next_out = out;
                z.avail_out = sizeof out;
                deflate(&z, Z_BLOCK);
                fwrite(out, 1, sizeof out - z.avail_out, f);
            } while (z.avail_out == 0);
            done += piece;
        }
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            ret = deflate(&z, Z_FINISH);
            fwrite(out, 1, sizeof out - z.avail_out, f);
        } while (ret == Z_OK);
        deflateEnd(&z);
        at += n;
    } while (at < len);
    fclose(f);
}

/* Indexes `path` as .jsonl.gz; on success every chunk must read. */
static ordo_status index_and_read(const char *path, ordo__shard *shard, uint64_t limit,
                                  uint64_t *bytes)
{
    ordo_error err;
    *shard = (ordo__shard){.path = (char *)path, .format = ORDO_FORMAT_JSONL_GZ};
    if (ordo__sha256_file(path, shard->sha256, &shard->size, &err) != ORDO_OK)
        abort();
    ordo__index_spec index = {.read = spec, .chunk_limit = limit, .lanes = 64};
    ordo_status status = ordo__shard_index(path, shard, &index, &err);
    for (uint32_t c = 0; status == ORDO_OK && c < shard->chunk_count; c++)
        if (ordo__chunk_read(path, shard, c, &spec, count, bytes, NULL, &err) != ORDO_OK)
            abort();
    return status;
}

static void free_shard(ordo__shard *shard)
{
    free(shard->chunks);
    free(shard->aux);
}

/* The records gzipped must read as the records plain. */
static void as_records(const char *gz, const char *plain, const unsigned char *data, size_t size)
{
    size_t member = size ? 1 + data[0] * 7u : 1;
    int level = size > 1 ? data[1] % 10 : 6;
    size_t block = size > 2 ? 1 + data[2] * 3u : 64;
    write_gz(gz, data, size, member, block, level);
    write_file(plain, data, size);
    ordo__shard shard;
    uint64_t read_bytes = 0, scanned = 0, plain_bytes = 0;
    if (index_and_read(gz, &shard, (uint64_t)1 << 20, &read_bytes) == ORDO_OK) {
        ordo_error err;
        ordo__counts gz_counts, plain_counts;
        if (ordo__file_scan(gz, ORDO_FORMAT_JSONL_GZ, &spec, count, &scanned, &gz_counts, &err) !=
                ORDO_OK ||
            ordo__file_scan(plain, ORDO_FORMAT_JSONL, &spec, count, &plain_bytes, &plain_counts,
                            &err) != ORDO_OK)
            abort();
        if (scanned != plain_bytes || read_bytes != plain_bytes ||
            gz_counts.read != plain_counts.read || gz_counts.passed != plain_counts.passed ||
            shard.records != plain_counts.passed)
            abort();
    }
    free_shard(&shard);
}

/* A good shard of several chunks, made once. */
static ordo__shard good;
static char good_path[96];

static void make_good(void)
{
    char records[40000];
    size_t at = 0;
    for (int i = 0; at + 200 < sizeof records; i++)
        at += (size_t)snprintf(records + at, sizeof records - at,
                               "{\"text\": \"record %d of the good shard, %d\"}\n", i, i * 7919);
    snprintf(good_path, sizeof good_path, "/tmp/ordo-fuzz-%d-good.jsonl.gz", (int)getpid());
    write_gz(good_path, (const unsigned char *)records, at, at, 997, 6);
    uint64_t bytes = 0;
    if (index_and_read(good_path, &good, 1 << 20, &bytes) != ORDO_OK || good.chunk_count < 3)
        abort();
}

/* The input as chunk 1's access point: refused or read, never a fault. */
static void as_point(const unsigned char *data, size_t size)
{
    ordo__gz_point *point = malloc(sizeof *point);
    ordo_error err;
    ordo__gz_point_decode("fuzz", 1, data, size, point, &err);
    free(point);
    ordo__shard shard = good;
    ordo__chunk chunks[3];
    memcpy(chunks, good.chunks, sizeof chunks);
    shard.chunks = chunks;
    shard.chunk_count = 3;
    shard.aux = (unsigned char *)data;
    shard.aux_size = size;
    chunks[1].aux_offset = 0;
    chunks[1].aux_length = (uint32_t)size;
    uint64_t bytes = 0;
    ordo__chunk_read(good_path, &shard, 1, &spec, count, &bytes, NULL, &err);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static char gz[96], plain[96];
    ordo__gz_span = 512;
    if (!gz[0]) {
        snprintf(gz, sizeof gz, "/tmp/ordo-fuzz-%d.jsonl.gz", (int)getpid());
        snprintf(plain, sizeof plain, "/tmp/ordo-fuzz-%d.jsonl", (int)getpid());
        make_good();
    }
    write_file(gz, data, size);
    ordo__shard shard;
    uint64_t bytes = 0;
    index_and_read(gz, &shard, size % 2 ? 4096 : (uint64_t)1 << 16, &bytes);
    free_shard(&shard);
    as_records(gz, plain, data, size);
    as_point(data, size);
    return 0;
}
