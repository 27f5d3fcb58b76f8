/*
 * bench_loader: the whole loader pipeline (zst read -> tokenize -> pack ->
 * shuffle -> batch -> digest), measured in one process on one corpus:
 *   1. tokens/s with 1 and with 2 workers per operator;
 *   2. ordered reassembly against the unordered debug mode;
 *   3. time to the first batch after a resume as flush_every grows;
 *   4. what checking every chunk against its digest costs (on vs off).
 * Medians of rounds, configurations interleaved within each round.
 *
 * Both with the byte tokenizer on generated text and, given --ranks, with
 * cl100k_base on real English text (--text: JSON lines of {"text": ...},
 * cycled until the shards hold --mb MB).
 *
 *   bench_loader [--dir DIR] [--mb N] [--rounds R] [--prefetch P]
 *                [--ranks CL100K.tiktoken --text ENGLISH.jsonl] [--only verify]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>

#include "ordo.h"
#include "testing.h"

typedef struct {
    const char *dir;
    int mb, rounds;
    const char *ranks, *text;
    int verify_only; /* --only verify: just the chunk digest check's cost */
} options;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const char *message)
{
    fprintf(stderr, "bench_loader: %s: %s\n", what, message);
    exit(1);
}

/* Writes a multi-frame .jsonl.zst shard of documents of min..max bytes,
 * `per_frame` documents to a frame. */
static void write_shard(const char *path, size_t bytes, int min_len, int max_len, unsigned seed,
                        int per_frame)
{
    FILE *out = fopen(path, "wb");
    if (!out)
        die(path, "cannot create");
    size_t cap = 1 << 20, len = 0, written = 0;
    char *frame = malloc(cap), *packed = malloc(ZSTD_compressBound(cap));
    int docs = 0;
    while (written < bytes) {
        int n =
            min_len + (int)((seed = seed * 1103515245u + 12345u) >> 8) % (max_len - min_len + 1);
        if (len + (size_t)n + 32 > cap || docs == per_frame) {
            size_t c = ZSTD_compress(packed, ZSTD_compressBound(cap), frame, len, 3);
            fwrite(packed, 1, c, out);
            written += len;
            len = 0;
            docs = 0;
        }
        len += (size_t)sprintf(frame + len, "{\"text\":\"");
        for (int i = 0; i < n; i++)
            frame[len++] =
                "abcdefghij klmnopqrstuvwxyz ,."[((seed = seed * 1103515245u + 12345u) >> 16) % 30];
        len += (size_t)sprintf(frame + len, "\"}\n");
        docs++;
    }
    if (len) {
        size_t c = ZSTD_compress(packed, ZSTD_compressBound(cap), frame, len, 3);
        fwrite(packed, 1, c, out);
    }
    fclose(out);
    free(frame);
    free(packed);
}

/* Shards of real text: the lines of a JSON-lines file, cycled until
 * `bytes` are written, 16 documents a frame. */
static void write_text_shards(const options *o, size_t bytes)
{
    FILE *in = fopen(o->text, "rb");
    if (!in)
        die(o->text, "cannot open");
    char path[4096];
    snprintf(path, sizeof path, "%s/english-0.jsonl.zst", o->dir);
    FILE *out = fopen(path, "wb");
    if (!out)
        die(path, "cannot create");
    char *line = NULL, *frame = NULL, *packed = NULL;
    size_t cap = 0, len = 0, frame_cap = 0, written = 0;
    ssize_t n;
    int docs = 0;
    while (written < bytes) {
        if ((n = getline(&line, &cap, in)) <= 0) {
            rewind(in);
            continue;
        }
        if (len + (size_t)n > frame_cap) {
            frame_cap = 2 * (len + (size_t)n);
            frame = realloc(frame, frame_cap);
        }
        memcpy(frame + len, line, (size_t)n);
        len += (size_t)n;
        if (++docs == 16 || written + len >= bytes) {
            packed = realloc(packed, ZSTD_compressBound(len));
            size_t c = ZSTD_compress(packed, ZSTD_compressBound(len), frame, len, 3);
            fwrite(packed, 1, c, out);
            written += len;
            len = 0;
            docs = 0;
        }
    }
    fclose(out);
    fclose(in);
    free(line);
    free(frame);
    free(packed);
}

/* The throughput recipe (web + books), or the resume one over small
 * chunks (small-*: 4 documents a frame) so replay length shows. */
