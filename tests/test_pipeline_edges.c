/* The loader at its edges: spent loaders, odd recipe shapes, the exact
 * tokens it packs, permutations, resumes across epochs, checkpoint states
 * that do not fit. */
#include <jansson.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include <zstd.h>

#include "corpus.h"
#include "ordo.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static ordo_recipe *indexed(const char *path)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    return r;
}

/* Overwrites every '{' of a file with '[' (same size, broken JSON). */
static void break_json(const char *name)
{
    size_t size = 0;
    char *data = test_read_file(test_path(name), &size);
    ASSERT(data != NULL);
    for (size_t i = 0; i < size; i++)
        if (data[i] == '{')
            data[i] = '[';
    test_write_file(test_path(name), data, size);
    free(data);
}

TEST(loader_error_mid_batch_spends_the_loader)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 60, 11);
    ordo_recipe *r = indexed(corpus_one_source(4, 8, 16, 2, 2));
    break_json("data/doc-0.jsonl");
    break_json("data/doc-1.jsonl");
    ordo_loader_options o = {.rank = 0, .world_size = 1, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *l = NULL;
    ordo_error err, again;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    ordo_batch b;
    ordo_status first = ordo_loader_next(l, &b, &err);
    ASSERT(first != ORDO_OK);
    ASSERT_CONTAINS(err.message, "data/doc-");
    ASSERT_CONTAINS(err.message, "byte");
    /* Every later call repeats the error: no batch, no checkpoint. */
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ_INT(ordo_loader_next(l, &b, &again), first);
        ASSERT_EQ_STR(again.message, err.message);
        ASSERT_EQ_INT(b.rows, 0);
    }
    unsigned char *state = (unsigned char *)"x";
    size_t size = 7;
    ASSERT_EQ_INT(ordo_loader_checkpoint(l, &state, &size, &again), first);
    ASSERT(state == NULL && size == 0);
    ASSERT_EQ_STR(again.message, err.message);
    ordo_loader_close(l);
    ordo_recipe_free(r);
}

