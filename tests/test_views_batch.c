/* Batch provenance (ordo_batch_provenance, `ordo batch`): a recorded
 * step's batch regenerated from the ledger at any world size, its lane
 * digests equal to the ledger's, its pieces decoding to the shard records
 * read directly; refusals of changed data naming step, lane and file. */
#include <jansson.h>
#include <sys/stat.h>

#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char db[1024];

/* Source a: two files whose records include blank lines, empty texts and
 * records the filter drops (so physical and kept indices differ); source
 * b: one file of longer documents. Some text is multi-byte UTF-8. */
static void write_corpus_of(int records, int scale)
{
    static const char *words[] = {"data",  "lane",          "caf\\u00e9",         "\\u03bb",
                                  "seed",  "token",         "r\\u00e9sum\\u00e9", "order",
                                  "batch", "\\u4e2d\\u6587"};
    char path[1024];
    mkdir(test_path("data"), 0755);
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s",
                 test_path(f < 2 ? (f ? "data/a-1.jsonl" : "data/a-0.jsonl") : "data/b-0.jsonl"));
        FILE *out = fopen(path, "w");
        ASSERT(out != NULL);
        for (int i = 0; i < records; i++) {
            if (f < 2 && i % 9 == 4) {
                fputs("\n", out); /* blank */
                continue;
            }
            if (f < 2 && i % 7 == 3) {
                fputs("{\"text\": \"\", \"q\": 1}\n", out); /* empty */
                continue;
            }
            int q = f < 2 && i % 5 == 2 ? 0 : 1; /* q 0: filtered out */
            fprintf(out, "{\"q\": %d, \"text\": \"doc %d.%d:", q, f, i);
            int n = scale * (f < 2 ? 3 + (i * 7 + f) % 11 : 20 + (i * 13) % 40);
            for (int w = 0; w < n; w++)
                fprintf(out, " %s", words[(i * 31 + w * 17 + f) % 10]);
            fputs("\"}\n", out);
        }
        ASSERT(fclose(out) == 0);
    }
}

static void write_corpus(void)
{
    write_corpus_of(60, 1);
}

/* A copy of an encoding's rank file into the test folder. */
static void copy_ranks(const char *encoding)
{
    const char *dir = getenv("ORDO_VOCAB");
    char source[1024], name[128];
    snprintf(source, sizeof source, "%s/%s.tiktoken", dir ? dir : "build/vocab", encoding);
    snprintf(name, sizeof name, "%s.tiktoken", encoding);
    size_t size = 0;
    char *ranks = test_read_file(source, &size);
    ASSERT(ranks != NULL);
    test_write_file(test_path(name), ranks, size);
    free(ranks);
}

/* Writes recipe `name`: 8 lanes, batch 16, shuffled flush epochs of 3
 * steps, samples of seq_len tokens, the given tokenizer and mixture
 * ("weights" or a schedule). */
static const char *write_recipe_of(const char *name, int seq_len, const char *tokenizer,
                                   const char *mixture)
{
    char text[2048];
    int n = snprintf(
        text, sizeof text,
        "{\"seed\": 7, \"seq_len\": %d, \"global_batch\": 16, \"lanes\": 8, \"flush_every\": 3, "
        "\"shuffle\": true, \"tokenizer\": %s, %s \"sources\": ["
        "{\"name\": \"a\", \"paths\": [\"data/a-*.jsonl\"], %s \"filter\": {\"field\": \"q\", "
        "\"ge\": 1}}, {\"name\": \"b\", \"paths\": [\"data/b-*.jsonl\"] %s}]}",
        seq_len, tokenizer, mixture ? mixture : "", mixture ? "" : "\"weight\": 0.6,",
        mixture ? "" : ", \"weight\": 0.4");
    test_write_file(test_path(name), text, (size_t)n);
    return corpus_kept(test_path(name));
}

static const char *write_recipe(const char *name, const char *tokenizer, const char *mixture)
{
    return write_recipe_of(name, 20, tokenizer, mixture);
}

static ordo_ledger *open_ledger(void)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    return ledger;
}

static int64_t run_id(ordo_ledger *ledger, const char *name)
{
    ordo_run_info run;
    ordo_error err;
    ASSERT_OK(ordo_run_get(ledger, name, &run, &err), &err);
    return run.id;
}

typedef struct {
    int64_t step;
    unsigned char lanes[8 * ORDO_DIGEST_SIZE];
    unsigned char batch[ORDO_DIGEST_SIZE];
} recorded;

