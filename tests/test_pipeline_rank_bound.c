/* The rank-bound (standard) loader resumed at another world size: every
 * document not yet delivered is delivered once, none delivered before comes
 * again, none is skipped, checked by decoding the delivered tokens back to
 * documents. */
#include <sys/stat.h>

#include "corpus.h"
#include "fixtures.h"
#include "harness.h"
#include "testing.h"
#include "ordo.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

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
    for (int i = 0; i < len && (size_t)n + 1 < cap; i++) {
        state = state * 1103515245u + 12345u; /* letters all but unique by 8 */
        out[n++] = (char)('a' + (state >> 16) % 26);
    }
    out[n] = '\0';
}

static const char *write_corpus(int shuffle_window)
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
            " \"lanes\": 24, \"flush_every\": 3, \"shuffle\": %s, \"chunk_records\": %d,"
            " \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": ["
            "{\"name\": \"a\", \"paths\": [\"a.jsonl\"], \"weight\": 0.5},"
            "{\"name\": \"b\", \"paths\": [\"b.jsonl\"], \"weight\": 0.5}]}\n",
            SEQ_LEN, BATCH, shuffle_window ? "true" : "false", CHUNK_RECORDS);
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
        ordo_loader_options o = {.rank = rank,
                                 .world_size = world,
                                 .read_workers = 1,
                                 .tokenize_workers = 1,
                                 .lane_binding = ORDO_BINDING_RANK,
                                 .resume = resume,
                                 .resume_size = resume_size};
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
    ASSERT_OK(ordo_checkpoint_merge((const unsigned char *const *)states, sizes, world, &seg->state,
                                    &seg->state_size, &err),
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
    const char *path = write_corpus(0);
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    static const int plans[][MAX_SEGMENTS + 1][2] = {
        {{6, 3}, {3, 24}},           {{6, 7}, {3, 24}},          {{6, 12}, {3, 26}},
        {{4, 5}, {2, 24}},           {{4, 9}, {8, 24}},          {{4, 2}, {8, 20}},
        {{6, 1}, {3, 20}},           {{6, 4}, {3, 10}, {4, 24}}, {{4, 6}, {8, 11}, {2, 24}},
        {{6, 10}, {4, 13}, {8, 24}}, {{6, 5}, {3, 11}, {3, 24}}};
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

/* ---- with a shuffle window: every token of every document once ---- */

#define NGRAM 8
#define INDEX_SIZE (1u << 18)
#define MAX_SHORT 4096

/* Where every NGRAM-letter run of the corpus is (documents end in '\n',
 * standing for end-of-text): s, d, offset, or ambiguous. */
typedef struct {
    uint64_t key;
    int s, d, at, used; /* used: 1 once, 2 ambiguous */
} gram;

typedef struct {
    char text[SOURCES][MAX_DOCS][1024];
    int len[SOURCES][MAX_DOCS];
    unsigned char *cover[SOURCES][MAX_DOCS]; /* deliveries of each token */
    gram *index;
    char shorts[MAX_SHORT][NGRAM];
    int short_len[MAX_SHORT], short_count;
    int unlocated;
    /* per lane of the last segment and source: pass-0 positions of the
     * chunks it delivered from, as a bitmap */
    unsigned char touched[MAX_WORLD][SOURCES][MAX_DOCS / CHUNK_RECORDS + 1];
    uint64_t position[SOURCES][MAX_DOCS / CHUNK_RECORDS + 1];
} coverage;

static uint64_t gram_key(const char *p)
{
    uint64_t k = 0;
    memcpy(&k, p, NGRAM);
    return k;
}

static gram *gram_slot(coverage *c, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 46) % INDEX_SIZE;
    while (c->index[i].used && c->index[i].key != key)
        i = (i + 1) % INDEX_SIZE;
    return &c->index[i];
}

static coverage *coverage_new(const ordo_recipe *r)
{
    coverage *c = calloc(1, sizeof *c);
    ASSERT(c != NULL);
    c->index = calloc(INDEX_SIZE, sizeof *c->index);
    ASSERT(c->index != NULL);
    for (int s = 0; s < SOURCES; s++)
        for (int d = 0; d < doc_counts[s]; d++) {
            doc_text(s, d, c->text[s][d], sizeof c->text[s][d] - 1);
            strcat(c->text[s][d], "\n");
            int n = c->len[s][d] = (int)strlen(c->text[s][d]);
            c->cover[s][d] = calloc((size_t)n, 1);
            for (int i = 0; i + NGRAM <= n; i++) {
                gram *g = gram_slot(c, gram_key(c->text[s][d] + i));
                if (g->used)
                    g->used = 2;
                else
                    *g = (gram){gram_key(c->text[s][d] + i), s, d, i, 1};
            }
        }
    tally t; /* only its chunk positions */
    chunk_positions(r, &t);
    memcpy(c->position, t.position, sizeof c->position);
    return c;
}