TEST(unordered_loader_takes_no_checkpoints)
{
    corpus_jsonl("data", "doc", 1, 30, 5, 60, 12);
    ordo_recipe *r = indexed(corpus_one_source(2, 4, 16, 2, 0));
    ordo_loader_options o = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    ASSERT_OK(ordo__loader_set_unordered(l, &err), &err);
    ordo_batch b;
    ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
    ASSERT_STATUS(ordo__loader_set_unordered(l, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "before its first batch");
    unsigned char *state = NULL;
    size_t size = 0;
    ASSERT_STATUS(ordo_loader_checkpoint(l, &state, &size, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "unordered");
    ordo_loader_close(l);
    /* Many units in flight, two workers: units taken as they finish, only
     * ever at a unit's start, so every sample is whole text of documents
     * (bytes and end-of-text only). */
    ordo_recipe_free(r);
    corpus_jsonl("many", "doc", 3, 333, 5, 300, 13);
    const char *text = "{\"seed\": 4, \"seq_len\": 16, \"global_batch\": 4, \"lanes\": 2, "
                       "\"chunk_records\": 7, \"sources\": [{\"name\": \"a\", \"paths\": "
                       "[\"many/*.jsonl\"], \"weight\": 1}]}";
    test_write_file(test_path("many.json"), text, strlen(text));
    r = indexed(test_path("many.json"));
    o.read_workers = o.tokenize_workers = 2;
    o.prefetch = 6;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    ASSERT_OK(ordo__loader_set_unordered(l, &err), &err);
    for (int step = 0; step < 300; step++) {
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        for (int i = 0; i < b.rows * b.seq_len; i++)
            ASSERT(b.tokens[i] <= 256);
    }
    ordo_loader_close(l);
    ordo_recipe_free(r);
}

TEST(lane_rank_refuses_impossible_numbers)
{
    ASSERT_EQ_INT(ordo_lane_rank(32, 4, 0), 0);
    ASSERT_EQ_INT(ordo_lane_rank(32, 4, 31), 3);
    ASSERT_EQ_INT(ordo_lane_rank(32, 32, 17), 17);
    ASSERT_EQ_INT(ordo_lane_rank(4, 8, 0), -1);   /* W > L */
    ASSERT_EQ_INT(ordo_lane_rank(32, 12, 0), -1); /* W does not divide L */
    ASSERT_EQ_INT(ordo_lane_rank(32, 0, 0), -1);
    ASSERT_EQ_INT(ordo_lane_rank(32, 4, 32), -1);
    ASSERT_EQ_INT(ordo_lane_rank(32, 4, -1), -1);
}

TEST(permutation_is_a_seeded_bijection)
{
    static uint8_t seen[100000];
    const uint64_t sizes[] = {1, 2, 3, 5, 16, 17, 255, 1000, 4097, 100000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint64_t n = sizes[k];
        ordo__permutation p, q;
        ordo__permutation_init(&p, n, 1234, "chunk-order", 0, 7);
        ordo__permutation_init(&q, n, 1234, "chunk-order", 0, 8);
        memset(seen, 0, n);
        uint64_t fixed = 0, same_as_other_epoch = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t x = ordo__permutation_at(&p, i);
            ASSERT(x < n);
            ASSERT(!seen[x]);
            seen[x] = 1;
            fixed += x == i;
            same_as_other_epoch += x == ordo__permutation_at(&q, i);
        }
        /* A shuffle, not the identity, and another epoch is another order. */
        if (n >= 1000) {
            ASSERT(fixed < n / 100);
            ASSERT(same_as_other_epoch < n / 100);
        }
    }
    /* A pure function of its inputs. */
    ordo__permutation a, b;
    ordo__permutation_init(&a, 5000, 9, "chunk-order", 3, 4);
    ordo__permutation_init(&b, 5000, 9, "chunk-order", 3, 4);
    for (uint64_t i = 0; i < 5000; i++)
        ASSERT_EQ_INT(ordo__permutation_at(&a, i), ordo__permutation_at(&b, i));
}

/* Reads every document text of the corpus files data/doc-N.jsonl. */
static json_t *corpus_texts(int files)
{
    json_t *texts = json_object();
    for (int f = 0; f < files; f++) {
        char name[64];
        snprintf(name, sizeof name, "data/doc-%d.jsonl", f);
        size_t size = 0;
        char *data = test_read_file(test_path(name), &size);
        ASSERT(data != NULL);
        for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
            json_t *doc = json_loads(line, 0, NULL);
            ASSERT(doc != NULL);
            json_object_set_new(texts, json_string_value(json_object_get(doc, "text")),
                                json_integer(0));
            json_decref(doc);
        }
        free(data);
    }
    return texts;
}

/* One lane, no shuffle: the rows in order are the documents, whole and
 * each ended by end-of-text, then padding at each flush. */
TEST(loader_tokens_reconstruct_the_documents)
{
    corpus_jsonl("data", "doc", 2, 30, 1, 90, 13);
    ordo_recipe *r = indexed(corpus_one_source(1, 1, 24, 3, 0));
    ordo_recipe_info info;
    ordo_recipe_describe(r, &info);
    json_t *texts = corpus_texts(2);
    ordo_loader_options o = {.world_size = 1, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    char doc[4096];
    size_t len = 0, docs = 0;
    int at_start = 1;
    for (int step = 0; step < 400; step++) {
        ordo_batch b;
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        ASSERT_EQ_INT(b.rows, 1);
        for (int i = 0; i < b.seq_len; i++) {
            uint32_t t = b.tokens[i];
            if (t == (uint32_t)info.pad_id) {
                ASSERT(at_start); /* padding only after a whole document */
                continue;
            }
            ASSERT_EQ_INT(b.doc_start[i], at_start);
            at_start = 0;
            if (t == (uint32_t)info.eot_id) {
                doc[len] = '\0';
                json_t *seen = json_object_get(texts, doc);
                if (!seen)
                    test_fail(__FILE__, __LINE__, "packed text is no corpus document: '%s'", doc);
                json_integer_set(seen, json_integer_value(seen) + 1);
                len = 0;
                docs++;
                at_start = 1;
                continue;
            }
            ASSERT(t < 256 && len + 1 < sizeof doc);
            doc[len++] = (char)t;
        }
    }
    /* 400 steps of 24 tokens cover the 60 documents more than once: each
     * document is seen, and no document twice before all were seen once. */
    ASSERT(docs > 60);
    const char *key;
    json_t *count;
    json_object_foreach(texts, key, count)
    {
        ASSERT(json_integer_value(count) >= 1);
        ASSERT(json_integer_value(count) <= (long long)(docs / 60 + 1));
    }
    json_decref(texts);
    ordo_loader_close(l);
    ordo_recipe_free(r);
}

static void run_job(const char *recipe, const char *db, const char *name, const char *world,
                    const char *steps)
{
    free(ordo_ok(A("run", recipe, "--db", db, "--name", name, "--world-size", world, "--steps",
                   steps, "--quiet", "--checkpoint-every", "1"),
                 0));
}

static void assert_agree(const char *db, const char *a, const char *b, long long steps)
{
    char *out = ordo_ok(A("compare", a, b, "--db", db, "--json"), 0);
    json_t *r = json_loads(out, 0, NULL);
    free(out);
    ASSERT(r != NULL);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "steps_compared")), steps);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "matched")), steps);
    json_decref(r);
}

