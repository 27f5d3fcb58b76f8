/* "labels": "shifted": samples of seq_len + 1 tokens, so that a trainer's
 * labels are the input shifted by one with no token of the stream lost. */
#include <string.h>

#include "corpus.h"
#include "ordo.h"
#include "testing.h"

/* A recipe file `name` of one source over the data folder, with `labels`
 * ("none", "shifted", or NULL for no key) and the given shape. */
static const char *labels_recipe(const char *name, const char *labels, int lanes, int batch,
                                 int seq_len, int shuffle)
{
    char extra[128] = "";
    if (labels)
        snprintf(extra, sizeof extra, "\"labels\": \"%s\", ", labels);
    char body[1024];
    snprintf(body, sizeof body,
             "{%s\"name\": \"l\", \"seed\": 77, \"seq_len\": %d, \"global_batch\": %d, "
             "\"lanes\": %d, \"flush_every\": 3, \"shuffle\": %s, \"tokenizer\": {\"kind\": "
             "\"bytes\"}, \"sources\": [{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
             "\"weight\": 1}]}",
             extra, seq_len, batch, lanes, shuffle ? "true" : "false");
    test_write_file(test_path(name), body, strlen(body));
    return corpus_kept(test_path(name));
}

static ordo_recipe *indexed(const char *path)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    return r;
}