static void coverage_free(coverage *c)
{
    for (int s = 0; s < SOURCES; s++)
        for (int d = 0; d < doc_counts[s]; d++)
            free(c->cover[s][d]);
    free(c->index);
    free(c);
}

static void keep_short(coverage *c, const char *piece, int n)
{
    ASSERT(c->short_count < MAX_SHORT && n < NGRAM);
    memcpy(c->shorts[c->short_count], piece, (size_t)n);
    c->short_len[c->short_count++] = n;
}

/* Where a run of text that begins a document part is: by its header when
 * it starts a document, else by its first NGRAM letters. 0: unknown. */
static int locate(const coverage *c, const char *piece, int n, int starts, int *s, int *d, int *at)
{
    if (starts && sscanf(piece, "s%dd%d|", s, d) == 2 && *s >= 0 && *s < SOURCES && *d >= 0 &&
        *d < doc_counts[*s] && memchr(piece, '|', (size_t)n)) {
        *at = 0;
        return 1;
    }
    if (n < NGRAM)
        return 0;
    const gram *g = gram_slot((coverage *)c, gram_key(piece));
    if (g->used != 1)
        return 0;
    *s = g->s, *d = g->d, *at = g->at;
    return 1;
}

/* Places the pieces of one run of a sample (from a row's or document's
 * start to an end-of-text, padding or the row's end) in their documents.
 * A run may join parts of two documents (a re-shard resumes a document
 * mid-way, without a start): each part is matched as far as it goes;
 * parts too short to place are kept aside to fill gaps. */
static void place(coverage *c, const char *piece, int n, int starts, int lane, int last)
{
    while (n > 0) {
        int s, d, at, m = 0;
        if (locate(c, piece, n, starts, &s, &d, &at)) {
            while (m < n && at + m < c->len[s][d] && c->text[s][d][at + m] == piece[m])
                m++;
            for (int i = 0; i < m; i++)
                c->cover[s][d][at + i]++;
            if (last && m > 0)
                c->touched[lane][s][d / CHUNK_RECORDS] = 1;
        }
        if (m == 0) { /* a part too short to place, then one that is placed */
            while (++m < n && !locate(c, piece + m, n - m, 0, &s, &d, &at))
                ;
            if (m < NGRAM)
                keep_short(c, piece, m);
            else
                c->unlocated++;
        }
        piece += m, n -= m, starts = 0;
    }
}

/* Cuts a lane's rows into pieces: from a row's start or a document's
 * start to an end-of-text, padding or the row's end. */
static void cover_lane(coverage *c, const lane_stream *l, int lane, int last)
{
    char piece[SEQ_LEN + 1];
    int n = 0, starts = 0;
    for (size_t i = 0; i <= l->count; i++) {
        int row_start = i % SEQ_LEN == 0;
        int boundary = i == l->count || row_start || l->doc_start[i] || l->tokens[i] == PAD;
        if (boundary && n > 0)
            place(c, piece, n, starts, lane, last);
        if (boundary)
            n = 0, starts = i < l->count && l->doc_start[i];
        if (i == l->count || l->tokens[i] == PAD)
            continue;
        piece[n++] = l->tokens[i] == EOT ? '\n' : (char)l->tokens[i];
        if (l->tokens[i] == EOT) {
            place(c, piece, n, starts, lane, last);
            n = 0, starts = 0;
        }
    }
}

/* Per source, the lowest position every lane of the last segment has
 * left behind by more than a flush epoch (its last flush_every + 1
 * chunks may still be in its shuffle window). */
static long long settled(const coverage *c, int source, int world, int flush_every)
{
    long long lowest = -1;
    for (int l = 0; l < world; l++) {
        int skip = flush_every + 1;
        long long p = -1;
        for (long long at = MAX_DOCS / CHUNK_RECORDS; at >= 0 && p < 0; at--) {
            int hit = 0;
            for (int k = 0; k <= MAX_DOCS / CHUNK_RECORDS; k++)
                hit |= c->touched[l][source][k] && (long long)c->position[source][k] == at;
            if (hit && skip-- == 0)
                p = at;
        }
        if (l == 0 || p < lowest)
            lowest = p;
    }
    return lowest;
}

/* Tiles text[from, end) with unused short pieces, trying the longest
 * first and backtracking; marks the pieces used and returns how many, or
 * -1 (nothing marked) when no tiling exists. */