static int keep_step(const ordo_step *step, void *context)
{
    recorded *r = context;
    ASSERT_EQ_INT(step->lane_count, 8);
    r->step = step->step;
    memcpy(r->lanes, step->lane_digests, sizeof r->lanes);
    memcpy(r->batch, step->batch_digest, sizeof r->batch);
    return 0;
}

typedef struct {
    uint64_t record;
    char *text;
} find_record;

static int find_doc(void *context, const char *text, size_t len, uint64_t record)
{
    find_record *f = context;
    if (record != f->record)
        return 0;
    f->text = strndup(text, len);
    return 1;
}

/* The record at physical index `record` of a shard file: a .jsonl file
 * read whole (its text, owned, and the byte offset of its line), another
 * format through ordo_shard_read's whole-file scan (byte -1). */
static char *record_text(const char *shard, uint64_t record, int64_t *byte)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", test_path(shard));
    size_t n = strlen(path);
    if (n < 6 || strcmp(path + n - 6, ".jsonl") != 0) {
        find_record f = {record, NULL};
        ordo_error err;
        ASSERT_OK(ordo_shard_read(path, "text", NULL, find_doc, &f, NULL, &err), &err);
        ASSERT(f.text != NULL);
        *byte = -1;
        return f.text;
    }
    size_t size = 0;
    char *file = test_read_file(path, &size);
    ASSERT(file != NULL);
    size_t at = 0;
    for (uint64_t i = 0; i < record; i++) {
        char *nl = memchr(file + at, '\n', size - at);
        ASSERT(nl != NULL);
        at = (size_t)(nl - file) + 1;
    }
    *byte = (int64_t)at;
    char *end = memchr(file + at, '\n', size - at);
    json_error_t jerr;
    json_t *line = json_loadb(file + at, (size_t)(end - (file + at)), 0, &jerr);
    ASSERT(line != NULL);
    char *text = strdup(json_string_value(json_object_get(line, "text")));
    json_decref(line);
    free(file);
    return text;
}

/* The bytes of ids (no specials) under `tok` (NULL: bytes). */
static char *decode(const ordo_tokenizer *tok, const uint32_t *ids, size_t count, size_t *len)
{
    ordo_error err;
    if (tok) {
        char *bytes = NULL;
        ASSERT_OK(ordo_tokenizer_decode(tok, ids, count, &bytes, len, &err), &err);
        return bytes;
    }
    char *bytes = malloc(count + 1);
    for (size_t i = 0; i < count; i++)
        bytes[i] = (char)ids[i];
    *len = count;
    return bytes;
}

/* Every piece of every sample: its tokens are the document's [start, end)
 * (the record read directly from the shard by index and byte offset,
 * tokenized), its text is the document's text at the right place, and
 * the pieces cover the sample end to end. */
static void check_pieces(const ordo_provenance *p, const ordo_tokenizer *tok)
{
    ordo_error err;
    const ordo_recipe *r = p->recipe;
    for (int row = 0; row < p->rows; row++) {
        const ordo_batch_sample *s = &p->samples[row];
        ASSERT_EQ_INT(s->lane, row / p->per_lane);
        int at = 0;
        for (int i = 0; i < s->piece_count; i++) {
            const ordo_batch_piece *b = &s->pieces[i];
            ASSERT_EQ_INT(b->at, at);
            ASSERT(strstr(b->shard, s->source == 0 ? "/a-" : "/b-") ||
                   strstr(b->shard, s->source == 0 ? "gz/" : "zst/"));
            ASSERT_EQ_STR(s->source_name, s->source == 0 ? "a" : "b");
            int64_t byte = -1;
            char *text = record_text(b->shard, b->record, &byte);
            ASSERT_EQ_INT(b->byte, byte);
            ordo__tokens doc = {0};
            ASSERT_OK(ordo__tokenize(r, text, strlen(text), &doc, &err), &err);
            ASSERT_OK(ordo__tokens_push(&doc, ordo__eot_id(r), &err), &err);
            if (b->length) /* else it goes on past the flush epoch */
                ASSERT_EQ_INT(b->length, doc.count);
            ASSERT(b->start < b->end && b->end <= doc.count);
            ASSERT(b->length || b->end < doc.count);
            for (uint64_t t = b->start; t < b->end; t++)
                ASSERT_EQ_INT(s->tokens[b->at + (int)(t - b->start)], doc.ids[t]);
            /* the piece's text follows the text of the document's tokens before it */
            size_t before_len = 0, piece_len = 0;
            char *before = decode(tok, doc.ids, (size_t)b->start, &before_len);
            char *piece = NULL;
            ASSERT_OK(ordo_provenance_piece_text(p, row, i, &piece, &piece_len, &err), &err);
            ASSERT(before_len + piece_len <= strlen(text));
            ASSERT(before_len == 0 || memcmp(text, before, before_len) == 0);
            ASSERT(piece_len == 0 || memcmp(text + before_len, piece, piece_len) == 0);
            if (b->end == b->length) /* the document's last piece ends its text */
                ASSERT_EQ_INT(before_len + piece_len, strlen(text));
            at += (int)(b->end - b->start);
            free(before);
            ordo_free(piece);
            free(doc.ids);
            free(text);
        }
        ASSERT_EQ_INT(at, p->sample_len);
    }
}

