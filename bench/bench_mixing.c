/*
 * bench_mixing: how exactly the loader meets a recipe's source weights.
 *
 * Generates two corpora of .jsonl.zst shards (fixed seeds, so every run
 * writes the same bytes) whose sources' documents differ in length by
 * about 100x, writes recipe files over them, and for each recipe opens a
 * loader at world size 1 (logical binding) and runs --steps steps. Per
 * step and source s it takes the deviation in samples
 *   |source_tokens[s] / seq_len - w_s * B|
 * (tokens over seq_len, since a sample may hold several sources), the
 * padding, and the lanes whose digest equals another lane's in the step.
 * Per recipe it prints the worst source's per-step deviation (max and p95
 * over steps), the run's deviation in percentage points of token share
 * (padding excluded), the share at step 1, the steps where a source got
 * nothing, the steps with duplicate lane digests, the padding, the
 * checkpoint bytes per lane after the last step and tokens/s (median of
 * --runs runs, which must also deliver the same batches), as a table and
 * as one JSON line per recipe.
 *
 * Recipes are files and only ordo.h is used, so the same bench runs on any
 * version of the loader; keys a version needs beyond the shape (flush,
 * shuffle) come verbatim from --recipe-extra.
 *
 *   bench_mixing [--dir DIR] [--demo-dir DIR] [--steps N] [--runs R]
 *                [--mb MB] [--docs-per-frame N] [--workers N]
 *                [--recipe-extra '"flush_every": 2, "shuffle_window": 8']
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "ordo.h"

#define MAX_SOURCES 8
#define MAX_RUNS 15
#define SHARDS_PER_SOURCE 4
#define SEED 2026

typedef struct {
    const char *dir;      /* where corpora and recipes go */
    const char *demo_dir; /* the folder `make demo` builds, or NULL */
    const char *extra;    /* recipe keys passed through, "" for none */
    int steps, runs, mb, docs_per_frame, workers;
} options;

/* A generated source: documents of min..max bytes. */
typedef struct {
    const char *name;
    int min_len, max_len;
} source_spec;

/* One recipe to measure. */
typedef struct {
    const char *label;
    char path[PATH_MAX];
} recipe_case;

/* What one recipe's run measured. */
typedef struct {
    int steps, sources;
    double weight[MAX_SOURCES]; /* normalised */
    double *step_dev;           /* [steps]: worst source's deviation in samples */
    double share1[MAX_SOURCES]; /* token shares at step 1 */
    double tokens[MAX_SOURCES]; /* delivered per source over the run */
    int zero_steps;             /* steps where some source got 0 tokens */
    int dup_steps;              /* steps with lanes of identical digests */
    int64_t dup_lanes;          /* lanes sharing their digest, summed over steps */
    int64_t pad_tokens, all_tokens;
    double checkpoint_per_lane;   /* bytes */
    unsigned char run_digest[32]; /* chained batch digests: same data across runs */
    double tokens_per_s;
} result;

static const char *created[64]; /* files to remove when the folder is ours */
static int created_count;
static const char *own_dir; /* the temporary folder made for this run, or NULL */

/* Removes what this run wrote, when it wrote into a folder of its own. */
static void remove_created(void)
{
    if (!own_dir)
        return;
    for (int i = 0; i < created_count; i++)
        remove(created[i]);
    rmdir(own_dir);
    own_dir = NULL;
}

static void remove_created(void);

