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
static void write_corpus(void)
{
    static const char *words[] = {"data", "lane", "caf\\u00e9", "\\u03bb", "seed", "token",
                                  "r\\u00e9sum\\u00e9", "order", "batch", "\\u4e2d\\u6587"};
    char path[1024];
    mkdir(test_path("data"), 0755);
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s", test_path(f < 2 ? (f ? "data/a-1.jsonl" : "data/a-0.jsonl")
                                                          : "data/b-0.jsonl"));
        FILE *out = fopen(path, "w");
        ASSERT(out != NULL);
        for (int i = 0; i < 60; i++) {
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
            int n = f < 2 ? 3 + (i * 7 + f) % 11 : 20 + (i * 13) % 40;
            for (int w = 0; w < n; w++)
                fprintf(out, " %s", words[(i * 31 + w * 17 + f) % 10]);
            fputs("\"}\n", out);
        }
        ASSERT(fclose(out) == 0);
    }
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
 * steps, the given tokenizer and mixture ("weights" or a schedule). */
static const char *write_recipe(const char *name, const char *tokenizer, const char *mixture)
{
    char text[2048];
    int n = snprintf(
        text, sizeof text,
        "{\"seed\": 7, \"seq_len\": 20, \"global_batch\": 16, \"lanes\": 8, \"flush_every\": 3, "
        "\"shuffle\": true, \"tokenizer\": %s, %s \"sources\": ["
        "{\"name\": \"a\", \"paths\": [\"data/a-*.jsonl\"], %s \"filter\": {\"field\": \"q\", "
        "\"ge\": 1}}, {\"name\": \"b\", \"paths\": [\"data/b-*.jsonl\"] %s}]}",
        tokenizer, mixture ? mixture : "", mixture ? "" : "\"weight\": 0.6,",
        mixture ? "" : ", \"weight\": 0.4");
    test_write_file(test_path(name), text, (size_t)n);
    return corpus_kept(test_path(name));
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

/* The record at physical index `record` of a .jsonl file read whole: its
 * text (owned) and the byte offset of its line. */
static char *record_text(const char *shard, uint64_t record, int64_t *byte)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", test_path(shard));
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
            ASSERT(strncmp(b->shard, s->source == 0 ? "data/a-" : "data/b-", 7) == 0);
            ASSERT_EQ_STR(s->source_name, s->source == 0 ? "a" : "b");
            int64_t byte = -1;
            char *text = record_text(b->shard, b->record, &byte);
            ASSERT_EQ_INT(b->byte, byte);
            ordo__tokens doc = {0};
            ASSERT_OK(ordo__tokenize(r, text, strlen(text), &doc, &err), &err);
            ASSERT_OK(ordo__tokens_push(&doc, ordo__eot_id(r), &err), &err);
            ASSERT_EQ_INT(b->length, doc.count);
            ASSERT(b->start < b->end && b->end <= b->length);
            for (uint64_t t = b->start; t < b->end; t++)
                ASSERT_EQ_INT(s->tokens[b->at + (int)(t - b->start)], doc.ids[t]);
            /* the piece's text follows the text of the document's tokens before it */
            size_t before_len = 0, piece_len = 0;
            char *before = decode(tok, doc.ids, (size_t)b->start, &before_len);
            char *piece = NULL;
            ASSERT_OK(ordo_provenance_piece_text(p, row, i, &piece, &piece_len, &err), &err);
            ASSERT(before_len + piece_len <= strlen(text));
            ASSERT(memcmp(text, before, before_len) == 0);
            ASSERT(memcmp(text + before_len, piece, piece_len) == 0);
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
static void check_random_steps(const ordo_tokenizer *tok)
{
    ordo_ledger *ledger = open_ledger();
    int64_t run = run_id(ledger, "r");
    int64_t steps[10] = {1, 11, 13, 24, 30};
    unsigned x = 12345;
    for (int i = 5; i < 10; i++) {
        x = x * 1103515245u + 12345u;
        steps[i] = 1 + (int64_t)((x >> 8) % 30);
    }
    for (int i = 0; i < 10; i++) {
        ordo_provenance *p = NULL;
        ordo_error err;
        ASSERT_OK(ordo_batch_provenance(ledger, run, steps[i], NULL, &p, &err), &err);
        recorded want = {0};
        ASSERT_OK(ordo_steps_scan(ledger, run, steps[i], steps[i], keep_step, &want, &err), &err);
        ASSERT_EQ_INT(want.step, steps[i]);
        ASSERT_EQ_INT(p->step, steps[i]);
        ASSERT(p->from_step < steps[i] && steps[i] - p->from_step <= 7);
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
    check_random_steps(NULL);
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
    check_random_steps(tok);
    ordo_tokenizer_close(tok);
}