/* A run at W = 2, resumed at W = 4 and 8, with checkpoints in between. */
static void record_elastic_run(const char *recipe)
{
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "r", "--world-size", "2", "--steps", "12",
                   "--checkpoint-every", "5", "--quiet"),
                 0));
    free(ordo_ok(A("resume", "r", "--db", db, "--world-size", "4", "--steps", "23",
                   "--checkpoint-every", "5", "--quiet"),
                 0));
    free(ordo_ok(A("resume", "r", "--db", db, "--world-size", "8", "--steps", "30", "--quiet"), 0));
}

/* Random steps (and the ones next to checkpoints and resumes) of the run:
 * regenerated, equal to the ledger's lane digests, traced to the shards. */
static void check_random_steps(const ordo_tokenizer *tok, int64_t last)
{
    ordo_ledger *ledger = open_ledger();
    int64_t run = run_id(ledger, "r");
    int64_t steps[10] = {1, 11, 13, 24 % last + 1, last};
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(DISTINCT (step - 1) / 3) FROM epoch_states"),
                  (last - 1) / 3);
    unsigned x = 12345;
    for (int i = 5; i < 10; i++) {
        x = x * 1103515245u + 12345u;
        steps[i] = 1 + (int64_t)((x >> 8) % (uint64_t)last);
    }
    for (int i = 0; i < 10; i++) {
        ordo_provenance *p = NULL;
        ordo_error err;
        ASSERT_OK(ordo_batch_provenance(ledger, run, steps[i], NULL, &p, &err), &err);
        recorded want = {0};
        ASSERT_OK(ordo_steps_scan(ledger, run, steps[i], steps[i], keep_step, &want, &err), &err);
        ASSERT_EQ_INT(want.step, steps[i]);
        ASSERT_EQ_INT(p->step, steps[i]);
        /* every epoch after the first has a lane state (the resumes at 12
         * and 23 too: the first step a resumed job plays records its
         * epoch's): at most one epoch (3 steps) is replayed */
        ASSERT_EQ_INT(p->from_step, (steps[i] - 1) / 3 * 3);
        ASSERT_EQ_STR(p->from, p->from_step ? "epoch" : "start");
        ASSERT(memcmp(p->lane_digests, want.lanes, sizeof want.lanes) == 0);
        ASSERT(memcmp(p->batch_digest, want.batch, sizeof want.batch) == 0);
        ASSERT_EQ_INT(p->rows, 16);
        check_pieces(p, tok);
        ordo_provenance_free(p);
    }
    ordo_ledger_close(ledger);
}

TEST(batch_provenance_is_the_ledger_batch_traced_to_shard_records_bytes)
{
    write_corpus();
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe("recipe.json", "{\"kind\": \"bytes\"}", NULL));
    check_random_steps(NULL, 30);
    /* the run says how many epochs have their lane states (and ordo show) */
    ordo_ledger *ledger = open_ledger();
    ordo_run_info run;
    ordo_error err;
    ASSERT_OK(ordo_run_get(ledger, "r", &run, &err), &err);
    ordo_ledger_close(ledger);
    int64_t states = fixture_int(db, "SELECT count(*) FROM epoch_states");
    ASSERT(states >= 9);
    ASSERT_EQ_INT(run.lane_states, states);
    char *shown = ordo_ok(A("show", "r", "--db", db), 0), line[96];
    snprintf(line, sizeof line, "lane states  %lld recorded", (long long)states);
    ASSERT_CONTAINS(shown, line);
    free(shown);
}

/* Units of many documents: the replay reads each about as far as its
 * epoch packs (from the packer's record) and reads on when it needs more;
 * the batches are the ledger's all the same, also read a document at a
 * time (a read-on then often starts at a blank or filtered record). An
 * observing loader takes no checkpoints (its positions may name bounds). */
