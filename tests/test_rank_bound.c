/* The rank-bound (standard) loader resumed at another world size: every
 * document not yet delivered is delivered once, none delivered before comes
 * again, none is skipped, checked by decoding the delivered tokens back to
 * documents. */
#include <sys/stat.h>

#include "harness.h"
#include "ordo.h"
#include "permute.h"
#include "recipe_model.h"

#define SOURCES 2
#define MAX_DOCS 700
#define CHUNK_RECORDS 3
#define SEQ_LEN 64
#define BATCH 24
#define EOT 256
#define PAD 257
#define MAX_WORLD 8
#define MAX_HEADS 64
#define MAX_SEGMENTS 3

static const int doc_counts[SOURCES] = {600, 300};

/* Document d of source s: a header naming it, then filler of uneven size. */
static void doc_text(int s, int d, char *out, size_t cap)
{
    unsigned state = (unsigned)(s * 7919 + d * 104729 + 17);
    state = state * 1103515245u + 12345u;
    int len = s == 0 ? 10 + (int)((state >> 8) % 111) : 40 + (int)((state >> 8) % 361);
    int n = snprintf(out, cap, "s%dd%d|", s, d);
    for (int i = 0; i < len && (size_t)n + 1 < cap; i++)
        out[n++] = (char)('a' + (d * 31 + i * 7 + s) % 26);
    out[n] = '\0';
}

