/*
 * bench_parquet: ordo's Parquet reader against its floor, in one process.
 *
 *   bench_parquet extract FILE PAGES snappy|zstd [ROUNDS]
 *       text extraction: reading every chunk of FILE (ordo__chunk_read:
 *       pread, chunk digest, decompress, levels, values, UTF-8, records)
 *       against the raw decompressor alone (pread + snappy_uncompress or
 *       ZSTD_decompress) on the same pages of the text column (PAGES: one
 *       JSON line per data page, from bench/parquet_corpus.mjs); ordo with
 *       chunk digests checked and without, alternating within each round.
 *   bench_parquet index FILE [ROUNDS]
 *       the time to index FILE (ordo__shard_index, chunks of the limit a
 *       4-lane recipe gets) against SHA-256 of the same file (what opening
 *       any shard costs once).
 *
 * Figures are medians of rounds; ratios are of times on the same bytes.
 */
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <zstd.h>

#include "testing.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const char *message)
{
    fprintf(stderr, "bench_parquet: %s: %s\n", what, message);
    exit(1);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct {
    long long offset, compressed, uncompressed;
} page;

static page *read_pages(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, "cannot open");
    size_t cap = 64, n = 0;
    page *pages = malloc(cap * sizeof *pages);
    page p;
    while (fscanf(f, " {\"offset\":%lld,\"compressed\":%lld,\"uncompressed\":%lld}", &p.offset,
                  &p.compressed, &p.uncompressed) == 3) {
        if (n == cap)
            pages = realloc(pages, (cap *= 2) * sizeof *pages);
        pages[n++] = p;
    }
    fclose(f);
    if (!n)
        die(path, "no pages");
    *count = n;
    return pages;
}

/* The floor: every text page read and decompressed, nothing else. */
static double raw_pass(int fd, const page *pages, size_t count, int zstd, unsigned char *in,
                       unsigned char *out, size_t *bytes)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    double start = now();
    *bytes = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = (size_t)pages[i].compressed, want = (size_t)pages[i].uncompressed;
        if (pread(fd, in, len, pages[i].offset) != (ssize_t)len)
            die("pread", "short");
        size_t got = want;
        if (zstd)
            got = ZSTD_decompressDCtx(dctx, out, want, in, len);
        else if (snappy_uncompress((const char *)in, len, (char *)out, &got) != SNAPPY_OK)
            die("snappy", "corrupt page");
        if (got != want)
            die("decompress", "size differs");
        *bytes += got;
    }
    double t = now() - start;
    ZSTD_freeDCtx(dctx);
    return t;
}

static int count_text(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(size_t *)context += len;
    return 0;
}

static double ordo_pass(const char *path, const ordo__shard *shard, size_t *bytes)
{
    ordo_error err;
    ordo__read_spec spec = {"text", NULL, 0, 0};
    double start = now();
    *bytes = 0;
    for (uint32_t c = 0; c < shard->chunk_count; c++)
        if (ordo__chunk_read(path, shard, c, &spec, count_text, bytes, NULL, &err) != ORDO_OK)
            die(path, err.message);
    return now() - start;
}

static void index_shard(const char *path, ordo__shard *shard)
{
    ordo_error err;
    *shard = (ordo__shard){.format = ORDO_FORMAT_PARQUET};
    ordo__index_spec spec = {.read = {"text", NULL, 0, 0},
                             .per_chunk = 1,
                             .chunk_limit = ORDO__CHUNK_BUDGET / 4,
                             .lanes = 4};
    if (ordo__sha256_file(path, shard->sha256, &shard->size, &err) != ORDO_OK ||
        ordo__shard_index(path, shard, &spec, &err) != ORDO_OK)
        die(path, err.message);
}