TEST(batch_provenance_reads_long_units_in_parts)
{
    write_corpus_of(300, 4);
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe("recipe.json", "{\"kind\": \"bytes\"}", NULL));
    uint64_t before = atomic_load(&ordo__units_read_on);
    check_random_steps(NULL, 30); /* as far as the epoch packs: rarely read on */
    ordo__observe_read_limit = 1; /* a document at a time: read on at each */
    check_random_steps(NULL, 30);
    ordo__observe_read_limit = 0;
    ASSERT(atomic_load(&ordo__units_read_on) - before >= 10);
    ordo_recipe *r = NULL;
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(test_path("recipe.json"), &r, &err), &err);
    ordo_ledger *ledger = fixture_open("ledger.db");
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    ordo_ledger_close(ledger);
    ordo_loader_options o = {.rank = 0,
                             .world_size = 1,
                             .read_workers = 2,
                             .tokenize_workers = 2,
                             .lane_binding = ORDO_BINDING_LOGICAL};
    ASSERT_OK(ordo__loader_open_observed(r, &o, ORDO__OPEN_OBSERVE, &l, &err), &err);
    ordo_batch b;
    ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
    unsigned char *state = NULL;
    size_t size = 0;
    ASSERT_EQ_INT(ordo_loader_checkpoint(l, &state, &size, &err), ORDO_INVALID);
    ASSERT_CONTAINS(err.message, "regenerating a recorded batch takes no checkpoints");
    ordo_loader_close(l);
    ordo_recipe_free(r);
}

/* 16 packers (8 lanes, 2 sources) whose units are record ranges of 6
 * chunks: a replay loads (and checks against its digest) each chunk once
 * for every lane reading it, not once a unit read. */
TEST(batch_provenance_loads_each_chunk_once)
{
    write_corpus_of(300, 4);
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe("recipe.json", "{\"kind\": \"bytes\"}", NULL));
    int chunks = fixture_int(db, "SELECT sum(chunks) FROM shards");
    ASSERT_EQ_INT(chunks, 6);
    ordo_ledger *ledger = open_ledger();
    int64_t run = run_id(ledger, "r"), steps[] = {2, 14, 29};
    for (int i = 0; i < 3; i++) {
        uint64_t loads = atomic_load(&ordo__chunk_cache_loads);
        uint64_t read = atomic_load(&ordo__cached_read_bytes);
        ordo_provenance *p = NULL;
        ordo_error err;
        ASSERT_OK(ordo_batch_provenance(ledger, run, steps[i], NULL, &p, &err), &err);
        loads = atomic_load(&ordo__chunk_cache_loads) - loads;
        ASSERT(loads >= 1 && loads <= (uint64_t)chunks);
        ASSERT(atomic_load(&ordo__cached_read_bytes) > read); /* the reads went through it */
        check_pieces(p, NULL);
        ordo_provenance_free(p);
    }
    ordo_ledger_close(ledger);
}

/* Every sample exactly one document (19 bytes and its eos), read one
 * document at a time: a replay of one step packs its document and stops;
 * the read on that the next document would need is started only when a
 * packer needs it, so none is. */
