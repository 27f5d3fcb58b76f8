/* A recipe's plan as a document (ordo_recipe_plan_export, ordo_recipe_open_plan):
 * a rank opens the recipe from it without hashing or indexing the corpus,
 * gets the batches a normal open gives, and is still stopped by a changed
 * chunk; bad documents are refused naming what is wrong. */
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <zlib.h>

#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A recipe over the .jsonl files of data/, 8 records a chunk; its path. */
static const char *plan_recipe(void)
{
    const char *text = "{\"seed\": 5, \"seq_len\": 16, \"global_batch\": 8, \"lanes\": 4, "
                       "\"flush_every\": 2, \"chunk_records\": 8, \"tokenizer\": {\"kind\": "
                       "\"bytes\"}, \"sources\": [{\"name\": \"a\", \"paths\": "
                       "[\"data/a-*.jsonl\"], \"weight\": 2}, {\"name\": \"b\", \"paths\": "
                       "[\"data/b-*.jsonl\"], \"weight\": 1}]}";
    test_write_file(test_path("r.json"), text, strlen(text));
    return test_path("r.json");
}

/* Indexes the recipe into l.db and returns its plan (free) and id. */
static char *indexed_plan(char id[ORDO_DIGEST_HEX_SIZE])
{
    corpus_jsonl("data", "a", 2, 90, 20, 300, 51);
    corpus_jsonl("data", "b", 1, 60, 20, 300, 52);
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    ordo_recipe *r = NULL;
    ASSERT_OK(ordo_recipe_load_with(plan_recipe(), ledger, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    memcpy(id, ordo_recipe_id(r), ORDO_DIGEST_HEX_SIZE);
    char *plan = NULL;
    size_t size = 0;
    ASSERT_OK(ordo_recipe_plan_export(ledger, id, &plan, &size, &err), &err);
    ASSERT_EQ_INT((long long)size, (long long)strlen(plan));
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
    return plan;
}

static const char *data_root(void)
{
    return corpus_kept(test_path(""));
}

/* The first `steps` batches of rank `rank` of 2, concatenated: tokens and
 * lane digests. */
static char *batches(const ordo_recipe *r, int rank, int steps, size_t *size)
{
    ordo_loader_options o = {
        .rank = rank, .world_size = 2, .read_workers = 2, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    char *out = NULL;
    *size = 0;
    FILE *f = open_memstream(&out, size);
    ordo_batch b;
    for (int s = 0; s < steps; s++) {
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        fwrite(b.tokens, sizeof *b.tokens, (size_t)b.rows * (size_t)b.sample_len, f);
        fwrite(b.lane_digests, ORDO_DIGEST_SIZE, (size_t)b.lane_count, f);
    }
    fclose(f);
    ordo_loader_close(l);
    return out;
}

TEST(recipe_opened_from_its_plan_hashes_nothing_and_gives_the_same_batches)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    char *plan = indexed_plan(id);
    ordo_error err;
    ordo_recipe *normal = NULL, *planned = NULL;
    ASSERT_OK(ordo_recipe_load(test_path("r.json"), &normal, &err), &err);
    ASSERT_OK(ordo_recipe_index(normal, NULL, NULL, NULL, &err), &err);
    ASSERT_OK(ordo_recipe_open_plan(plan, strlen(plan), id, data_root(), &planned, &err), &err);
    ASSERT_EQ_STR(ordo_recipe_id(planned), id);
    int hashed = -1;
    uint64_t bytes = 1;
    ordo_recipe_hashed(planned, &hashed, &bytes);
    ASSERT_EQ_INT(hashed, 0);
    ASSERT_EQ_INT((long long)bytes, 0);
    ASSERT_EQ_INT(ordo_recipe_indexed_shards(planned), 0);
    /* the plan is the index: sources as measured by a full open */
    for (int s = 0; s < 2; s++) {
        ordo_source_info a, b;
        ASSERT_OK(ordo_recipe_source(normal, s, &a, &err), &err);
        ASSERT_OK(ordo_recipe_source(planned, s, &b, &err), &err);
        ASSERT_EQ_INT((long long)a.chunks, (long long)b.chunks);
        ASSERT_EQ_INT((long long)a.records, (long long)b.records);
        ASSERT(a.tokens_per_byte == b.tokens_per_byte);
    }
    for (int rank = 0; rank < 2; rank++) {
        size_t na = 0, nb = 0;
        char *a = batches(normal, rank, 12, &na), *b = batches(planned, rank, 12, &nb);
        ASSERT_EQ_INT((long long)na, (long long)nb);
        ASSERT(memcmp(a, b, na) == 0);
        free(a);
        free(b);
    }
    ordo_recipe_free(normal);
    ordo_recipe_free(planned);
    free(plan);
}

/* A .jsonl.gz copy of a test file, in members of about `member` bytes
 * (each a gzip access point the index records in the shard's aux bytes). */
static void gzip_copy(const char *from, const char *to, size_t member)
{
    size_t size = 0;
    char *text = test_read_file(test_path(from), &size);
    FILE *out = fopen(test_path(to), "wb");
    ASSERT(text != NULL && out != NULL);
    for (size_t at = 0; at < size;) {
        size_t n = size - at < member ? size - at : member;
        while (at + n < size && text[at + n - 1] != '\n')
            n++; /* members end at line ends */
        z_stream z = {0};
        ASSERT(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        unsigned char *buf = malloc(deflateBound(&z, (uLong)n));
        z.next_in = (unsigned char *)text + at;
        z.avail_in = (uInt)n;
        z.next_out = buf;
        z.avail_out = (uInt)deflateBound(&z, (uLong)n);
        ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
        ASSERT(fwrite(buf, 1, z.total_out, out) == z.total_out);
        deflateEnd(&z);
        free(buf);
        at += n;
    }
    ASSERT(fclose(out) == 0);
    free(text);
}

TEST(plan_keeps_the_locators_of_zstd_and_gzip_shards)
{
    corpus_jsonl("in", "z", 1, 120, 20, 300, 55);
    corpus_jsonl("in", "g", 1, 120, 20, 300, 56);
    free(ordo_ok(
        A("shard", "--out", test_path("zst"), "--docs-per-frame", "10", test_path("in/z-0.jsonl")),
        0));
    gzip_copy("in/g-0.jsonl", "g.jsonl.gz", 2000);
    const char *text = "{\"seed\": 8, \"seq_len\": 16, \"global_batch\": 8, \"lanes\": 4, "
                       "\"flush_every\": 2, \"tokenizer\": {\"kind\": \"bytes\"}, "
                       "\"sources\": [{\"name\": \"z\", \"paths\": [\"zst/*.jsonl.zst\"], "
                       "\"weight\": 1}, {\"name\": \"g\", \"paths\": [\"g.jsonl.gz\"], "
                       "\"weight\": 1}]}";
    test_write_file(test_path("r.json"), text, strlen(text));
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    ordo_recipe *normal = NULL, *planned = NULL;
    ASSERT_OK(ordo_recipe_load_with(test_path("r.json"), ledger, &normal, &err), &err);
    ASSERT_OK(ordo_recipe_index(normal, ledger, NULL, NULL, &err), &err);
    char *plan = NULL;
    ASSERT_OK(ordo_recipe_plan_export(ledger, ordo_recipe_id(normal), &plan, NULL, &err), &err);
    ordo_ledger_close(ledger);
    /* the gzip shard's chunk carries its access point: its aux is not empty */
    json_t *doc = json_loads(plan, 0, NULL);
    json_t *gz = json_array_get(
        json_object_get(json_array_get(json_object_get(doc, "sources"), 1), "shards"), 0);
    ASSERT(json_integer_value(json_object_get(gz, "chunk_count")) >= 1);
    ASSERT(json_string_length(json_object_get(gz, "aux")) > 0);
    json_decref(doc);
    ASSERT_OK(ordo_recipe_open_plan(plan, strlen(plan), ordo_recipe_id(normal), data_root(),
                                    &planned, &err),
              &err);
    int hashed = -1;
    ordo_recipe_hashed(planned, &hashed, NULL);
    ASSERT_EQ_INT(hashed, 0);
    for (int rank = 0; rank < 2; rank++) {
        size_t na = 0, nb = 0;
        char *a = batches(normal, rank, 16, &na), *b = batches(planned, rank, 16, &nb);
        ASSERT_EQ_INT((long long)na, (long long)nb);
        ASSERT(memcmp(a, b, na) == 0);
        free(a);
        free(b);
    }
    ordo_recipe_free(normal);
    ordo_recipe_free(planned);
    free(plan);
}

TEST(plan_export_names_an_unknown_or_unindexed_recipe)
{
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    char *plan = NULL;
    const char *unknown = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    ASSERT_STATUS(ordo_recipe_plan_export(ledger, unknown, &plan, NULL, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, unknown);
    ASSERT(plan == NULL);
    /* stored (as POST /api/recipes does) but never indexed */
    corpus_jsonl("data", "a", 1, 20, 20, 100, 53);
    corpus_jsonl("data", "b", 1, 20, 20, 100, 54);
    ordo_recipe *r = NULL;
    ASSERT_OK(ordo_recipe_load(plan_recipe(), &r, &err), &err);
    char id[ORDO_DIGEST_HEX_SIZE];
    const char *canonical = ordo_recipe_canonical(r);
    ASSERT_OK(ordo_recipe_put(ledger, canonical, strlen(canonical), id, &err), &err);
    ASSERT_STATUS(ordo_recipe_plan_export(ledger, id, &plan, NULL, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, "is not indexed");
    ASSERT_CONTAINS(err.message, id);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
}

/* Opens `text` as a plan of `id`: the status, with err's message. */
static ordo_status open_text(const char *text, size_t size, const char *id, ordo_error *err)
{
    ordo_recipe *r = NULL;
    ordo_status status = ordo_recipe_open_plan(text, size, id, data_root(), &r, err);
    ordo_recipe_free(r);
    return status;
}

/* The plan with one change made by `edit` on its JSON, opened. */
static ordo_status open_edited(const char *plan, const char *id, void (*edit)(json_t *),
                               ordo_error *err)
{
    json_t *doc = json_loads(plan, 0, NULL);
    ASSERT(doc != NULL);
    edit(doc);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    ordo_status status = open_text(text, strlen(text), id, err);
    free(text);
    return status;
}

static json_t *first_shard(json_t *doc)
{
    json_t *source = json_array_get(json_object_get(doc, "sources"), 0);
    return json_array_get(json_object_get(source, "shards"), 0);
}

static void other_digest(json_t *doc)
{
    json_object_set_new(first_shard(doc), "sha256",
                        json_string("00000000000000000000000000000000000000000000000000000000000000"
                                    "00"));
}

static void short_table(json_t *doc)
{
    json_t *shard = first_shard(doc);
    json_object_set_new(
        shard, "chunk_count",
        json_integer(json_integer_value(json_object_get(shard, "chunk_count")) + 1));
}

/* The first chunk's offset moved past the end of its shard. */
static void chunk_past_end(json_t *doc)
{
    json_t *shard = first_shard(doc);
    const char *text = json_string_value(json_object_get(shard, "chunks"));
    size_t n = strlen(text);
    unsigned char *raw = malloc(n);
    int size = ordo__base64_decode_into(text, n, raw);
    ASSERT(size >= 80);
    raw[7] = 0x7f; /* offset, little-endian: its top byte */
    char *again = ordo__base64_encode(raw, (size_t)size);
    json_object_set_new(shard, "chunks", json_string(again));
    free(again);
    free(raw);
}

static void other_seed(json_t *doc)
{
    json_object_set_new(json_object_get(doc, "recipe"), "seed", json_integer(6));
}

static void newer_version(json_t *doc)
{
    json_object_set_new(doc, "version", json_integer(ORDO_PLAN_VERSION + 1));
}

static void unresolved(json_t *doc)
{
    json_t *source = json_array_get(json_object_get(json_object_get(doc, "recipe"), "sources"), 0);
    json_object_set_new(source, "paths", json_pack("[s]", "data/*.jsonl"));
}

static void sources_swapped(json_t *doc)
{
    json_t *sources = json_object_get(doc, "sources");
    json_t *first = json_incref(json_array_get(sources, 0));
    json_array_remove(sources, 0);
    json_array_append_new(sources, first);
}

static void no_estimate(json_t *doc)
{
    json_object_del(json_array_get(json_object_get(doc, "sources"), 1), "estimate");
}

TEST(plan_refuses_truncated_malformed_foreign_and_mismatched_documents)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    char *plan = indexed_plan(id);
    size_t size = strlen(plan);
    ordo_error err;
    ASSERT_OK(open_text(plan, size, id, &err), &err);
    ASSERT_OK(open_text(plan, size, NULL, &err), &err); /* any recipe's */
    /* truncated: every cut is refused, naming the byte */
    for (size_t cut = 0; cut < size; cut += size / 97 + 1) {
        ASSERT_STATUS(open_text(plan, cut, id, &err), ORDO_INVALID, &err);
        ASSERT_CONTAINS(err.message, "plan: malformed at line 1");
    }
    ASSERT_STATUS(open_text("[1, 2]", 6, id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "not an ordo plan");
    ASSERT_STATUS(open_text("{\"format\": \"ordo-plan\", \"format\": 1}", 36, id, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "duplicate");
    /* another recipe's plan */
    const char *other = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
    ASSERT_STATUS(open_text(plan, size, other, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, id);
    ASSERT_CONTAINS(err.message, other);
    /* a shard digest that is not the recipe's: both named */
    ASSERT_STATUS(open_edited(plan, id, other_digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "data/a-0.jsonl");
    ASSERT_CONTAINS(err.message, "its SHA-256 is 0000000000");
    ASSERT_CONTAINS(err.message, " in the plan, ");
    ASSERT_STATUS(open_edited(plan, id, short_table, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "'chunks' is not base64 of");
    ASSERT_STATUS(open_edited(plan, id, chunk_past_end, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "chunk 0: bytes ");
    ASSERT_CONTAINS(err.message, "lie past the shard's");
    ASSERT_STATUS(open_edited(plan, id, other_seed, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "not the 'recipe_id'");
    ASSERT_STATUS(open_edited(plan, id, newer_version, &err), ORDO_VERSION, &err);
    ASSERT_CONTAINS(err.message, "plan: version 2, this library reads version 1");
    ASSERT_STATUS(open_edited(plan, id, unresolved, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "is not resolved");
    ASSERT_STATUS(open_edited(plan, id, sources_swapped, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "sources[0] is not the recipe's source 'a'");
    ASSERT_STATUS(open_edited(plan, id, no_estimate, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "source 'b' needs an estimate");
    free(plan);
}

TEST(recipe_opened_from_its_plan_stops_at_a_changed_chunk)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    char *plan = indexed_plan(id);
    /* one byte of a shard changed after indexing (its size stays) */
    const char *shard = test_path("data/b-0.jsonl");
    size_t size = 0;
    char *text = test_read_file(shard, &size);
    char *at = strstr(text + size / 2, "\"text\": \"") + 9;
    *at = *at == 'x' ? 'y' : 'x';
    test_write_file(shard, text, size);
    free(text);
    ordo_error err;
    ordo_recipe *r = NULL;
    ASSERT_OK(ordo_recipe_open_plan(plan, strlen(plan), id, data_root(), &r, &err), &err);
    int hashed = -1;
    ordo_recipe_hashed(r, &hashed, NULL);
    ASSERT_EQ_INT(hashed, 0);
    ordo_loader_options o = {.rank = 0, .world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    ordo_batch b;
    int steps = 0;
    ordo_status status = ORDO_OK;
    while (steps < 10000 && (status = ordo_loader_next(l, &b, &err)) == ORDO_OK)
        steps++;
    ASSERT_EQ_INT(status, ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "data/b-0.jsonl' changed since it was indexed: chunk ");
    ASSERT_CONTAINS(err.message, "had SHA-256 ");
    ASSERT_CONTAINS(err.message, ", now ");
    ordo_loader_close(l);
    ordo_recipe_free(r);
    free(plan);
}