static void extract(const char *path, const char *pages_path, int zstd, int rounds)
{
    size_t count;
    page *pages = read_pages(pages_path, &count);
    size_t most = 0;
    for (size_t i = 0; i < count; i++)
        if ((size_t)pages[i].uncompressed > most)
            most = (size_t)pages[i].uncompressed;
    unsigned char *in = malloc(most + 1024), *out = malloc(most + 1024);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || !in || !out)
        die(path, "cannot open");
    ordo__shard shard;
    index_shard(path, &shard);
    double raw[64], on[64], off[64];
    size_t raw_bytes = 0, text_bytes = 0;
    printf("parquet extract: %s (%s), %zu text pages, %u chunks, %d rounds\n", path,
           zstd ? "zstd" : "snappy", count, shard.chunk_count, rounds);
    printf("round   raw MB/s  ordo MB/s  ordo MB/s (no digest)  ratio  ratio (no digest)\n");
    for (int r = 0; r < rounds && r < 64; r++) {
        raw[r] = raw_pass(fd, pages, count, zstd, in, out, &raw_bytes);
        ordo__verify_chunk_digests = 1;
        on[r] = ordo_pass(path, &shard, &text_bytes);
        ordo__verify_chunk_digests = 0;
        off[r] = ordo_pass(path, &shard, &text_bytes);
        ordo__verify_chunk_digests = 1;
        printf("%5d %10.0f %10.0f %22.0f %6.3f %18.3f\n", r + 1, raw_bytes / raw[r] / 1e6,
               text_bytes / on[r] / 1e6, text_bytes / off[r] / 1e6, raw[r] / on[r],
               raw[r] / off[r]);
    }
    int n = rounds < 64 ? rounds : 64;
    double ratio_on[64], ratio_off[64];
    for (int r = 0; r < n; r++)
        ratio_on[r] = raw[r] / on[r], ratio_off[r] = raw[r] / off[r];
    printf("median: raw %.0f MB/s of pages, ordo %.0f MB/s of text (%.0f without digests); "
           "ratio %.3f (%.3f without digests); text %.1f MB in pages of %.1f MB\n",
           raw_bytes / median(raw, n) / 1e6, text_bytes / median(on, n) / 1e6,
           text_bytes / median(off, n) / 1e6, median(ratio_on, n), median(ratio_off, n),
           text_bytes / 1e6, raw_bytes / 1e6);
    close(fd);
    free(in);
    free(out);
    free(pages);
    free(shard.chunks);
    free(shard.aux);
}

/* SHA-256 of the file, then the index alone (given that digest), alternating. */
static void index_bench(const char *path, int rounds)
{
    double hash[64], index[64], ratio[64];
    ordo__shard shard = {0};
    int n = rounds < 64 ? rounds : 64;
    printf("parquet index: %s, %d rounds\n", path, n);
    for (int r = 0; r < n; r++) {
        ordo_error err;
        free(shard.chunks);
        free(shard.aux);
        shard = (ordo__shard){.format = ORDO_FORMAT_PARQUET};
        double start = now();
        if (ordo__sha256_file(path, shard.sha256, &shard.size, &err) != ORDO_OK)
            die(path, err.message);
        hash[r] = now() - start;
        ordo__index_spec spec = {.read = {"text", NULL, 0, 0},
                                 .per_chunk = 1,
                                 .chunk_limit = ORDO__CHUNK_BUDGET / 4,
                                 .lanes = 4};
        start = now();
        if (ordo__shard_index(path, &shard, &spec, &err) != ORDO_OK)
            die(path, err.message);
        index[r] = now() - start;
        ratio[r] = index[r] / hash[r];
        printf("round %d: SHA-256 %.2f s (%.0f MB/s), index %.2f s (%.0f MB/s), ratio %.2f\n",
               r + 1, hash[r], shard.size / hash[r] / 1e6, index[r], shard.size / index[r] / 1e6,
               ratio[r]);
    }
    printf("median: %.2f GB file, %u chunks, %llu documents: index %.2f s, SHA-256 %.2f s, "
           "index / SHA-256 %.2f\n",
           shard.size / 1e9, shard.chunk_count, (unsigned long long)shard.records, median(index, n),
           median(hash, n), median(ratio, n));
    free(shard.chunks);
    free(shard.aux);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "extract"))
        extract(argv[2], argv[3], !strcmp(argv[4], "zstd"), argc > 5 ? atoi(argv[5]) : 7);
    else if (argc >= 3 && !strcmp(argv[1], "index"))
        index_bench(argv[2], argc > 3 ? atoi(argv[3]) : 3);
    else {
        fprintf(stderr, "usage: bench_parquet extract FILE PAGES snappy|zstd [ROUNDS] | "
                        "index FILE [ROUNDS]\n");
        return 2;
    }
    return 0;
}