TEST(batch_provenance_reads_on_only_when_a_packer_needs_it)
{
    mkdir(test_path("data"), 0755);
    FILE *out = fopen(test_path("data/even.jsonl"), "w");
    ASSERT(out != NULL);
    for (int i = 0; i < 60; i++)
        fprintf(out, "{\"text\": \"document number %03d\"}\n", i); /* 19 bytes */
    ASSERT(fclose(out) == 0);
    static const char recipe[] =
        "{\"seed\": 1, \"seq_len\": 20, \"global_batch\": 1, \"lanes\": 1, \"flush_every\": 1, "
        "\"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": [{\"name\": \"even\", \"paths\": "
        "[\"data/even.jsonl\"], \"weight\": 1}]}";
    test_write_file(test_path("even.json"), recipe, sizeof recipe - 1);
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    free(ordo_ok(A("run", test_path("even.json"), "--db", db, "--name", "e", "--world-size", "1",
                   "--steps", "20", "--quiet"),
                 0));
    ordo_ledger *ledger = open_ledger();
    int64_t run = run_id(ledger, "e");
    ordo__observe_read_limit = 1;
    for (int64_t step = 2; step <= 20; step += 6) {
        uint64_t before = atomic_load(&ordo__units_read_on);
        ordo_provenance *p = NULL;
        ordo_error err;
        ASSERT_OK(ordo_batch_provenance(ledger, run, step, NULL, &p, &err), &err);
        ASSERT_EQ_INT(p->step - p->from_step, 1);
        ASSERT_EQ_INT(p->samples[0].piece_count, 1);
        ASSERT_EQ_INT(p->samples[0].pieces[0].start, 0);
        ASSERT_EQ_INT(p->samples[0].pieces[0].end, 20);
        ASSERT_EQ_INT(atomic_load(&ordo__units_read_on) - before, 0);
        ordo_provenance_free(p);
    }
    ordo__observe_read_limit = 0;
    ordo_ledger_close(ledger);
}

/* A replay reads about what its epoch packs: each packer's read stops
 * near the text of the tokens it still packs in the epoch (bytes: a token
 * a byte), not an epoch's worth at a guessed 4 bytes a token, nor its
 * unit's end; what it reads past that is at most the document it stops
 * in and the one a resumed position starts in. */
TEST(batch_provenance_reads_about_what_the_epoch_packs)
{
    write_corpus_of(300, 1);
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe_of("recipe.json", 64, "{\"kind\": \"bytes\"}", NULL));
    ordo_ledger *ledger = open_ledger();
    int64_t run = run_id(ledger, "r"), steps[] = {5, 16, 27};
    for (int i = 0; i < 3; i++) {
        uint64_t read = atomic_load(&ordo__cached_read_bytes);
        ordo_provenance *p = NULL;
        ordo_error err;
        ASSERT_OK(ordo_batch_provenance(ledger, run, steps[i], NULL, &p, &err), &err);
        read = atomic_load(&ordo__cached_read_bytes) - read;
        ASSERT_EQ_INT(p->step - p->from_step, (steps[i] - 1) % 3 + 1);
        /* an epoch: 8 lanes x 6 samples x 64 tokens; a document is at most
         * 59 words of up to 9 bytes and its 10-byte prefix (an epoch's worth
         * at 4 bytes a token read 25 KB here) */
        uint64_t epoch = 8 * 6 * 64, doc = 10 + 59 * 9;
        ASSERT(read >= epoch / 2);
        ASSERT(read <= epoch + epoch / 8 + 16 * 2 * doc);
        check_pieces(p, NULL);
        ordo_provenance_free(p);
    }
    ordo_ledger_close(ledger);
}

/* The JSON of step `step`'s batch without where its replay started, and
 * the tokens tokenized making it. */
static char *batch_answer(const char *path, int64_t step, uint64_t *tokenized)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(path, ORDO_OPEN_READONLY, &ledger, &err), &err);
    uint64_t before = atomic_load(&ordo__tokenized_tokens);
    ordo_provenance *p = NULL;
    ASSERT_OK(ordo_batch_provenance(ledger, run_id(ledger, "r"), step, NULL, &p, &err), &err);
    *tokenized = atomic_load(&ordo__tokenized_tokens) - before;
    check_pieces(p, NULL);
    char *text = ordo_provenance_json("r", p, -1);
    json_t *json = json_loads(text, 0, NULL);
    ASSERT(json != NULL);
    json_object_del(json, "from");
    json_object_del(json, "from_step");
    char *out = json_dumps(json, JSON_SORT_KEYS);
    json_decref(json);
    ordo_free(text);
    ordo_provenance_free(p);
    ordo_ledger_close(ledger);
    return out;
}

static int unknown_lengths(const char *answer)
{
    int n = 0;
    for (const char *at = answer; (at = strstr(at, "\"length\": null")); at++)
        n++;
    return n;
}

/* Documents far longer than a lane's epoch (120 tokens): a replay
 * tokenizes each only as far as the epoch packs it, cut between pieces,
 * and tokenizes a cut one again when a later epoch needs more (the lane
 * digests are the ledger's); the answer is the same from the epoch's lane
 * state, from the run's start, and tokenizing every document whole, the
 * length of a document that goes on past the epoch left out (null) in
 * all three. Cut every few tokens, the batches are still the ledger's. */