/* Reports a failure and stops, removing a temporary folder of ours. */
static void die(const char *what, const char *message)
{
    fprintf(stderr, "bench_mixing: %s: %s\n", what, message);
    remove_created();
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

static void remember(const char *path)
{
    if (created_count < (int)(sizeof created / sizeof *created))
        created[created_count++] = strdup(path);
}

/* Compresses `len` bytes of `frame` as one zstd frame onto `out`. */
static void put_frame(FILE *out, const char *frame, size_t len, const char *path)
{
    size_t bound = ZSTD_compressBound(len);
    char *packed = malloc(bound);
    if (!packed)
        die(path, "out of memory");
    size_t c = ZSTD_compress(packed, bound, frame, len, 3);
    if (ZSTD_isError(c) || fwrite(packed, 1, c, out) != c)
        die(path, "cannot write a frame");
    free(packed);
}

/* Writes `path`: JSON lines {"text": ...} of min_len..max_len letters,
 * `per_frame` documents to a zstd frame, until `bytes` of text. */
static void write_shard(const char *path, size_t bytes, const source_spec *spec, unsigned seed,
                        int per_frame)
{
    FILE *out = fopen(path, "wb");
    if (!out)
        die(path, strerror(errno));
    remember(path);
    size_t cap = (size_t)per_frame * ((size_t)spec->max_len + 16), len = 0, written = 0;
    char *frame = malloc(cap);
    if (!frame)
        die(path, "out of memory");
    int docs = 0;
    while (written < bytes) {
        int n = spec->min_len +
                (int)(next_random(&seed) % (unsigned)(spec->max_len - spec->min_len + 1));
        len += (size_t)sprintf(frame + len, "{\"text\":\"");
        for (int i = 0; i < n; i++)
            frame[len++] = "abcdefghij klmnopqrstuvwxyz ,."[next_random(&seed) % 30];
        len += (size_t)sprintf(frame + len, "\"}\n");
        written += (size_t)n;
        if (++docs == per_frame) {
            put_frame(out, frame, len, path);
            len = 0;
            docs = 0;
        }
    }
    if (len)
        put_frame(out, frame, len, path);
    if (fclose(out) != 0)
        die(path, "cannot close");
    free(frame);
}

/* Writes corpus `name` (a folder under o->dir) of `count` sources, each
 * SHARDS_PER_SOURCE shards of o->mb MB of text in all. */
static void write_corpus(const options *o, const char *name, const source_spec *sources, int count,
                         unsigned seed)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", o->dir, name);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die(path, strerror(errno));
    for (int s = 0; s < count; s++)
        for (int i = 0; i < SHARDS_PER_SOURCE; i++) {
            snprintf(path, sizeof path, "%s/%s/%s-%d.jsonl.zst", o->dir, name, sources[s].name, i);
            write_shard(path, ((size_t)o->mb << 20) / SHARDS_PER_SOURCE, &sources[s],
                        seed + 97u * (unsigned)s + (unsigned)i, o->docs_per_frame);
        }
    snprintf(path, sizeof path, "%s/%s", o->dir, name);
    remember(path); /* after its files, so it is removed after them */
}

/* Writes a recipe file `file` in o->dir: the shape, o->extra, then the
 * sources (name, glob, weight), with `tokenizer` JSON or NULL for bytes. */
static void write_recipe(const options *o, recipe_case *c, const char *file, const char *shape,
                         const char *tokenizer, int count, const char *const *names,
                         const char *const *globs, const double *weights)
{
    snprintf(c->path, sizeof c->path, "%s/%s", o->dir, file);
    FILE *f = fopen(c->path, "w");
    if (!f)
        die(c->path, strerror(errno));
    remember(c->path);
    fprintf(f, "{\"name\": \"%s\", \"seed\": %d, %s", c->label, SEED, shape);
    if (o->extra[0])
        fprintf(f, ", %s", o->extra);
    if (tokenizer)
        fprintf(f, ", \"tokenizer\": %s", tokenizer);
    fprintf(f, ",\n \"sources\": [");
    for (int s = 0; s < count; s++)
        fprintf(f, "%s{\"name\": \"%s\", \"paths\": [\"%s\"], \"weight\": %g}", s ? ",\n  " : "",
                names[s], globs[s], weights[s]);
    fprintf(f, "]}\n");
    if (fclose(f) != 0)
        die(c->path, "cannot write");
}