/* Shapes at the edges stay elastic: one lane, seq_len 2, flush every
 * chunk, shuffle windows of 0 and 1, fewer chunks than lanes. */
TEST(loader_odd_shapes_stay_elastic)
{
    corpus_jsonl("data", "doc", 1, 8, 3, 200,
                 14); /* one chunk of 8 documents: one each at 8 lanes */
    struct {
        int lanes, batch, seq_len, flush, shuffle;
        const char *wide;
    } shapes[] = {
        {1, 1, 2, 1, 0, "1"}, {1, 3, 2, 1, 1, "1"},  {8, 8, 16, 1, 1, "8"},
        {4, 8, 2, 2, 0, "4"}, {8, 16, 5, 3, 2, "2"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char db[512], recipe_name[64];
        snprintf(db, sizeof db, "%sshape-%zu.db", test_path(""), i);
        snprintf(recipe_name, sizeof recipe_name, "shape-%zu.json", i);
        const char *recipe = corpus_kept(
            corpus_recipe(recipe_name, shapes[i].lanes, shapes[i].batch, shapes[i].seq_len,
                          shapes[i].flush, shapes[i].shuffle,
                          "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]"));
        run_job(recipe, db, "narrow", "1", "40");
        run_job(recipe, db, "wide", shapes[i].wide, "40");
        assert_agree(db, "narrow", "wide", 40);
        free(ordo_ok(A("resume", "narrow", "--db", db, "--from-step", "13", "--as", "resumed",
                       "--world-size", shapes[i].wide, "--steps", "40", "--quiet"),
                     0));
        assert_agree(db, "narrow", "resumed", 27);
    }
}

/* A resume that starts in one epoch of a source's chunk order and runs
 * through the next ones (each source cycles its chunks many times). */
TEST(loader_resume_spans_chunk_order_epochs)
{
    corpus_jsonl("data", "doc", 1, 12, 20, 40, 15);
    const char *recipe =
        corpus_recipe("recipe.json", 4, 8, 16, 1, 2,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]");
    char db[512];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    /* chunk_records 256: 1 chunk, so every lane wraps every pick. */
    run_job(recipe, db, "base", "2", "120");
    free(ordo_ok(A("resume", "base", "--db", db, "--from-step", "37", "--as", "again",
                   "--world-size", "4", "--steps", "120", "--quiet"),
                 0));
    assert_agree(db, "base", "again", 83);
}

TEST(resume_in_place_refuses_an_earlier_checkpoint)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 60, 18);
    const char *recipe = corpus_one_source(4, 8, 16, 2, 2);
    char db[512];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "2", "--steps",
                   "40", "--quiet", "--checkpoint-every", "10"),
                 0));
    char *before = ordo_ok(A("show", "base", "--db", db, "--json"), 0);
    cli_result res = run_ordo(NULL, A("resume", "base", "--db", db, "--from-step", "20",
                                      "--world-size", "4", "--steps", "60", "--quiet"));
    ASSERT_EQ_INT(res.code, 1);
    ASSERT_CONTAINS(res.err, "later checkpoint (step 40) than step 20");
    ASSERT_CONTAINS(res.err, "--as");
    cli_result_free(&res);
    char *after = ordo_ok(A("show", "base", "--db", db, "--json"), 0);
    ASSERT_EQ_STR(after, before); /* nothing recorded */
    free(before);
    free(after);
    /* From the latest it continues; a fork may start anywhere. */
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "4", "--steps", "60", "--quiet"),
                 0));
    free(ordo_ok(A("resume", "base", "--db", db, "--from-step", "20", "--as", "fork",
                   "--world-size", "1", "--steps", "60", "--quiet"),
                 0));
    free(ordo_ok(A("compare", "base", "fork", "--db", db), 0));
}