TEST(batch_provenance_tokenizes_about_what_the_epoch_packs)
{
    write_corpus_of(60, 8);
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe("recipe.json", "{\"kind\": \"bytes\"}", NULL));
    char bare[1024], sql[1200];
    snprintf(bare, sizeof bare, "%s", test_path("bare.db"));
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", bare);
    fixture_sql(db, sql);
    fixture_sql(bare, "DELETE FROM epoch_states; DELETE FROM checkpoints");
    const int64_t steps[] = {2, 8, 14, 22, 29};
    int unknown = 0;
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        uint64_t limited = 0, whole = 0, from_start = 0;
        char *a = batch_answer(db, steps[i], &limited);
        ordo__observe_token_limit = UINT64_MAX / 4; /* every document whole */
        char *b = batch_answer(db, steps[i], &whole);
        ordo__observe_token_limit = 0;
        char *c = batch_answer(bare, steps[i], &from_start);
        ASSERT_EQ_STR(a, b);
        ASSERT_EQ_STR(a, c);
        ASSERT(limited * 3 < whole * 2);
        unknown += unknown_lengths(a);
        free(a);
        free(b);
        free(c);
    }
    ASSERT(unknown >= 5);
    uint64_t tokenized = 0;
    ordo__observe_token_limit = 3; /* cut every 3 tokens: tokenized again and again */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        free(batch_answer(db, steps[i], &tokenized));
    free(batch_answer(bare, 29, &tokenized));
    ordo__observe_token_limit = 0;
}

TEST(batch_provenance_is_the_ledger_batch_traced_to_shard_records_tiktoken)
{
    write_corpus();
    copy_ranks("r50k_base");
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    record_elastic_run(write_recipe(
        "recipe.json",
        "{\"kind\": \"tiktoken\", \"encoding\": \"r50k_base\", \"path\": \"r50k_base.tiktoken\"}",
        NULL));
    ordo_tokenizer *tok = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open("r50k_base", test_path("r50k_base.tiktoken"), &tok, &err), &err);
    check_random_steps(tok, 30);
    ordo_tokenizer_close(tok);
}

static int same_sample(const ordo_batch_sample *a, const ordo_batch_sample *b, int len)
{
    if (a->lane != b->lane || a->source != b->source || a->piece_count != b->piece_count ||
        memcmp(a->tokens, b->tokens, (size_t)len * sizeof *a->tokens) != 0)
        return 0;
    for (int i = 0; i < a->piece_count; i++) {
        const ordo_batch_piece *x = &a->pieces[i], *y = &b->pieces[i];
        if (strcmp(x->shard, y->shard) || x->record != y->record || x->byte != y->byte ||
            x->start != y->start || x->end != y->end || x->at != y->at)
            return 0;
    }
    return 1;
}

static const char weights_from_7[] =
    "\"schedule\": [{\"step\": 1, \"weights\": {\"a\": 0.5, \"b\": 0.5}}, {\"step\": 7, "
    "\"weights\": {\"a\": %s, \"b\": %s}}],";

/* Two runs of the same lanes whose recipes differ in a schedule entry from
 * step 7 (a flush epoch's first step): their batches are equal before it
 * and at it differ in exactly the lanes ordo_compare_runs names. */
TEST(batch_provenance_of_runs_diverging_at_a_schedule_entry)
{
    write_corpus();
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    char mix[512];
    snprintf(mix, sizeof mix, weights_from_7, "0.9", "0.1");
    const char *one = write_recipe("one.json", "{\"kind\": \"bytes\"}", mix);
    snprintf(mix, sizeof mix, weights_from_7, "0.2", "0.8");
    const char *two = write_recipe("two.json", "{\"kind\": \"bytes\"}", mix);
    free(ordo_ok(A("run", one, "--db", db, "--name", "one", "--world-size", "2", "--steps", "7",
                   "--checkpoint-every", "4", "--quiet"),
                 0));
    free(ordo_ok(
        A("run", two, "--db", db, "--name", "two", "--world-size", "4", "--steps", "7", "--quiet"),
        0));
    ordo_ledger *ledger = open_ledger();
    int64_t a = run_id(ledger, "one"), b = run_id(ledger, "two");
    ordo_compare_result result, *cmp = &result;
    ordo_error err;
    ASSERT_OK(ordo_compare_runs(ledger, a, b, cmp, &err), &err);
    ASSERT_EQ_INT(cmp->first_divergent_step, 7);
    ASSERT(cmp->lane_count > 0);
    for (int64_t step = 1; step <= 7; step++) {
        ordo_provenance *pa = NULL, *pb = NULL;
        ASSERT_OK(ordo_batch_provenance(ledger, a, step, NULL, &pa, &err), &err);
        ASSERT_OK(ordo_batch_provenance(ledger, b, step, NULL, &pb, &err), &err);
        ASSERT_EQ_INT(pa->rows, pb->rows);
        int differ[8] = {0};
        for (int row = 0; row < pa->rows; row++)
            if (!same_sample(&pa->samples[row], &pb->samples[row], pa->sample_len))
                differ[pa->samples[row].lane] = 1;
        for (int lane = 0; lane < 8; lane++) {
            int named = 0;
            for (size_t i = 0; i < cmp->lane_count; i++)
                named |= cmp->lanes[i] == lane;
            ASSERT_EQ_INT(differ[lane], step < 7 ? 0 : named);
            ASSERT_EQ_INT(memcmp(pa->lane_digests + lane * 32, pb->lane_digests + lane * 32, 32) !=
                              0,
                          differ[lane]);
        }
        ordo_provenance_free(pa);
        ordo_provenance_free(pb);
    }
    ordo_compare_result_free(cmp);
    ordo_ledger_close(ledger);
}