static ordo_recipe *load(const recipe_case *c)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    if (ordo_recipe_load(c->path, &r, &err) != ORDO_OK ||
        ordo_recipe_index(r, NULL, NULL, NULL, &err) != ORDO_OK)
        die(c->label, err.message);
    return r;
}

static int compare_digests(const void *a, const void *b)
{
    return memcmp(a, b, ORDO_DIGEST_SIZE);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Lanes of a step whose digest another lane of the step shares. */
static int duplicate_lanes(const ordo_batch *b, unsigned char *scratch)
{
    memcpy(scratch, b->lane_digests, (size_t)b->lane_count * ORDO_DIGEST_SIZE);
    qsort(scratch, (size_t)b->lane_count, ORDO_DIGEST_SIZE, compare_digests);
    int dup = 0;
    for (int i = 0; i < b->lane_count; i++) {
        const unsigned char *d = scratch + (size_t)i * ORDO_DIGEST_SIZE;
        if ((i > 0 && memcmp(d, d - ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) == 0) ||
            (i + 1 < b->lane_count && memcmp(d, d + ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) == 0))
            dup++;
    }
    return dup;
}

/* Folds one step into the result: deviations, zero-token sources,
 * duplicate digests, padding, the chained digest. */
static void account(result *m, const ordo_recipe_info *info, const ordo_batch *b,
                    unsigned char *scratch)
{
    int64_t step_tokens = 0;
    double worst = 0;
    int zero = 0;
    for (int s = 0; s < m->sources; s++) {
        double samples = (double)b->source_tokens[s] / info->seq_len;
        double dev = samples - m->weight[s] * info->global_batch;
        worst = dev < 0 ? (-dev > worst ? -dev : worst) : (dev > worst ? dev : worst);
        zero |= b->source_tokens[s] == 0;
        m->tokens[s] += (double)b->source_tokens[s];
        step_tokens += b->source_tokens[s];
    }
    if (b->step == 1)
        for (int s = 0; s < m->sources; s++)
            m->share1[s] = step_tokens ? (double)b->source_tokens[s] / (double)step_tokens : 0;
    m->step_dev[m->steps++] = worst;
    m->zero_steps += zero;
    int dup = duplicate_lanes(b, scratch);
    m->dup_steps += dup > 0;
    m->dup_lanes += dup;
    m->pad_tokens += b->pad_tokens;
    m->all_tokens += (int64_t)b->rows * b->seq_len;
    unsigned char chain[2 * ORDO_DIGEST_SIZE];
    memcpy(chain, m->run_digest, ORDO_DIGEST_SIZE);
    ordo_batch_digest(b->lane_digests, b->lane_count, chain + ORDO_DIGEST_SIZE);
    ordo_sha256(chain, sizeof chain, m->run_digest);
}

/* One run of o->steps steps of `r`, measured into *m (whose step_dev
 * holds o->steps entries); returns tokens per second of the steps. */
static double run_once(const options *o, const ordo_recipe *r, result *m)
{
    ordo_recipe_info info;
    ordo_recipe_describe(r, &info);
    ordo_error err;
    double *step_dev = m->step_dev;
    memset(m, 0, sizeof *m);
    m->step_dev = step_dev;
    m->sources = info.source_count;
    double total = 0;
    for (int s = 0; s < m->sources; s++) {
        ordo_source_info si;
        if (ordo_recipe_source(r, s, &si, &err) != ORDO_OK)
            die("source", err.message);
        m->weight[s] = si.weight;
        total += si.weight;
    }
    for (int s = 0; s < m->sources; s++)
        m->weight[s] /= total;
    ordo_loader_options lo = {.rank = 0,
                              .world_size = 1,
                              .read_workers = o->workers,
                              .tokenize_workers = o->workers,
                              .lane_binding = ORDO_BINDING_LOGICAL};
    ordo_loader *l = NULL;
    if (ordo_loader_open(r, &lo, &l, &err) != ORDO_OK)
        die("open", err.message);
    unsigned char *scratch = malloc((size_t)info.lanes * ORDO_DIGEST_SIZE);
    if (!scratch)
        die("digests", "out of memory");
    ordo_batch b;
    double spent = 0;
    for (int step = 0; step < o->steps; step++) {
        double start = now();
        if (ordo_loader_next(l, &b, &err) != ORDO_OK)
            die("next", err.message);
        spent += now() - start;
        account(m, &info, &b, scratch);
    }
    unsigned char *state = NULL;
    size_t size = 0;
    if (ordo_loader_checkpoint(l, &state, &size, &err) != ORDO_OK)
        die("checkpoint", err.message);
    m->checkpoint_per_lane = (double)size / info.lanes;
    ordo_free(state);
    ordo_loader_close(l);
    free(scratch);
    return (double)m->all_tokens / spent;
}

/* Runs `c` o->runs times; every run must deliver the same batches. */
static void measure(const options *o, const recipe_case *c, result *m)
{
    ordo_recipe *r = load(c);
    double rates[MAX_RUNS];
    result again = {.step_dev = malloc((size_t)o->steps * sizeof(double))};
    m->step_dev = malloc((size_t)o->steps * sizeof(double));
    if (!again.step_dev || !m->step_dev)
        die("steps", "out of memory");
    rates[0] = run_once(o, r, m);
    for (int i = 1; i < o->runs; i++) {
        rates[i] = run_once(o, r, &again);
        if (memcmp(again.run_digest, m->run_digest, ORDO_DIGEST_SIZE) != 0)
            die(c->label, "two runs delivered different batches");
    }
    qsort(rates, (size_t)o->runs, sizeof *rates, compare_doubles);
    m->tokens_per_s =
        o->runs % 2 ? rates[o->runs / 2] : (rates[o->runs / 2 - 1] + rates[o->runs / 2]) / 2;
    free(again.step_dev);
    ordo_recipe_free(r);
}

/* The run's worst |delivered share - weight|, in percentage points. */
static double run_deviation_pp(const result *m)
{
    double total = 0, worst = 0;
    for (int s = 0; s < m->sources; s++)
        total += m->tokens[s];
    for (int s = 0; s < m->sources; s++) {
        double d = 100 * (m->tokens[s] / total - m->weight[s]);
        worst = d < 0 ? (-d > worst ? -d : worst) : (d > worst ? d : worst);
    }
    return worst;
}

/* The per-step deviation's max and p95 (nearest rank). */
static void step_quantiles(const result *m, double *max, double *p95)
{
    double *v = malloc((size_t)m->steps * sizeof *v);
    if (!v)
        die("steps", "out of memory");
    memcpy(v, m->step_dev, (size_t)m->steps * sizeof *v);
    qsort(v, (size_t)m->steps, sizeof *v, compare_doubles);
    int rank = (95 * m->steps + 99) / 100;
    *max = v[m->steps - 1];
    *p95 = v[rank > 0 ? rank - 1 : 0];
    free(v);
}

static void print_numbers(const double *v, int n)
{
    for (int s = 0; s < n; s++)
        printf("%s%.4f", s ? "," : "", v[s]);
}

/* JSON string of `text`: quotes and backslashes escaped. */
static void print_json_string(const char *text)
{
    putchar('"');
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        putchar((unsigned char)*p < 0x20 ? ' ' : *p);
    }
    putchar('"');
}