static const char *write_corpus(void)
{
    char text[1024], path[1024];
    for (int s = 0; s < SOURCES; s++) {
        snprintf(path, sizeof path, "%s", test_path(s == 0 ? "a.jsonl" : "b.jsonl"));
        FILE *out = fopen(path, "w");
        ASSERT(out != NULL);
        for (int d = 0; d < doc_counts[s]; d++) {
            doc_text(s, d, text, sizeof text);
            fprintf(out, "{\"text\": \"%s\"}\n", text);
        }
        ASSERT(fclose(out) == 0);
    }
    const char *recipe = test_path("recipe.json");
    FILE *out = fopen(recipe, "w");
    ASSERT(out != NULL);
    fprintf(out,
            "{\"name\": \"rank-bound\", \"seed\": 7, \"seq_len\": %d, \"global_batch\": %d,"
            " \"lanes\": 24, \"flush_every\": 3, \"shuffle_window\": 0, \"chunk_records\": %d,"
            " \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": ["
            "{\"name\": \"a\", \"paths\": [\"a.jsonl\"], \"weight\": 0.5},"
            "{\"name\": \"b\", \"paths\": [\"b.jsonl\"], \"weight\": 0.5}]}\n",
            SEQ_LEN, BATCH, CHUNK_RECORDS);
    ASSERT(fclose(out) == 0);
    return recipe;
}

/* One lane's delivered tokens in one segment, row after row. */
typedef struct {
    uint32_t *tokens;
    uint8_t *doc_start;
    size_t count, cap;
} lane_stream;

static void stream_add(lane_stream *l, const uint32_t *tokens, const uint8_t *starts, size_t n)
{
    if (l->count + n > l->cap) {
        l->cap = 2 * (l->count + n);
        l->tokens = realloc(l->tokens, l->cap * sizeof *l->tokens);
        l->doc_start = realloc(l->doc_start, l->cap);
        ASSERT(l->tokens && l->doc_start);
    }
    memcpy(l->tokens + l->count, tokens, n * sizeof *tokens);
    memcpy(l->doc_start + l->count, starts, n);
    l->count += n;
}

/* One segment: W rank-bound loaders from `resume` (NULL: the start) to
 * step `last`; their lanes' streams, the merged checkpoint after `last`
 * and the global batch of the segment's first step. */
typedef struct {
    int world;
    lane_stream lanes[MAX_WORLD];
    unsigned char *state;
    size_t state_size;
    uint32_t first_batch[BATCH * SEQ_LEN];
} segment;

static void run_segment(const ordo_recipe *r, int world, const unsigned char *resume,
                        size_t resume_size, int64_t last, segment *seg)
{
    memset(seg, 0, sizeof *seg);
    seg->world = world;
    ordo_loader *loaders[MAX_WORLD];
    ordo_error err;
    for (int rank = 0; rank < world; rank++) {
        ordo_loader_options o = {.rank = rank, .world_size = world, .read_workers = 1,
                                 .tokenize_workers = 1, .lane_binding = "rank",
                                 .resume = resume, .resume_size = resume_size};
        ASSERT_OK(ordo_loader_open(r, &o, &loaders[rank], &err), &err);
    }
    for (int first = 1;; first = 0) {
        int64_t step = 0;
        for (int rank = 0; rank < world; rank++) {
            ordo_batch b;
            ASSERT_OK(ordo_loader_next(loaders[rank], &b, &err), &err);
            size_t n = (size_t)b.rows * SEQ_LEN;
            stream_add(&seg->lanes[rank], b.tokens, b.doc_start, n);
            if (first)
                memcpy(seg->first_batch + (size_t)rank * n, b.tokens, n * sizeof *b.tokens);
            step = b.step;
        }
        if (step >= last)
            break;
    }
    unsigned char *states[MAX_WORLD];
    size_t sizes[MAX_WORLD];
    for (int rank = 0; rank < world; rank++) {
        ASSERT_OK(ordo_loader_checkpoint(loaders[rank], &states[rank], &sizes[rank], &err), &err);
        ordo_loader_close(loaders[rank]);
    }
    ASSERT_OK(ordo_checkpoint_merge((const unsigned char *const *)states, sizes, world,
                                    &seg->state, &seg->state_size, &err),
              &err);
    for (int rank = 0; rank < world; rank++)
        ordo_free(states[rank]);
}

static void segment_free(segment *seg)
{
    for (int i = 0; i < seg->world; i++) {
        free(seg->lanes[i].tokens);
        free(seg->lanes[i].doc_start);
    }
    ordo_free(seg->state);
}

/* What decoding found: complete deliveries per document, and per source
 * and lane of the second segment the pass-0 position of the last chunk it
 * delivered from. */
typedef struct {
    int count[SOURCES][MAX_DOCS];
    int open[SOURCES][MAX_DOCS]; /* begun at the end of the second segment */
    char heads[MAX_HEADS][1024]; /* documents cut at the end of a segment before the last */
    int at_flush;                /* lanes whose segment ended right after a flush */
    int joined, unjoined;        /* tails of the second segment joined to a head, or not */
    long long frontier[SOURCES][MAX_WORLD];
    uint64_t position[SOURCES][MAX_DOCS / CHUNK_RECORDS + 1]; /* pass-0 position of a chunk */
} tally;

/* The document whose text is exactly `text`, or 0. */
static int identify(const char *text, int *s, int *d)
{
    char want[1024];
    if (sscanf(text, "s%dd%d|", s, d) != 2 || *s < 0 || *s >= SOURCES || *d < 0 ||
        *d >= doc_counts[*s])
        return 0;
    doc_text(*s, *d, want, sizeof want);
    return strcmp(want, text) == 0;
}

/* Splits a lane's stream into pieces (padding left out): a piece from a
 * document start to its end-of-text is a delivery; in a resumed segment a
 * piece without a start is the rest of a document cut at the resume; the
 * last piece without an end is a document still open. */
static void decode_lane(const lane_stream *l, int resumed, int last, int lane, tally *t)
{
    char piece[1024];
    size_t n = 0;
    int have = 0, tail = 0;
    for (size_t i = 0; i < l->count; i++) {
        uint32_t token = l->tokens[i];
        if (token == PAD)
            continue;
        if (l->doc_start[i]) {
            ASSERT(!have); /* a document interrupted by another in one lane */
            have = 1, tail = 0, n = 0;
        } else if (!have) {
            ASSERT(resumed); /* only a resumed lane takes up documents mid-way */
            have = 1, tail = 1, n = 0;
        }
        if (token != EOT) {
            ASSERT(token < 256 && n + 1 < sizeof piece);
            piece[n++] = (char)token;
            continue;
        }
        piece[n] = '\0';
        char joined[2048];
        snprintf(joined, sizeof joined, "%s", piece);
        if (tail) {
            int found = 0;
            for (int h = 0; h < MAX_HEADS && !found; h++) {
                char candidate[2048];
                snprintf(candidate, sizeof candidate, "%s%s", t->heads[h], piece);
                int s, d;
                if (t->heads[h][0] && identify(candidate, &s, &d)) {
                    snprintf(joined, sizeof joined, "%s", candidate);
                    t->heads[h][0] = '\0';
                    found = 1;
                }
            }
            found ? t->joined++ : t->unjoined++;
        }
        int s, d;
        if (identify(joined, &s, &d)) {
            t->count[s][d]++;
            if (last) {
                long long p = (long long)t->position[s][d / CHUNK_RECORDS];
                if (p > t->frontier[s][lane])
                    t->frontier[s][lane] = p;
            }
        }
        have = 0;
    }
    if (!last && l->count > 0 && l->tokens[l->count - 1] == PAD)
        t->at_flush++;
    if (have && !last) {
        piece[n] = '\0';
        int h = 0;
        while (h < MAX_HEADS && t->heads[h][0])
            h++;
        ASSERT(h < MAX_HEADS);
        snprintf(t->heads[h], sizeof t->heads[h], "%s", piece);
    } else if (have && !tail) {
        int s, d;
        piece[n] = '\0';
        if (sscanf(piece, "s%dd%d|", &s, &d) == 2 && s >= 0 && s < SOURCES && d >= 0 &&
            d < doc_counts[s])
            t->open[s][d] = 1;
    }
}

/* Pass-0 stream position of every chunk (the seeded chunk order). */
static void chunk_positions(const ordo_recipe *r, tally *t)
{
    for (int s = 0; s < SOURCES; s++) {
        const ordo__source *src = &r->sources[s];
        ASSERT_EQ_INT(src->chunk_count, (doc_counts[s] + CHUNK_RECORDS - 1) / CHUNK_RECORDS);
        ordo__permutation p;
        ordo__permutation_init(&p, src->chunk_count, r->seed, "chunk-order", (uint64_t)s, 0);
        for (uint64_t at = 0; at < src->chunk_count; at++)
            t->position[s][src->chunks[ordo__permutation_at(&p, at)].chunk] = at;
    }
}

typedef struct {
    int duplicated, skipped, half, joined, below_frontier, at_flush;
} findings;

/* Runs the segments of `plan` (world size, last step; 0 ends it), each
 * resumed from the one before, and decodes everything they delivered. */
static findings resume_and_decode(const ordo_recipe *r, const int plan[][2])
{
    segment segs[MAX_SEGMENTS], straight;
    int n = 0;
    for (; n < MAX_SEGMENTS && plan[n][0]; n++)
        run_segment(r, plan[n][0], n ? segs[n - 1].state : NULL, n ? segs[n - 1].state_size : 0,
                    plan[n][1], &segs[n]);
    /* The contrast remains: the resumed batches are not the uninterrupted
     * run's from the step after the first resume. */
    run_segment(r, plan[0][0], segs[0].state, segs[0].state_size, plan[0][1] + 1, &straight);
    ASSERT(memcmp(segs[1].first_batch, straight.first_batch, sizeof straight.first_batch) != 0);
    tally *t = calloc(1, sizeof *t);
    ASSERT(t != NULL);
    chunk_positions(r, t);
    for (int s = 0; s < SOURCES; s++)
        for (int l = 0; l < MAX_WORLD; l++)
            t->frontier[s][l] = -1;
    for (int i = 0; i < n; i++)
        for (int l = 0; l < segs[i].world; l++)
            decode_lane(&segs[i].lanes[l], i > 0, i == n - 1, l, t);
    findings f = {0};
    for (int h = 0; h < MAX_HEADS; h++)
        f.half += t->heads[h][0] != '\0';
    f.half += t->unjoined;
    f.joined = t->joined;
    f.at_flush = t->at_flush;
    int last_world = segs[n - 1].world;
    for (int s = 0; s < SOURCES; s++) {
        long long frontier = t->frontier[s][0];
        for (int l = 1; l < last_world; l++)
            if (t->frontier[s][l] < frontier)
                frontier = t->frontier[s][l];
        for (int d = 0; d < doc_counts[s]; d++) {
            int below = (long long)t->position[s][d / CHUNK_RECORDS] < frontier;
            f.below_frontier += below;
            f.duplicated += t->count[s][d] > 1;
            f.skipped += below && t->count[s][d] == 0 && !t->open[s][d];
        }
    }
    printf("  ");
    for (int i = 0; i < n; i++)
        printf("%sW %d to step %d", i ? " -> " : "", plan[i][0], plan[i][1]);
    printf(": %d duplicated, %d skipped, %d half-delivered, %d joined, %d lanes cut right "
           "after a flush (%d documents below the frontier)\n",
           f.duplicated, f.skipped, f.half, f.joined, f.at_flush, f.below_frontier);
    free(t);
    for (int i = 0; i < n; i++)
        segment_free(&segs[i]);
    segment_free(&straight);
    return f;
}

TEST(rank_bound_resume_delivers_each_document_once)
{
    const char *path = write_corpus();
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    static const int plans[][MAX_SEGMENTS + 1][2] = {
        {{6, 3}, {3, 24}},  {{6, 7}, {3, 24}},  {{6, 12}, {3, 26}},         {{4, 5}, {2, 24}},
        {{4, 9}, {8, 24}},  {{4, 2}, {8, 20}},  {{6, 1}, {3, 20}},          {{6, 4}, {3, 10}, {4, 24}},
        {{4, 6}, {8, 11}, {2, 24}}, {{6, 10}, {4, 13}, {8, 24}}};
    findings total = {0};
    int covered = 1;
    for (size_t i = 0; i < sizeof plans / sizeof *plans; i++) {
        findings f = resume_and_decode(r, plans[i]);
        total.at_flush += f.at_flush;
        total.duplicated += f.duplicated;
        total.skipped += f.skipped;
        total.half += f.half;
        total.joined += f.joined;
        covered &= f.below_frontier > 100; /* each check covered much of the corpus */
    }
    ASSERT_EQ_INT(total.duplicated, 0);
    ASSERT_EQ_INT(total.skipped, 0);
    ASSERT_EQ_INT(total.half, 0);
    ASSERT(covered);
    ASSERT(total.joined > 0);   /* documents cut at a resume were finished after it */
    ASSERT(total.at_flush > 0); /* and lanes cut right after a flush lost nothing */
    ordo_recipe_free(r);
}