static const char *recipe_path(const options *o, int flush_every, int small)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/recipe-%s%d.json", o->dir, small ? "small-" : "", flush_every);
    if (small < 0) { /* cl100k_base over the English shards */
        FILE *f = fopen(path, "w");
        if (!f)
            die(path, "cannot create");
        fprintf(f,
                "{\"name\":\"bench-bpe\",\"seed\":7,\"seq_len\":2048,\"global_batch\":16,"
                "\"lanes\":8,\"flush_every\":%d,\"shuffle\": true,\"tokenizer\":{\"kind\":"
                "\"tiktoken\",\"encoding\":\"cl100k_base\",\"path\":\"%s\"},\"sources\":["
                "{\"name\":\"english\",\"paths\":[\"english-*.jsonl.zst\"],\"weight\":1}]}\n",
                flush_every, o->ranks);
        fclose(f);
        return path;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        die(path, "cannot create");
    if (small)
        fprintf(f,
                "{\"name\":\"bench-resume\",\"seed\":7,\"seq_len\":2048,\"global_batch\":16,"
                "\"lanes\":8,\"flush_every\":%d,\"shuffle\": true,\"sources\":["
                "{\"name\":\"small\",\"paths\":[\"small-*.jsonl.zst\"],\"weight\":1}]}\n",
                flush_every);
    else
        fprintf(f,
                "{\"name\":\"bench\",\"seed\":7,\"seq_len\":2048,\"global_batch\":16,"
                "\"lanes\":8,\"flush_every\":%d,\"shuffle\": true,\"sources\":["
                "{\"name\":\"web\",\"paths\":[\"web-*.jsonl.zst\"],\"weight\":0.6},"
                "{\"name\":\"books\",\"paths\":[\"books-*.jsonl.zst\"],\"weight\":0.4}]}\n",
                flush_every);
    fclose(f);
    return path;
}

static ordo_recipe *load(const options *o, int flush_every, int small)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    if (ordo_recipe_load(recipe_path(o, flush_every, small), &r, &err) != ORDO_OK ||
        ordo_recipe_index(r, NULL, NULL, NULL, &err) != ORDO_OK)
        die("recipe", err.message);
    return r;
}

/* Process CPU seconds, all threads. */
static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static double last_cores; /* CPU time / wall time of the last measurement */

/* Tokens per second of one rank (world size 1) over `steps` batches. */
static int prefetch = 8;

static double throughput(const ordo_recipe *r, int workers, int unordered, int steps)
{
    ordo_loader_options lo = {.rank = 0,
                              .world_size = 1,
                              .read_workers = workers,
                              .tokenize_workers = workers,
                              .prefetch = prefetch};
    ordo_loader *l = NULL;
    ordo_error err;
    if (ordo_loader_open(r, &lo, &l, &err) != ORDO_OK)
        die("open", err.message);
    if (unordered && ordo__loader_set_unordered(l, &err) != ORDO_OK)
        die("unordered", err.message);
    ordo_batch b;
    double start = now(), cpu0 = cpu_seconds();
    int64_t tokens = 0;
    for (int s = 0; s < steps; s++) {
        if (ordo_loader_next(l, &b, &err) != ORDO_OK)
            die("next", err.message);
        tokens += (int64_t)b.rows * b.seq_len;
    }
    double elapsed = now() - start;
    last_cores = (cpu_seconds() - cpu0) / elapsed;
    ordo_loader_close(l);
    return (double)tokens / elapsed;
}

/* Seconds from opening a resumed loader to its first batch. */
static double first_batch_after_resume(const ordo_recipe *r, int steps)
{
    ordo_loader_options lo = {.rank = 0, .world_size = 1, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *l = NULL;
    ordo_error err;
    ordo_batch b;
    if (ordo_loader_open(r, &lo, &l, &err) != ORDO_OK)
        die("open", err.message);
    for (int s = 0; s < steps; s++)
        if (ordo_loader_next(l, &b, &err) != ORDO_OK)
            die("next", err.message);
    unsigned char *state = NULL;
    size_t size = 0;
    if (ordo_loader_checkpoint(l, &state, &size, &err) != ORDO_OK)
        die("checkpoint", err.message);
    ordo_loader_close(l);
    lo.resume = state;
    lo.resume_size = size;
    double start = now();
    if (ordo_loader_open(r, &lo, &l, &err) != ORDO_OK || ordo_loader_next(l, &b, &err) != ORDO_OK)
        die("resume", err.message);
    double elapsed = now() - start;
    ordo_loader_close(l);
    ordo_free(state);
    return elapsed;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static options parse(int argc, char **argv)
{
    options o = {"build/bench/loader", 48, 5, NULL, NULL, 0};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dir") == 0)
            o.dir = argv[i + 1];
        else if (strcmp(argv[i], "--mb") == 0)
            o.mb = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            o.rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--prefetch") == 0)
            prefetch = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ranks") == 0)
            o.ranks = argv[i + 1];
        else if (strcmp(argv[i], "--text") == 0)
            o.text = argv[i + 1];
        else if (strcmp(argv[i], "--only") == 0)
            o.verify_only = strcmp(argv[i + 1], "verify") == 0;
    }
    if (o.mb < 1 || o.rounds < 1 || o.rounds > 49) {
        fprintf(stderr, "usage: bench_loader [--dir DIR] [--mb N] [--rounds R]\n");
        exit(2);
    }
    return o;
}

static void make_corpus(const options *o)
{
    char path[4096];
    mkdir("build/bench", 0755);
    mkdir(o->dir, 0755);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/web-%d.jsonl.zst", o->dir, i);
        write_shard(path, (size_t)o->mb << 19, 200, 2000, 11u + (unsigned)i, 64);
        snprintf(path, sizeof path, "%s/books-%d.jsonl.zst", o->dir, i);
        write_shard(path, (size_t)o->mb << 19, 2000, 20000, 23u + (unsigned)i, 64);
        snprintf(path, sizeof path, "%s/small-%d.jsonl.zst", o->dir, i);
        write_shard(path, (size_t)8 << 20, 200, 2000, 37u + (unsigned)i, 4);
    }
}