static void print_row(const recipe_case *c, const result *m)
{
    double max, p95, shares[MAX_SOURCES], total = 0;
    step_quantiles(m, &max, &p95);
    char share1[96] = "", run_share[96] = "";
    size_t n1 = 0, n2 = 0;
    for (int s = 0; s < m->sources; s++)
        total += m->tokens[s];
    for (int s = 0; s < m->sources; s++) {
        shares[s] = m->tokens[s] / total;
        n1 +=
            (size_t)snprintf(share1 + n1, sizeof share1 - n1, "%s%.2f", s ? "/" : "", m->share1[s]);
        n2 += (size_t)snprintf(run_share + n2, sizeof run_share - n2, "%s%.3f", s ? "/" : "",
                               shares[s]);
    }
    printf("%-12s %8.2f %8.2f %7.2f  %-17s %-17s %5d %5d %9.2f%% %6.1f %12.0f\n", c->label, max,
           p95, run_deviation_pp(m), share1, run_share, m->zero_steps, m->dup_steps,
           100.0 * (double)m->pad_tokens / (double)m->all_tokens, m->checkpoint_per_lane,
           m->tokens_per_s);
}

static void print_json(const options *o, const recipe_case *c, const result *m)
{
    double max, p95, shares[MAX_SOURCES], total = 0;
    step_quantiles(m, &max, &p95);
    for (int s = 0; s < m->sources; s++)
        total += m->tokens[s];
    for (int s = 0; s < m->sources; s++)
        shares[s] = m->tokens[s] / total;
    printf("{\"bench\":\"mixing\",\"recipe\":\"%s\",\"recipe_extra\":", c->label);
    print_json_string(o->extra);
    printf(",\"steps\":%d,\"weights\":[", m->steps);
    print_numbers(m->weight, m->sources);
    printf("],\"step_dev_max\":%.3f,\"step_dev_p95\":%.3f,\"run_dev_pp\":%.3f,\"run_share\":[", max,
           p95, run_deviation_pp(m));
    print_numbers(shares, m->sources);
    printf("],\"share_step1\":[");
    print_numbers(m->share1, m->sources);
    printf("],\"zero_source_steps\":%d,\"dup_digest_steps\":%d,\"dup_digest_lanes\":%lld,"
           "\"pad_tokens\":%lld,\"tokens\":%lld,\"checkpoint_bytes_per_lane\":%.2f,"
           "\"tokens_per_s\":%.0f,\"runs\":%d}\n",
           m->zero_steps, m->dup_steps, (long long)m->dup_lanes, (long long)m->pad_tokens,
           (long long)m->all_tokens, m->checkpoint_per_lane, m->tokens_per_s, o->runs);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_mixing [--dir DIR] [--demo-dir DIR] [--steps N] [--runs R] "
                    "[--mb MB] [--docs-per-frame N] [--workers N] [--recipe-extra KEYS]\n");
    exit(2);
}