static int fill_gap(coverage *c, const char *text, int from, int end, int depth)
{
    if (from == end)
        return 0;
    if (depth > 64)
        return -1;
    int tried[MAX_SHORT], n = 0;
    for (int k = 0; k < c->short_count; k++)
        if (c->short_len[k] > 0 && c->short_len[k] <= end - from &&
            memcmp(c->shorts[k], text + from, (size_t)c->short_len[k]) == 0)
            tried[n++] = k;
    for (int a = 0; a < n; a++) /* longest first */
        for (int b = a + 1; b < n; b++)
            if (c->short_len[tried[b]] > c->short_len[tried[a]]) {
                int t = tried[a];
                tried[a] = tried[b];
                tried[b] = t;
            }
    for (int a = 0; a < n; a++) {
        int k = tried[a], len = c->short_len[k];
        c->short_len[k] = -len; /* used, for now */
        int rest = fill_gap(c, text, from + len, end, depth + 1);
        if (rest >= 0)
            return rest + 1;
        c->short_len[k] = len;
    }
    return -1;
}

TEST(rank_bound_resume_with_a_shuffle_window_delivers_each_token_once)
{
    const char *path = write_corpus(5);
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    static const int plans[][MAX_SEGMENTS + 1][2] = {
        {{6, 3}, {3, 24}},         {{6, 12}, {3, 26}},         {{4, 5}, {2, 24}},
        {{4, 9}, {8, 24}},         {{6, 4}, {3, 10}, {4, 24}}, {{4, 6}, {8, 11}, {2, 24}},
        {{6, 5}, {3, 11}, {3, 24}}};
    int failures = 0;
    for (size_t p = 0; p < sizeof plans / sizeof *plans; p++) {
        segment segs[MAX_SEGMENTS];
        int n = 0;
        for (; n < MAX_SEGMENTS && plans[p][n][0]; n++)
            run_segment(r, plans[p][n][0], n ? segs[n - 1].state : NULL,
                        n ? segs[n - 1].state_size : 0, plans[p][n][1], &segs[n]);
        coverage *c = coverage_new(r);
        for (int i = 0; i < n; i++)
            for (int l = 0; l < segs[i].world; l++)
                cover_lane(c, &segs[i].lanes[l], l, i == n - 1);
        int twice = 0, missing = 0, settled_docs = 0, filled = 0;
        for (int s = 0; s < SOURCES; s++) {
            long long frontier = settled(c, s, segs[n - 1].world, 3);
            for (int d = 0; d < doc_counts[s]; d++) {
                int below = (long long)c->position[s][d / CHUNK_RECORDS] < frontier;
                settled_docs += below;
                for (int i = 0; i < c->len[s][d]; i++) {
                    twice += c->cover[s][d][i] > 1;
                    if (!below || c->cover[s][d][i])
                        continue;
                    int end = i; /* a gap: one short piece must fill it */
                    while (end < c->len[s][d] && !c->cover[s][d][end])
                        end++;
                    /* short pieces that tile it exactly (searched with
                     * backtracking: a greedy choice can take a piece another
                     * tiling needs, e.g. "s0d"+"14" for "s"+"0d14") */
                    int used = fill_gap(c, c->text[s][d], i, end, 0);
                    if (used < 0)
                        missing += end - i;
                    else
                        filled += used;
                    i = end - 1;
                }
            }
        }
        printf("  plan %zu: %d tokens delivered twice, %d missing, %d pieces unplaced, %d short "
               "pieces fill gaps (%d documents settled)\n",
               p, twice, missing, c->unlocated, filled, settled_docs);
        failures += twice + missing + c->unlocated + (settled_docs < 80);
        coverage_free(c);
        for (int i = 0; i < n; i++)
            segment_free(&segs[i]);
    }
    ASSERT_EQ_INT(failures, 0);
    ordo_recipe_free(r);
}

/* A rank-bound state with the given units of its one source (base 10). */
static size_t units_state(const uint64_t *units, int count, unsigned char *out)
{
    uint64_t head[] = {5, 1, 0x1234, 3, 2, 1, 10, 2, 0, 1, 4, 3, 90, 1, 1, 5, 3, 80};
    size_t n = 0;
    uint64_t values[64];
    memcpy(values, head, sizeof head);
    size_t v = sizeof head / sizeof *head;
    values[v++] = (uint64_t)count;
    for (int i = 0; i < 3 * count; i++)
        values[v++] = units[i];
    for (size_t i = 0; i < v; i++) {
        uint64_t x = values[i];
        do {
            out[n++] = (unsigned char)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
            x >>= 7;
        } while (x);
    }
    return n;
}