/* Workers and ordering: 1 vs 2 workers, ordered vs unordered. */
static void workers_and_order(const options *o, ordo_recipe *r, int steps, const char *what)
{
    double one[49], two[49], ratio[49], ordered[49], unordered[49], cost[49];
    double cores_one[49], cores_two[49];
    printf("loader pipeline: %d MB corpus, %s, seq_len 2048, 16 samples/step, "
           "%d steps per measurement, %d rounds\n",
           o->mb, what, steps, o->rounds);
    printf("%5s %16s %16s %7s %16s %16s %8s\n", "round", "1 worker tok/s", "2 workers tok/s",
           "ratio", "ordered tok/s", "unordered tok/s", "cost");
    for (int i = 0; i < o->rounds; i++) {
        one[i] = throughput(r, 1, 0, steps);
        cores_one[i] = last_cores;
        two[i] = throughput(r, 2, 0, steps);
        cores_two[i] = last_cores;
        /* ABBA order, so drift in the machine's speed cancels out */
        ordered[i] = throughput(r, 2, 0, steps);
        unordered[i] = throughput(r, 2, 1, steps);
        unordered[i] = (unordered[i] + throughput(r, 2, 1, steps)) / 2;
        ordered[i] = (ordered[i] + throughput(r, 2, 0, steps)) / 2;
        ratio[i] = two[i] / one[i];
        cost[i] = 1 - ordered[i] / unordered[i];
        printf("%5d %16.0f %16.0f %7.2f %16.0f %16.0f %7.1f%%\n", i + 1, one[i], two[i], ratio[i],
               ordered[i], unordered[i], 100 * cost[i]);
        fflush(stdout);
    }
    printf("median: 1 worker %.0f tokens/s, 2 workers %.0f tokens/s, ratio %.2f; "
           "ordered reassembly costs %.1f%%\n",
           median(one, o->rounds), median(two, o->rounds), median(ratio, o->rounds),
           100 * median(cost, o->rounds));
    printf("cores busy (CPU time / wall time): 1 worker %.2f, 2 workers %.2f\n",
           median(cores_one, o->rounds), median(cores_two, o->rounds));
}

/* Tokens per second (wall) and per CPU second (all threads) of 2 workers,
 * with or without the chunk digest check. */
static void throughput_verified(const ordo_recipe *r, int verify, int steps, double *wall,
                                double *cpu)
{
    ordo__verify_chunk_digests = verify; /* read by workers started after this */
    *wall = throughput(r, 2, 0, steps);
    *cpu = *wall / last_cores;
    ordo__verify_chunk_digests = 1;
}

/* Seconds SHA-256 needs for the shard files PREFIX-N.jsonl.zst in o->dir
 * of each prefix (NULL-ended; the bytes one pass over the corpus checks),
 * best of 5; *bytes gets their size. */
static double hash_seconds(const options *o, const char *const *prefixes, uint64_t *bytes)
{
    double best = 1e9;
    *bytes = 0;
    for (int round = 0; round < 5; round++) {
        double spent = 0;
        uint64_t total = 0;
        for (int i = 0; i < 64 * 8; i++) {
            char path[4096];
            if (!prefixes[i / 64])
                break;
            snprintf(path, sizeof path, "%s/%s-%d.jsonl.zst", o->dir, prefixes[i / 64], i % 64);
            FILE *f = fopen(path, "rb");
            if (!f) {
                i = (i / 64 + 1) * 64 - 1; /* the next prefix */
                continue;
            }
            fseek(f, 0, SEEK_END);
            size_t size = (size_t)ftell(f);
            rewind(f);
            char *data = malloc(size ? size : 1);
            if (!data || fread(data, 1, size, f) != size)
                die(path, "cannot read");
            fclose(f);
            unsigned char digest[ORDO_DIGEST_SIZE];
            double start = now();
            ordo_sha256(data, size, digest);
            spent += now() - start;
            total += size;
            free(data);
        }
        best = spent < best ? spent : best;
        *bytes = total;
    }
    return best;
}