/* A checkpoint names its recipe, and a resume needs every lane of it. */
TEST(resume_state_must_fit_the_recipe_and_cover_every_lane)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 60, 19);
    ordo_recipe *a = indexed(corpus_one_source(4, 8, 16, 2, 2));
    ordo_recipe *b = indexed(corpus_kept(
        corpus_recipe("other.json", 4, 8, 16, 3, 2,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]")));
    ordo_error err;
    ordo_loader *l = NULL;
    ordo_batch batch;
    unsigned char *state = NULL;
    size_t size = 0;
    ordo_loader_options o = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ASSERT_OK(ordo_loader_open(a, &o, &l, &err), &err);
    ASSERT_OK(ordo_loader_next(l, &batch, &err), &err);
    ASSERT_OK(ordo_loader_checkpoint(l, &state, &size, &err), &err);
    ordo_loader_close(l);
    o.resume = state;
    o.resume_size = size;
    ASSERT_STATUS(ordo_loader_open(b, &o, &l, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "belongs to another recipe");
    ASSERT_OK(ordo_loader_open(a, &o, &l, &err), &err);
    ordo_loader_close(l);
    ordo_free(state);
    /* Rank 0 of 4 rank-bound ranks holds one lane of four: not enough to
     * re-shard from. */
    ordo_loader_options r0 = {.world_size = 4,
                              .read_workers = 1,
                              .tokenize_workers = 1,
                              .lane_binding = ORDO_BINDING_RANK};
    ASSERT_OK(ordo_loader_open(a, &r0, &l, &err), &err);
    ASSERT_OK(ordo_loader_next(l, &batch, &err), &err);
    ASSERT_OK(ordo_loader_checkpoint(l, &state, &size, &err), &err);
    ordo_loader_close(l);
    r0.world_size = 8;
    r0.resume = state;
    r0.resume_size = size;
    ASSERT_STATUS(ordo_loader_open(a, &r0, &l, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "covers 1 of 4 lanes");
    ordo_free(state);
    ordo_recipe_free(a);
    ordo_recipe_free(b);
}

/* Chunks in flight per lane (1 to 9) and workers (1 to 4) change only
 * speed: every batch digest is the same. */
TEST(loader_prefetch_and_workers_change_nothing)
{
    corpus_jsonl("data", "doc", 3, 50, 1, 300, 20);
    ordo_recipe *r = indexed(corpus_one_source(4, 8, 32, 3, 4));
    const int prefetch[] = {1, 2, 9, 0}, workers[] = {1, 4, 2, 3};
    unsigned char first[60][ORDO_DIGEST_SIZE];
    for (int k = 0; k < 4; k++) {
        ordo_loader_options o = {.world_size = 2,
                                 .rank = 1,
                                 .read_workers = workers[k],
                                 .tokenize_workers = workers[(k + 1) % 4],
                                 .prefetch = prefetch[k]};
        ordo_loader *l = NULL;
        ordo_error err;
        ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
        for (int step = 0; step < 60; step++) {
            ordo_batch b;
            ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
            unsigned char digest[ORDO_DIGEST_SIZE];
            ordo_batch_digest(b.lane_digests, b.lane_count, digest);
            if (k == 0)
                memcpy(first[step], digest, sizeof digest);
            else if (memcmp(first[step], digest, sizeof digest) != 0)
                test_fail(__FILE__, __LINE__, "prefetch %d, workers %d: step %d differs",
                          prefetch[k], workers[k], step + 1);
        }
        ordo_loader_close(l);
    }
    ordo_recipe_free(r);
}

/* Found by fuzz/fuzz_state (kept in fuzz/regressions/state too): a
 * malformed varint made later fields read on and ask for a huge
 * allocation; merging two zero-lane states freed a buffer twice. */
TEST(checkpoint_parsers_survive_fuzzer_finds)
{
    static const char *const finds[] = {
        "ycnJycnJicnJycnJjsnJycnJycnJycnJycnJycnJycnJycnJycnJycnJycnJLsnJycnJyQIAnJ8CAJxrn9XV3wYZ"
        "3wYZQOQCQAIA",
        "AgCcSwEGAgAuAAIAnEsBBgIALgA="};
    for (size_t k = 0; k < 2; k++) {
        unsigned char raw[256];
        int n = EVP_DecodeBlock(raw, (const unsigned char *)finds[k], (int)strlen(finds[k]));
        ASSERT(n > 0);
        n -= finds[k][strlen(finds[k]) - 1] == '=';
        ordo_error err;
        int lanes = 0;
        int64_t step = 0;
        ordo_checkpoint_describe(raw, (size_t)n, &lanes, &step, &err);
        const unsigned char *parts[2] = {raw, raw + n / 2};
        size_t sizes[2] = {(size_t)n / 2, (size_t)(n - n / 2)};
        unsigned char *merged = NULL;
        size_t size = 0;
        if (ordo_checkpoint_merge(parts, sizes, 2, &merged, &size, &err) == ORDO_OK) {
            ASSERT_OK(ordo_checkpoint_describe(merged, size, &lanes, &step, &err), &err);
            ordo_free(merged);
        }
    }
}

TEST(loader_batches_pack_exactly)
{
    corpus_jsonl("data", "doc", 2, 60, 5, 120, 5);
    const char *recipe = corpus_recipe("recipe.json", 4, 8, 48, 2, 4,
                                       "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                       "\"weight\": 1}]");
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(recipe, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    ordo_recipe_info info;
    ordo_recipe_describe(r, &info);
    ordo_loader_options o = {.rank = 1, .world_size = 2, .read_workers = 2, .tokenize_workers = 3};
    ordo_loader *l = NULL;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    for (int step = 1; step <= 50; step++) {
        ordo_batch b;
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        ASSERT_EQ_INT(b.step, step);
        ASSERT_EQ_INT(b.rows, 4);
        ASSERT_EQ_INT(b.lane_count, 2);
        ASSERT_EQ_INT(b.lanes[0], 2);
        ASSERT_EQ_INT(b.lanes[1], 3);
        int64_t pad = 0;
        for (int row = 0; row < b.rows; row++) {
            const uint32_t *t = b.tokens + row * b.seq_len;
            const uint8_t *start = b.doc_start + row * b.seq_len;
            for (int i = 0; i < b.seq_len; i++) {
                ASSERT(t[i] < (uint32_t)info.vocab_size);
                if (t[i] == info.pad_id) {
                    pad++;
                    ASSERT(i + 1 == b.seq_len || t[i + 1] == info.pad_id);
                }
                if (i > 0 && t[i] != info.pad_id)
                    ASSERT_EQ_INT(start[i], t[i - 1] == info.eot_id);
            }
        }
        ASSERT_EQ_INT(b.pad_tokens, pad);
        /* The lane digest is SHA-256 of the lane's rows as uint32 LE. */
        unsigned char expect[ORDO_DIGEST_SIZE];
        ordo_sha256(b.tokens, (size_t)2 * b.seq_len * 4, expect);
        ASSERT(memcmp(expect, b.lane_digests, ORDO_DIGEST_SIZE) == 0);
        ASSERT_EQ_INT(b.source_tokens[0] + b.pad_tokens, (int64_t)b.rows * b.seq_len);
    }
    ordo_loader_close(l);
    ordo_recipe_free(r);
}