static void expect_refusal(ordo_ledger *ledger, int64_t run, int64_t step, ordo_status status,
                           const char *const *needles)
{
    ordo_provenance *p = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_batch_provenance(ledger, run, step, NULL, &p, &err), status, &err);
    ASSERT(p == NULL);
    for (int i = 0; needles[i]; i++)
        ASSERT_CONTAINS(err.message, needles[i]);
}

/* Replaces lane 5's first packer position in run 1's checkpoint at step
 * 10 (offset + 1), returning the original state (owned). */
/* Changed data is refused naming step, lane and file: a shard whose bytes
 * changed since the run, a tampered checkpoint, a lane digest the ledger
 * holds that the batch does not reproduce; so are steps the run did not
 * record and rank-bound runs. */
TEST(batch_provenance_refuses_changed_shards_checkpoints_and_digests)
{
    write_corpus();
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    const char *recipe = write_recipe("recipe.json", "{\"kind\": \"bytes\"}", NULL);
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "r", "--world-size", "2", "--steps", "12",
                   "--checkpoint-every", "5", "--quiet"),
                 0));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "rank", "--world-size", "2", "--steps", "3",
                   "--lane-binding", "rank", "--quiet"),
                 0));
    ordo_ledger *ledger = open_ledger();
    /* a shard changed in place, same size: its chunks no longer match */
    size_t size = 0;
    char *shard = test_read_file(test_path("data/b-0.jsonl"), &size), *copy = calloc(1, size + 1);
    memcpy(copy, shard, size);
    for (char *at = copy; (at = strstr(at, "doc ")); at += 4)
        memcpy(at, "DOC ", 4);
    test_write_file(test_path("data/b-0.jsonl"), copy, size);
    expect_refusal(ledger, 1, 3, ORDO_CONFLICT,
                   A("step 3 of run 'r'", "lane ", "data/b-0.jsonl", "changed"));
    cli_result r = run_ordo(NULL, A("batch", "r", "--db", db, "--step", "3"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "step 3 of run 'r'");
    ASSERT_CONTAINS(r.err, "data/b-0.jsonl");
    cli_result_free(&r);
    test_write_file(test_path("data/b-0.jsonl"), shard, size);
    free(shard);
    free(copy);
    /* a tampered lane state (recorded with step 10, the first of epoch
     * 10-12): that epoch's steps refused, naming the state; others read */
    fixture_tamper_state(db, "epoch_states", 1, 10, 5);
    expect_refusal(ledger, 1, 12, ORDO_CONFLICT,
                   A("step 12 of run 'r'", "regenerated step 10 of lane 5",
                     "from the lane state recorded with step 10", "ledger.db"));
    ordo_provenance *p = NULL;
    ordo_error err;
    ASSERT_OK(ordo_batch_provenance(ledger, 1, 9, NULL, &p, &err), &err);
    ASSERT_EQ_INT(p->from_step, 6);
    ASSERT_EQ_STR(p->from, "epoch");
    ordo_provenance_free(p);
    /* a lane digest in the ledger that the regenerated batch does not reproduce */
    recorded step8 = {0};
    ASSERT_OK(ordo_steps_scan(ledger, 1, 8, 8, keep_step, &step8, &err), &err);
    memset(step8.lanes + 2 * ORDO_DIGEST_SIZE, 0, ORDO_DIGEST_SIZE);
    char sql[1024];
    int n = sprintf(sql, "UPDATE steps SET lane_digests = X'");
    for (size_t i = 0; i < sizeof step8.lanes; i++)
        n += sprintf(sql + n, "%02x", step8.lanes[i]);
    sprintf(sql + n, "' WHERE key = (1 << 40) + 8");
    fixture_sql(db, sql);
    expect_refusal(ledger, 1, 8, ORDO_CONFLICT,
                   A("step 8 of run 'r'", "regenerated step 8 of lane 2", "ledger recorded 0000"));
    expect_refusal(ledger, 1, 9, ORDO_CONFLICT, A("step 9 of run 'r'", "step 8 of lane 2"));
    /* without lane states: a checkpoint in the step's epoch (10) stands for
     * one, a tampered one is refused by the replay naming it; a checkpoint
     * before the epoch (5) by the resume check */
    fixture_sql(db, "DELETE FROM epoch_states");
    fixture_tamper_state(db, "checkpoints", 1, 10, 5);
    expect_refusal(
        ledger, 1, 11, ORDO_CONFLICT,
        A("step 11 of run 'r'", "lane 5", "from the checkpoint at step 10", "ledger.db"));
    fixture_tamper_state(db, "checkpoints", 1, 5, 3);
    expect_refusal(ledger, 1, 8, ORDO_INVALID,
                   A("step 8 of run 'r'", "lane 3", "checkpoint at step 5", "ledger.db"));
    ASSERT_OK(ordo_batch_provenance(ledger, 1, 3, NULL, &p, &err), &err);
    ASSERT_EQ_INT(p->from_step, 0);
    ASSERT_EQ_STR(p->from, "start");
    ordo_provenance_free(p);
    /* steps not recorded, other bindings */
    expect_refusal(ledger, 1, 13, ORDO_NOTFOUND, A("step 13 of run 'r'", "steps 1 to 12"));
    expect_refusal(ledger, 1, 0, ORDO_NOTFOUND, A("step 0 of run 'r'"));
    expect_refusal(ledger, 2, 2, ORDO_INVALID, A("step 2 of run 'rank'", "rank-bound"));
    ordo_ledger_close(ledger);
    /* a run whose digests another loader made */
    ASSERT_OK(ordo_ledger_open(db, 0, &ledger, &err), &err);
    ordo_run_info r1;
    ASSERT_OK(ordo_run_get(ledger, "r", &r1, &err), &err);
    ordo_run_spec spec = {
        .name = "foreign", .recipe_id = r1.recipe_id, .lanes = 8, .digest_kind = "xxh3"};
    int64_t foreign = 0;
    ASSERT_OK(ordo_run_create(ledger, &spec, &foreign, &err), &err);
    expect_refusal(ledger, foreign, 1, ORDO_INVALID,
                   A("step 1 of run 'foreign'", "digests are of kind 'xxh3'"));
    ordo_ledger_close(ledger);
}