TEST(checkpoint_units_must_ascend_below_the_base)
{
    /* each unit: distance from the previous position (the first: from -1),
     * tokens skipped, end (0: the chunk's end) */
    static const struct {
        uint64_t units[9];
        int count;
        const char *error;
    } cases[] = {
        {{4, 17, 30, 0, 40, 0, 2, 0, 0}, 3, NULL},     /* 3 [17,30), 3 [40,end), 5 */
        {{0, 0, 0}, 1, "unit 0 of source 0"},          /* before position 0 */
        {{11, 0, 0}, 1, "not below the base 10"},      /* position 10: the base */
        {{4, 9, 9}, 1, "empty"},                       /* [9, 9) */
        {{4, 0, 0, 0, 5, 0}, 2, "unit 1 of source 0"}, /* after a unit to the chunk's end */
        {{4, 10, 20, 0, 15, 0}, 2, "out of order"},    /* overlaps [10, 20) */
        {{4, 0, 0, UINT64_MAX, 0, 0}, 2, "out of order"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char data[256];
        size_t n = units_state(cases[i].units, cases[i].count, data);
        ordo_error err;
        int lanes = 0;
        ordo_status status = ordo_checkpoint_describe(data, n, &lanes, NULL, &err);
        if (!cases[i].error) {
            ASSERT_OK(status, &err);
            ASSERT_EQ_INT(lanes, 2);
            continue;
        }
        ASSERT_STATUS(status, ORDO_INVALID, &err);
        ASSERT_CONTAINS(err.message, cases[i].error);
    }
    /* A count beyond the bound is refused before anything is allocated. */
    unsigned char data[256];
    size_t n = units_state(NULL, 0, data);
    data[n - 1] = 0xff, data[n++] = 0xff, data[n++] = 0xff, data[n++] = 0x7f;
    ordo_error err;
    ASSERT_STATUS(ordo_checkpoint_describe(data, n, NULL, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "units of source 0 (at most");
}

/* Rewrites run 1's checkpoint at `step` with lane `lane` claiming
 * `change` more delivered samples; lane -1: the first whose count is not
 * at a bound (more than a step's samples). Returns the lane. */
static int tamper_delivered(const char *db, int64_t step, int lane, int change)
{
    ordo_ledger *ledger = NULL;
    ordo_checkpoint c;
    ordo__state s;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, 0, &ledger, &err), &err);
    ASSERT_OK(ordo_checkpoint_get(ledger, 1, step, &c, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_OK(ordo__state_decode(c.state, c.state_size, &s, &err), &err);
    for (uint64_t l = 0; lane < 0 && l < s.lane_count; l++)
        if (s.lanes[l].delivered > (uint64_t)(BATCH / s.stride) + 1)
            lane = (int)l;
    ASSERT(lane >= 0);
    s.lanes[lane].delivered += (uint64_t)(int64_t)change;
    unsigned char *data = NULL;
    size_t size = 0;
    ASSERT_OK(ordo__state_encode(&s, &data, &size, &err), &err);
    char *sql = malloc(2 * size + 128);
    ASSERT(sql != NULL);
    int n = sprintf(sql, "UPDATE checkpoints SET lane_state = X'");
    for (size_t i = 0; i < size; i++)
        n += sprintf(sql + n, "%02x", data[i]);
    sprintf(sql + n, "' WHERE run_id = 1 AND step = %lld", (long long)step);
    fixture_sql(db, sql);
    free(sql);
    free(data);
    ordo__state_free(&s);
    ordo_checkpoint_free(&c);
    return lane;
}

/* The samples a re-sharding resume replays to find what each rank
 * delivered must hash to the lane digests the ledger recorded: a
 * checkpoint claiming one sample more or less is refused naming the step
 * and the lane, as at the same world size. */
TEST(rank_bound_reshard_checks_the_replay_against_the_ledger)
{
    const char *recipe = corpus_kept(write_corpus(5));
    char db[1024];
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "rank", "--world-size", "4", "--steps",
                   "20", "--quiet", "--lane-binding", "rank", "--checkpoint-every", "10"),
                 0));
    for (int change = -1; change <= 1; change += 2) {
        int lane = tamper_delivered(db, 10, -1, change);
        cli_result r =
            run_ordo(NULL, A("resume", "rank", "--db", db, "--from-step", "10", "--as", "rank-w8",
                             "--world-size", "8", "--steps", "20", "--quiet"));
        if (r.code != 1)
            fprintf(stderr, "  delivered %+d: exit %d\n", change, r.code);
        ASSERT_EQ_INT(r.code, 1);
        ASSERT_CONTAINS(r.err, "resume refused: the checkpoint at step 10 does not reproduce "
                               "step");
        char named[32];
        snprintf(named, sizeof named, "of lane %d", lane);
        ASSERT_CONTAINS(r.err, named);
        cli_result_free(&r);
        tamper_delivered(db, 10, lane, -change);
    }
    free(ordo_ok(A("resume", "rank", "--db", db, "--from-step", "10", "--as", "rank-w8",
                   "--world-size", "8", "--steps", "20", "--quiet"),
                 0));
}