/* The first `steps` batches' tokens of rank 0 of `world`, row after row. */
static uint32_t *stream(const ordo_recipe *r, int world, int steps, size_t *count, int *width)
{
    ordo_loader_options o = {.world_size = world, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    uint32_t *out = NULL;
    size_t n = 0;
    for (int s = 0; s < steps; s++) {
        ordo_batch b;
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        size_t cells = (size_t)b.rows * (size_t)b.sample_len;
        out = realloc(out, (n + cells) * sizeof *out);
        ASSERT(out != NULL);
        memcpy(out + n, b.tokens, cells * sizeof *out);
        n += cells;
        *width = b.sample_len;
    }
    ordo_loader_close(l);
    *count = n;
    return out;
}

/* A shifted recipe packs seq_len + 1 tokens per sample: exactly the
 * tokens a recipe of seq_len + 1 without labels packs (nothing lost or
 * doubled between rows), under another id; "none" is the default and
 * keeps the recipe's id. */
TEST(labels_shifted_packs_seq_len_plus_one_tokens)
{
    corpus_jsonl("data", "doc", 2, 40, 1, 70, 31);
    ordo_recipe *shifted = indexed(labels_recipe("shifted.json", "shifted", 1, 2, 16, 0));
    ordo_recipe *wide = indexed(labels_recipe("wide.json", NULL, 1, 2, 17, 0));
    ordo_recipe *plain = indexed(labels_recipe("plain.json", NULL, 1, 2, 16, 0));
    ordo_recipe *none = indexed(labels_recipe("none.json", "none", 1, 2, 16, 0));
    ASSERT_EQ_STR(ordo_recipe_id(plain), ordo_recipe_id(none));
    ASSERT(strstr(ordo_recipe_canonical(plain), "labels") == NULL);
    ASSERT_CONTAINS(ordo_recipe_canonical(shifted), "\"labels\":\"shifted\"");
    ASSERT(strcmp(ordo_recipe_id(shifted), ordo_recipe_id(plain)) != 0);
    ordo_recipe_info info;
    ordo_recipe_describe(shifted, &info);
    ASSERT_EQ_INT(info.seq_len, 16);
    ASSERT_EQ_INT(info.sample_len, 17);
    ASSERT_EQ_INT(info.labels_shifted, 1);
    ordo_recipe_describe(plain, &info);
    ASSERT_EQ_INT(info.sample_len, 16);
    ASSERT_EQ_INT(info.labels_shifted, 0);
    size_t ns = 0, nw = 0, np = 0;
    int ws = 0, ww = 0, wp = 0;
    uint32_t *s = stream(shifted, 1, 60, &ns, &ws);
    uint32_t *w = stream(wide, 1, 60, &nw, &ww);
    uint32_t *p = stream(plain, 1, 60, &np, &wp);
    ASSERT_EQ_INT(ws, 17);
    ASSERT_EQ_INT(ww, 17);
    ASSERT_EQ_INT(wp, 16);
    ASSERT_EQ_INT(ns, 60 * 2 * 17);
    ASSERT_EQ_INT(ns, nw);
    ASSERT(memcmp(s, w, ns * sizeof *s) == 0);
    ASSERT_EQ_INT(np, 60 * 2 * 16);
    free(s);
    free(w);
    free(p);
    ordo_recipe_free(shifted);
    ordo_recipe_free(wide);
    ordo_recipe_free(plain);
    ordo_recipe_free(none);
}

/* Shifted samples stay elastic: rank 1 of 2 holds the same rows as the
 * second half of the lanes at W = 1, and a checkpoint resumes at W = 4
 * with the uninterrupted stream. */
TEST(labels_shifted_is_elastic_and_resumes)
{
    corpus_jsonl("data", "doc", 3, 50, 1, 90, 32);
    ordo_recipe *r = indexed(labels_recipe("recipe.json", "shifted", 4, 8, 12, 1));
    ordo_error err;
    ordo_loader_options one = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *full = NULL, *part = NULL;
    ASSERT_OK(ordo_loader_open(r, &one, &full, &err), &err);
    ordo_loader_options two = {
        .rank = 1, .world_size = 2, .read_workers = 2, .tokenize_workers = 1};
    ASSERT_OK(ordo_loader_open(r, &two, &part, &err), &err);
    unsigned char expected[10][4][32];
    unsigned char *state = NULL;
    size_t size = 0;
    for (int step = 0; step < 10; step++) {
        ordo_batch a, b;
        ASSERT_OK(ordo_loader_next(full, &a, &err), &err);
        ASSERT_OK(ordo_loader_next(part, &b, &err), &err);
        ASSERT_EQ_INT(a.sample_len, 13);
        ASSERT_EQ_INT(a.seq_len, 12);
        ASSERT_EQ_INT(b.rows * 2, a.rows);
        size_t half = (size_t)b.rows * 13;
        ASSERT(memcmp(a.tokens + half, b.tokens, half * sizeof *b.tokens) == 0);
        ASSERT(memcmp(a.doc_start + half, b.doc_start, half) == 0);
        memcpy(expected[step], a.lane_digests, 4 * 32);
        if (step == 3)
            ASSERT_OK(ordo_loader_checkpoint(full, &state, &size, &err), &err);
    }
    ordo_loader_close(full);
    ordo_loader_close(part);
    for (int rank = 0; rank < 4; rank++) {
        ordo_loader_options four = {.rank = rank,
                                    .world_size = 4,
                                    .read_workers = 1,
                                    .tokenize_workers = 2,
                                    .resume = state,
                                    .resume_size = size};
        ordo_loader *l = NULL;
        ASSERT_OK(ordo_loader_open(r, &four, &l, &err), &err);
        for (int step = 4; step < 10; step++) {
            ordo_batch b;
            ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
            ASSERT_EQ_INT(b.step, step + 1);
            ASSERT(memcmp(b.lane_digests, expected[step][rank], 32) == 0);
        }
        ordo_loader_close(l);
    }
    ordo_free(state);
    ordo_recipe_free(r);
}

/* Anything but "none" or "shifted" is refused, saying what is allowed. */
TEST(labels_bad_values_are_refused)
{
    corpus_jsonl("data", "doc", 1, 10, 5, 40, 33);
    const char *bad[] = {"\"Shifted\"", "\"\"", "1", "true", "null", "[\"shifted\"]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"labels\": %s, \"seed\": 1, \"seq_len\": 8, \"global_batch\": 2, "
                 "\"lanes\": 1, \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": [{\"name\": "
                 "\"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}",
                 bad[i]);
        ordo_recipe *r = NULL;
        ordo_error err;
        ASSERT_STATUS(ordo_recipe_parse(body, strlen(body), test_path("."), 0, &r, &err),
                      ORDO_INVALID, &err);
        ASSERT_CONTAINS(err.message, "'labels' must be \"none\"");
        ASSERT_CONTAINS(err.message, "\"shifted\" (seq_len + 1 tokens");
        ASSERT(r == NULL);
    }
}