/* Compressed shards: source a's files gzipped as they are (blank, empty
 * and filtered-out lines kept), source b's written by ordo shard as
 * .jsonl.zst frames of 4 documents: records are lines of the decompressed
 * shard, counted across chunks, byte offsets unknown (-1). */
TEST(batch_provenance_traces_gzip_and_zstd_shards_by_record)
{
    write_corpus();
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
    mkdir(test_path("gz"), 0755);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gzip -c data/a-0.jsonl > gz/a-0.jsonl.gz && "
             "gzip -c data/a-1.jsonl > gz/a-1.jsonl.gz && mkdir raw && mv data/b-0.jsonl raw/",
             test_path(""));
    ASSERT_EQ_INT(system(cmd), 0);
    free(ordo_ok(A("shard", "--out", test_path("zst"), "--docs-per-frame", "4", test_path("raw")),
                 0));
    const char *text =
        "{\"seed\": 7, \"seq_len\": 20, \"global_batch\": 16, \"lanes\": 8, \"flush_every\": "
        "3, \"shuffle\": true, \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": ["
        "{\"name\": \"a\", \"paths\": [\"gz/*.jsonl.gz\"], \"weight\": 0.6, \"filter\": "
        "{\"field\": \"q\", \"ge\": 1}}, {\"name\": \"b\", \"paths\": [\"zst/*.jsonl.zst\"], "
        "\"weight\": 0.4}]}";
    test_write_file(test_path("recipe.json"), text, strlen(text));
    const char *recipe = corpus_kept(test_path("recipe.json"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "r", "--world-size", "2", "--steps", "8",
                   "--checkpoint-every", "4", "--quiet"),
                 0));
    free(ordo_ok(A("resume", "r", "--db", db, "--world-size", "4", "--steps", "14", "--quiet"), 0));
    check_random_steps(NULL, 14);
    uint64_t before = atomic_load(&ordo__units_read_on);
    ordo__observe_read_limit = 1; /* gzip's reader parses the records before a position */
    check_random_steps(NULL, 14);
    ordo__observe_read_limit = 0;
    ASSERT(atomic_load(&ordo__units_read_on) > before);
}