/* Chunk digests checked as chunks are read, against not checked: 2
 * workers, ordered, ABBA order within each round (each figure the mean of
 * its two runs). Costs by wall time and by CPU time, which a machine
 * shared with other work disturbs less. */
static void verify_cost(const options *o, const ordo_recipe *r, int steps, const char *what,
                        const char *const *prefixes, double text_bytes)
{
    double on[49], off[49], cost[49], cpu_cost[49], cpu_off[49], a, b, c, d, ca, cb, cc, cd;
    printf("chunk digest check: %s, 2 workers, %d steps per measurement, ABBA, %d rounds\n", what,
           steps, o->rounds);
    printf("%5s %16s %16s %8s %9s\n", "round", "checked tok/s", "unchecked tok/s", "cost",
           "CPU cost");
    for (int i = 0; i < o->rounds; i++) {
        throughput_verified(r, 1, steps, &a, &ca);
        throughput_verified(r, 0, steps, &b, &cb);
        throughput_verified(r, 0, steps, &c, &cc);
        throughput_verified(r, 1, steps, &d, &cd);
        on[i] = (a + d) / 2;
        off[i] = (b + c) / 2;
        cost[i] = 1 - on[i] / off[i];
        cpu_cost[i] = 1 - (ca + cd) / (cb + cc);
        cpu_off[i] = (cb + cc) / 2;
        printf("%5d %16.0f %16.0f %7.1f%% %8.1f%%\n", i + 1, on[i], off[i], 100 * cost[i],
               100 * cpu_cost[i]);
        fflush(stdout);
    }
    printf("median: checked %.0f tokens/s, unchecked %.0f tokens/s; the check costs %.1f%% "
           "(wall), %.1f%% (CPU)\n",
           median(on, o->rounds), median(off, o->rounds), 100 * median(cost, o->rounds),
           100 * median(cpu_cost, o->rounds));
    /* The same cost taken apart, which load on the machine disturbs far
     * less: SHA-256 of every byte a pass over the corpus checks, against
     * the pipeline's CPU time for that pass. */
    ordo_source_info info;
    ordo_error err;
    double tokens = 0;
    for (int s = 0; ordo_recipe_source(r, s, &info, &err) == ORDO_OK; s++)
        tokens += info.tokens_per_byte * text_bytes; /* text_bytes: of each source */
    uint64_t bytes = 0;
    double hashing = hash_seconds(o, prefixes, &bytes);
    double pass = tokens / median(cpu_off, o->rounds);
    printf("taken apart: SHA-256 of the %.1f MB of shard files one pass checks takes %.1f ms "
           "(%.0f MB/s); a pass (%.0f tokens) takes %.2f CPU s unchecked: %.2f%%\n",
           (double)bytes / 1e6, 1e3 * hashing, (double)bytes / 1e6 / hashing, tokens, pass,
           100 * hashing / pass);
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    make_corpus(&o);
    ordo_recipe *r = load(&o, 16, 0);
    if (!o.verify_only)
        workers_and_order(&o, r, 1000, "byte tokenizer"); /* 1000 x 16 x 2048 = 33M tokens */
    verify_cost(&o, r, 1000, "byte tokenizer", (const char *const[]){"web", "books", NULL},
                (double)((size_t)o.mb << 20));
    ordo_recipe_free(r);
    if (o.ranks && o.text) {
        write_text_shards(&o, (size_t)o.mb << 20);
        r = load(&o, 16, -1);
        if (!o.verify_only)
            workers_and_order(&o, r, 300, "cl100k_base tokenizer on English text");
        verify_cost(&o, r, 300, "cl100k_base tokenizer on English text",
                    (const char *const[]){"english", NULL}, (double)((size_t)o.mb << 20));
        ordo_recipe_free(r);
    }
    if (o.verify_only)
        return 0;
    printf("time to the first batch after a resume at step 400 (2 workers, chunks of 4 "
           "documents), median of %d:\n",
           o.rounds);
    int flushes[] = {4, 16, 64, 256};
    for (int f = 0; f < 4; f++) {
        ordo_recipe *rf = load(&o, flushes[f], 1);
        double t[49];
        for (int i = 0; i < o.rounds; i++)
            t[i] = first_batch_after_resume(rf, 400);
        printf("  flush_every %4d steps: %8.1f ms\n", flushes[f], 1e3 * median(t, o.rounds));
        ordo_recipe_free(rf);
    }
    return 0;
}
