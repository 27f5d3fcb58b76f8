/* gzip shards: indexing a .json.gz (hashing, inflating, access points,
 * validating every record) and reading all its chunks from their access
 * points, against `zcat FILE > /dev/null` of the same file in the same
 * run. Medians of --rounds runs.
 *   build/bench_gzip [--rounds N] [--dir DIR]
 * The file is ORDO_BENCH_GZIP_MB MiB of gzip (default 1024), JSON lines of
 * words compressed by zlib at gzip's default level 6, written once into
 * DIR (default build/bench-data) and kept. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "testing.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Writes about `mib` MiB of gzip: records of 20 to 400 words from a
 * vocabulary of 4096 made-up words, deterministic. */
static int write_corpus(const char *path, uint64_t mib)
{
    gzFile out = gzopen(path, "wb6");
    if (!out)
        return -1;
    static char words[4096][12];
    uint64_t x = 88172645463325252ull;
    for (int w = 0; w < 4096; w++) {
        int len = 2 + w % 9;
        for (int i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            words[w][i] = (char)('a' + x % 26);
        }
        words[w][len] = 0;
    }
    char line[8192];
    for (uint64_t record = 0;; record++) {
        if (record % 4096 == 0) {
            gzflush(out, Z_NO_FLUSH);
            if ((uint64_t)gzoffset(out) >= mib << 20)
                break;
        }
        int n =
            snprintf(line, sizeof line, "{\"id\": %llu, \"meta\": {\"lang\": \"en\"}, \"text\": \"",
                     (unsigned long long)record);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int count = 20 + (int)(x % 381);
        for (int i = 0; i < count; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* Zipf-like: low word numbers far more often */
            unsigned w = (unsigned)((x % 4096) * (x % 4096) / 4096);
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", i ? " " : "", words[w]);
        }
        n += snprintf(line + n, sizeof line - (size_t)n, "\"}\n");
        if (gzwrite(out, line, (unsigned)n) != n)
            return -1;
    }
    return gzclose(out) == Z_OK ? 0 : -1;
}

static int drop(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(uint64_t *)context += len;
    return 0;
}

typedef struct {
    const char *path;
    const ordo__shard *shard;
    int thread, threads;
    uint64_t bytes;
    int failed;
} reader;

static void *read_share(void *arg)
{
    reader *r = arg;
    ordo__read_spec spec = {"text", NULL, 0, 0};
    ordo_error err;
    for (uint32_t c = (uint32_t)r->thread; c < r->shard->chunk_count; c += (uint32_t)r->threads)
        if (ordo__chunk_read(r->path, r->shard, c, &spec, drop, &r->bytes, NULL, &err) != ORDO_OK) {
            fprintf(stderr, "bench_gzip: %s\n", err.message);
            r->failed = 1;
            break;
        }
    return NULL;
}

/* The baseline a loader without access points has: the whole file
 * inflated in order (zlib's gzread) and its records scanned as they come. */
static double scan_sequential(const char *path)
{
    double start = now();
    gzFile in = gzopen(path, "rb");
    if (!in)
        exit(1);
    gzbuffer(in, 1 << 20);
    size_t cap = (size_t)8 << 20, have = 0;
    char *buf = malloc(cap);
    ordo__read_spec spec = {"text", NULL, 0, 0};
    ordo__origin origin = {path, UINT64_MAX, 0, 0, NULL};
    ordo__counts counts = {0};
    uint64_t bytes = 0;
    ordo_error err;
    for (;;) {
        int n = gzread(in, buf + have, (unsigned)(cap - have));
        if (n < 0)
            exit(1);
        have += (size_t)n;
        size_t end = have;
        while (n > 0 && end > 0 && buf[end - 1] != '\n')
            end--;
        if (ordo__scan_records(ORDO_FORMAT_JSONL_GZ, buf, end, &spec, &origin, drop, &bytes,
                               &counts, &err) != ORDO_OK) {
            fprintf(stderr, "bench_gzip: %s\n", err.message);
            exit(1);
        }
        memmove(buf, buf + end, have - end);
        have -= end;
        if (n == 0)
            break;
    }
    gzclose(in);
    free(buf);
    return now() - start;
}