static int number(const char *text, int min, int max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < min || v > max) {
        fprintf(stderr, "bench_mixing: '%s' must be a whole number from %d to %d\n", text, min,
                max);
        exit(2);
    }
    return (int)v;
}

static options parse(int argc, char **argv)
{
    options o = {NULL, NULL, "", 300, 3, 8, 4, 2};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage();
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--dir") == 0)
            o.dir = v;
        else if (strcmp(a, "--demo-dir") == 0)
            o.demo_dir = v;
        else if (strcmp(a, "--recipe-extra") == 0)
            o.extra = v;
        else if (strcmp(a, "--steps") == 0)
            o.steps = number(v, 1, 1000000);
        else if (strcmp(a, "--runs") == 0)
            o.runs = number(v, 1, MAX_RUNS);
        else if (strcmp(a, "--mb") == 0)
            o.mb = number(v, 1, 4096);
        else if (strcmp(a, "--docs-per-frame") == 0)
            o.docs_per_frame = number(v, 1, 4096);
        else if (strcmp(a, "--workers") == 0)
            o.workers = number(v, 1, 64);
        else
            usage();
    }
    if (!o.dir) {
        static char temp[] = "/tmp/ordo-bench-mixing-XXXXXX";
        if (!mkdtemp(temp))
            die("/tmp", strerror(errno));
        o.dir = own_dir = temp;
    } else if (mkdir(o.dir, 0755) != 0 && errno != EEXIST) {
        die(o.dir, strerror(errno));
    }
    return o;
}

/* The real demo corpus (Moby-Dick and the State of the Union addresses,
 * cl100k_base) in the demo recipe's shape, when --demo-dir names it. */