static double read_all(const char *path, const ordo__shard *shard, int threads)
{
    reader readers[8];
    pthread_t ids[8];
    double start = now();
    for (int t = 0; t < threads; t++) {
        readers[t] = (reader){path, shard, t, threads, 0, 0};
        pthread_create(&ids[t], NULL, read_share, &readers[t]);
    }
    int failed = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        failed |= readers[t].failed;
    }
    if (failed)
        exit(1);
    return now() - start;
}

int main(int argc, char **argv)
{
    int rounds = 5;
    const char *dir = "build/bench-data";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
    }
    if (rounds < 1 || rounds > 99)
        rounds = 5;
    const char *env = getenv("ORDO_BENCH_GZIP_MB");
    uint64_t mib = env ? strtoull(env, NULL, 10) : 1024;
    char path[1024];
    snprintf(path, sizeof path, "%s/gzip-%llu.json.gz", dir, (unsigned long long)mib);
    mkdir(dir, 0755);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "bench_gzip: writing %s ...\n", path);
        if (write_corpus(path, mib) != 0) {
            fprintf(stderr, "bench_gzip: cannot write %s\n", path);
            return 1;
        }
    }
    ordo__shard shard = {.path = path, .format = ORDO_FORMAT_JSONL_GZ};
    ordo_error err;
    if (ordo__sha256_file(path, shard.sha256, &shard.size, &err) != ORDO_OK) {
        fprintf(stderr, "bench_gzip: %s\n", err.message);
        return 1;
    }
    ordo__index_spec spec = {
        .read = {"text", NULL, 0, 0}, .chunk_limit = ORDO__CHUNK_MIN, .lanes = 64};
    double index_s[99], zcat_s[99], scan_s[99], read1_s[99], read2_s[99];
    char command[1200];
    snprintf(command, sizeof command, "zcat '%s' > /dev/null", path);
    for (int r = 0; r < rounds; r++) {
        double start = now();
        if (ordo__shard_index(path, &shard, &spec, &err) != ORDO_OK) {
            fprintf(stderr, "bench_gzip: %s\n", err.message);
            return 1;
        }
        index_s[r] = now() - start;
        start = now();
        if (system(command) != 0)
            return 1;
        zcat_s[r] = now() - start;
        scan_s[r] = scan_sequential(path);
        read1_s[r] = read_all(path, &shard, 1);
        read2_s[r] = read_all(path, &shard, 2);
    }
    uint64_t raw = 0;
    for (uint32_t c = 0; c < shard.chunk_count; c++)
        raw += shard.chunks[c].raw_length;
    double index = median(index_s, rounds), zcat = median(zcat_s, rounds),
           read1 = median(read1_s, rounds), read2 = median(read2_s, rounds),
           scan = median(scan_s, rounds);
    double gz_mb = (double)shard.size / 1048576.0, raw_mb = (double)raw / 1048576.0;
    printf("gzip shard: %.0f MiB of gzip, %.0f MiB of records, %llu documents, %u chunks\n", gz_mb,
           raw_mb, (unsigned long long)shard.records, shard.chunk_count);
    printf("  access points: %.1f KiB each in the ledger (windows zstd level 3), %.2f%% of the "
           "file\n",
           (double)shard.aux_size / shard.chunk_count / 1024.0,
           100.0 * (double)shard.aux_size / (double)shard.size);
    printf("  index:            %7.2f s  (%.0f MiB/s of gzip, %.0f MiB/s of records)\n", index,
           gz_mb / index, raw_mb / index);
    printf("  zcat > /dev/null: %7.2f s  (%.0f MiB/s of records)\n", zcat, raw_mb / zcat);
    printf("  gunzip + scan:    %7.2f s  (the file in order, every record parsed)\n", scan);
    printf("  chunks, 1 thread: %7.2f s  (%.2fx zcat's time, %.2fx gunzip + scan; every record "
           "parsed)\n",
           read1, read1 / zcat, read1 / scan);
    printf("  chunks, 2 threads:%7.2f s  (%.2fx zcat's time, %.2fx gunzip + scan)\n", read2,
           read2 / zcat, read2 / scan);
    printf("  medians of %d rounds\n", rounds);
    free(shard.chunks);
    free(shard.aux);
    return 0;
}