static int demo_case(const options *o, const char *shape, recipe_case *c)
{
    char root[PATH_MAX], globs[2][PATH_MAX + 32], tokenizer[PATH_MAX + 96];
    if (!realpath(o->demo_dir, root))
        die(o->demo_dir, strerror(errno));
    snprintf(globs[0], sizeof globs[0], "%s/moby-dick/*.jsonl.zst", root);
    snprintf(globs[1], sizeof globs[1], "%s/sotu/*.jsonl.zst", root);
    snprintf(tokenizer, sizeof tokenizer,
             "{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", \"path\": "
             "\"%s/cl100k_base.tiktoken\"}",
             root);
    c->label = "demo";
    write_recipe(o, c, "mix-demo.json", shape, tokenizer, 2,
                 (const char *const[]){"moby-dick", "sotu"},
                 (const char *const[]){globs[0], globs[1]}, (const double[]){0.5, 0.5});
    return 1;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    /* ~100x between the shortest and the longest documents */
    const source_spec pair[] = {{"short", 60, 140}, {"long", 6000, 14000}};
    const source_spec trio[] = {{"short", 60, 140}, {"medium", 600, 1400}, {"long", 6000, 14000}};
    write_corpus(&o, "pair", pair, 2, 11u);
    write_corpus(&o, "trio", trio, 3, 23u);

    const char *demo_shape = "\"seq_len\": 512, \"global_batch\": 64, \"lanes\": 64";
    const char *small_shape = "\"seq_len\": 256, \"global_batch\": 96, \"lanes\": 48";
    recipe_case cases[4];
    int n = 0;
    cases[n].label = "demo-shape";
    write_recipe(&o, &cases[n++], "mix-demo-shape.json", demo_shape, NULL, 2,
                 (const char *const[]){"short", "long"},
                 (const char *const[]){"pair/short-*.jsonl.zst", "pair/long-*.jsonl.zst"},
                 (const double[]){0.5, 0.5});
    if (o.demo_dir)
        n += demo_case(&o, demo_shape, &cases[n]);
    cases[n].label = "three-6/3/1";
    write_recipe(&o, &cases[n++], "mix-three.json", small_shape, NULL, 3,
                 (const char *const[]){"short", "medium", "long"},
                 (const char *const[]){"trio/short-*.jsonl.zst", "trio/medium-*.jsonl.zst",
                                       "trio/long-*.jsonl.zst"},
                 (const double[]){0.6, 0.3, 0.1});
    cases[n].label = "two-7/3";
    write_recipe(&o, &cases[n++], "mix-two.json", small_shape, NULL, 2,
                 (const char *const[]){"short", "long"},
                 (const char *const[]){"trio/short-*.jsonl.zst", "trio/long-*.jsonl.zst"},
                 (const double[]){0.7, 0.3});

    printf("mixing accuracy: world size 1, logical lanes, %d steps, %d workers per operator, "
           "tokens/s median of %d runs; generated corpora %d MB of text per source, %d "
           "documents a frame; recipe extra: %s\n",
           o.steps, o.workers, o.runs, o.mb, o.docs_per_frame, o.extra[0] ? o.extra : "(none)");
    printf("deviation in samples per step: |source_tokens/seq_len - w*B|, worst source; "
           "run: |token share - w| in points, worst source\n");
    printf("%-12s %8s %8s %7s  %-17s %-17s %5s %5s %10s %6s %12s\n", "recipe", "step max",
           "step p95", "run pp", "share at step 1", "run share", "zero", "dup", "pad", "ckpt/L",
           "tokens/s");
    result m[4];
    for (int i = 0; i < n; i++) {
        measure(&o, &cases[i], &m[i]);
        print_row(&cases[i], &m[i]);
        fflush(stdout);
    }
    for (int i = 0; i < n; i++) {
        print_json(&o, &cases[i], &m[i]);
        free(m[i].step_dev);
    }
    remove_created();
    for (int i = 0; i < created_count; i++)
        free((void *)created[i]);
    return 0;
}
