/* Filters over shards: type errors naming field, file and record; counts
 * of a filtered index against an independent reference
 * (tests/filter_reference.py); a filtered recipe run end to end at two
 * world sizes. */
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "testing.h"

static ordo__filter *compile(const char *text)
{
    json_error_t jerr;
    json_t *spec = json_loads(text, 0, &jerr);
    if (!spec)
        test_fail(__FILE__, __LINE__, "bad test JSON %s: %s", text, jerr.text);
    ordo__filter *filter = NULL;
    ordo_error err;
    ASSERT_OK(ordo__filter_compile(spec, "web", &filter, &err), &err);
    json_decref(spec);
    return filter;
}

/* Indexes the .jsonl shard at `path` with `filter` (NULL: none). */
static ordo_status index_shard(const char *path, const ordo__filter *filter, const char *text_field,
                               ordo__shard *shard, ordo_error *err)
{
    *shard = (ordo__shard){.path = (char *)path, .format = ORDO_FORMAT_JSONL};
    ASSERT_OK(ordo__sha256_file(path, shard->sha256, &shard->size, err), err);
    ordo__index_spec spec = {.read = {text_field, filter, 0, 0},
                             .per_chunk = 7,
                             .chunk_limit = ORDO__CHUNK_MIN,
                             .lanes = 1};
    return ordo__shard_index(path, shard, &spec, err);
}

TEST(filter_type_error_names_field_file_and_record)
{
    const char data[] = "{\"text\": \"one\", \"language_score\": 0.9}\n"
                        "{\"text\": \"two\"}\n"
                        "{\"text\": \"three\", \"language_score\": \"0.9\"}\n";
    const char *path = corpus_kept(test_path("scores.jsonl"));
    test_write_file(path, data, sizeof data - 1);
    ordo__filter *filter = compile("{\"field\": \"language_score\", \"ge\": 0.65}");
    ordo__shard shard;
    ordo_error err;
    ASSERT_STATUS(index_shard(path, filter, "text", &shard, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, path);
    ASSERT_CONTAINS(err.message, "line 3");
    ASSERT_CONTAINS(err.message, "record at byte 55");
    ASSERT_CONTAINS(err.message, "field 'language_score' is a string");
    ASSERT_CONTAINS(err.message, "with a number");
    ASSERT(shard.chunks == NULL); /* nothing half-indexed */
    ordo__filter_free(filter);
    /* the same error through a whole recipe, found when it is indexed */
    mkdir(test_path("data"), 0755);
    test_write_file(test_path("data/scores.jsonl"), data, sizeof data - 1);
    const char text[] =
        "{\"seed\": 1, \"seq_len\": 16, \"global_batch\": 1, \"lanes\": 1, \"sources\": "
        "[{\"name\": \"web\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1, \"filter\": "
        "{\"field\": \"language_score\", \"ge\": 0.65}}]}";
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path(""));
    ordo_recipe *r = NULL;
    ASSERT_OK(ordo_recipe_parse(text, sizeof text - 1, root, 0, &r, &err), &err);
    ASSERT_STATUS(ordo_recipe_index(r, NULL, NULL, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "data/scores.jsonl': line 3, record at byte 55: filter: field "
                                 "'language_score' is a string");
    ordo_recipe_free(r);
}

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 8) & 0xffffff;
}

static const char *pick(unsigned *state, const char *const *options, size_t n)
{
    return options[next_random(state) % n];
}

#define PICK(state, options) pick(state, options, sizeof options / sizeof *options)

/* A .jsonl shard of uneven records: fields missing or null, integers and
 * reals, nested objects and paths through non-objects, names with spaces,
 * escaped and raw UTF-8, blank lines, keys in two orders. */
static void unfriendly_shard(const char *path, int records, unsigned seed)
{
    static const char *const words[] = {
        "data",      "caf\\u00e9", "\xce\xbb", "\\ud83d\\ude00", "\xf0\x9f\x98\x80",
        "\\\"q\\\"", "a\\nb",      "tok"};
    static const char *const langs[] = {"\"language\": \"en\", ",
                                        "\"language\": \"fr\", ",
                                        "\"language\": \"de\", ",
                                        "\"language\": null, ",
                                        "",
                                        "\"language\": \"EN\", "};
    static const char *const scores[] = {"",
                                         "\"language_score\": null, ",
                                         "\"language_score\": 0, ",
                                         "\"language_score\": 1, ",
                                         "\"language_score\": 0.65, ",
                                         "\"language_score\": 0.6499999999999999, ",
                                         "\"language_score\": 0.65000000000000013, ",
                                         "\"language_score\": 0.9, "};
    static const char *const urls[] = {"", "\"url\": \"http://example.com/\", ",
                                       "\"url\": \"http://example.com/x\", "};
    static const char *const dumps[] = {"", "\"dump\": null, ", "\"dump\": \"CC-MAIN-2024-10\", ",
                                        "\"dump\": \"CC-MAIN-2023-50\", "};
    static const char *const counts[] = {"",
                                         "\"token_count\": 1999, ",
                                         "\"token_count\": 2000, ",
                                         "\"token_count\": 1999.5, ",
                                         "\"token_count\": 2000.0, ",
                                         "\"token_count\": 3e3, ",
                                         "\"token_count\": -1, "};
    static const char *const metas[] = {"",
                                        "\"meta data\": {\"quality\": {\"score\": 0.5}}, ",
                                        "\"meta data\": {\"quality\": {\"score\": 1}}, ",
                                        "\"meta data\": {\"quality\": {\"score\": 0.25}}, ",
                                        "\"meta data\": {\"quality\": {\"score\": null}}, ",
                                        "\"meta data\": {\"quality\": null}, ",
                                        "\"meta data\": \"not an object\", ",
                                        "\"meta data\": [1, 2], "};
    static const char *const bigs[] = {
        "", "\"big\": 9007199254740993, ", "\"big\": 9007199254740992, ",
        "\"big\": 9007199254740992.0, ", "\"big\": -9223372036854775808, "};
    static const char *const flags[] = {"", "\"flag\": true, ", "\"flag\": false, ",
                                        "\"flag\": null, "};
    static const char *const kinds[] = {
        "\"kind\": \"s\", \"v\": \"keep\", ", "\"kind\": \"s\", \"v\": \"skip\", ",
        "\"kind\": \"n\", \"v\": 0.5, ", "\"kind\": \"n\", \"v\": 7, ",
        "\"kind\": \"n\", \"v\": null, "};
    static const char *const names[] = {"", "\"name with spaces\": \"\xc3\xa9\", ",
                                        "\"name with spaces\": \"e\\u0301\", ",
                                        "\"name with spaces\": \"x\", "};
    FILE *out = fopen(path, "w");
    ASSERT(out != NULL);
    unsigned state = seed;
    for (int i = 0; i < records; i++) {
        unsigned roll = next_random(&state) % 100;
        if (roll < 3) {
            fprintf(out, roll == 0 ? "\n" : " \t\n");
            continue;
        }
        char text[2048];
        size_t at = 0;
        if (roll < 6) {
            snprintf(text, sizeof text, "%s", roll < 5 ? "null" : "\"\"");
        } else {
            int len = (int)(next_random(&state) % 400);
            text[at++] = '"';
            while ((int)at < len + 1)
                at += (size_t)snprintf(text + at, sizeof text - at, " %s", PICK(&state, words));
            snprintf(text + at, sizeof text - at, "\"");
        }
        const char *fields[] = {PICK(&state, langs), PICK(&state, scores), PICK(&state, urls),
                                PICK(&state, dumps), PICK(&state, counts), PICK(&state, metas),
                                PICK(&state, bigs),  PICK(&state, flags),  PICK(&state, kinds),
                                PICK(&state, names)};
        int text_first = next_random(&state) % 2;
        fprintf(out, "{");
        if (text_first)
            fprintf(out, "\"text\": %s, ", text);
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            fprintf(out, "%s", fields[f]);
        if (!text_first)
            fprintf(out, "\"text\": %s, ", text);
        fprintf(out, "\"id\": %d}\n", i);
    }
    ASSERT(fclose(out) == 0);
}

static int keep_record(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)len;
    json_array_append_new(context, json_integer((json_int_t)record));
    return 0;
}

/* What tests/filter_reference.py says of `filter` over the shard; *failed
 * (NULL: must not) receives whether it found a type error. */
static json_t *reference_counts(const char *filter, const char *shard, int *failed)
{
    const char *script = "tests/filter_reference.py";
    if (access(script, R_OK) != 0)
        test_fail(__FILE__, __LINE__, "%s not found: run the tests from the checkout's top",
                  script);
    const char *filter_path = corpus_kept(test_path("filter.json"));
    test_write_file(filter_path, filter, strlen(filter));
    char command[4096];
    snprintf(command, sizeof command, "/usr/bin/python3 %s '%s' '%s' text", script, filter_path,
             shard);
    FILE *p = popen(command, "r");
    ASSERT(p != NULL);
    char output[1 << 16];
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    json_t *result = json_loads(output, 0, NULL);
    if (failed)
        *failed = status != 0;
    if ((status != 0 && !failed) || !result)
        test_fail(__FILE__, __LINE__, "%s: exit %d: %s", command, status, output);
    return result;
}

TEST(filter_counts_match_an_independent_reference)
{
    static const char *const filters[] = {
        "{\"all\": [{\"field\": \"language\", \"in\": [\"en\"]}, {\"field\": \"language_score\", "
        "\"ge\": 0.65}, {\"field\": \"$bytes\", \"ge\": 200}, {\"not\": {\"field\": \"url\", "
        "\"eq\": \"http://example.com/\"}}, {\"any\": [{\"field\": \"dump\", \"eq\": "
        "\"CC-MAIN-2024-10\"}, {\"field\": \"token_count\", \"lt\": 2000}]}]}",
        "{\"any\": [{\"all\": [{\"field\": \"meta data.quality.score\", \"ge\": 0.5}, {\"field\": "
        "\"flag\", \"ne\": false}]}, {\"all\": [{\"field\": \"big\", \"gt\": 9007199254740992.0}, "
        "{\"field\": \"name with spaces\", \"in\": [\"\\u00e9\", \"x\"]}]}, {\"all\": [{\"field\": "
        "\"kind\", \"eq\": \"s\"}, {\"field\": \"v\", \"ne\": \"skip\"}]}, {\"all\": [{\"field\": "
        "\"kind\", \"eq\": \"n\"}, {\"field\": \"v\", \"le\": 0.5}, {\"not\": {\"field\": "
        "\"language\", \"exists\": true}}]}, {\"field\": \"token_count\", \"in\": [2000, "
        "1999.5]}]}",
        "{\"not\": {\"any\": [{\"field\": \"language_score\", \"lt\": 0.65}, {\"field\": \"dump\", "
        "\"not_in\": [\"CC-MAIN-2024-10\"]}, {\"field\": \"$bytes\", \"le\": 50}]}}",
        "{\"all\": [{\"field\": \"big\", \"not_in\": [9007199254740992.0, -1]}, {\"field\": "
        "\"meta data.quality\", \"exists\": false}, {\"field\": \"flag\", \"exists\": true}]}",
    };
    const char *shard_path = corpus_kept(test_path("unfriendly.jsonl"));
    unfriendly_shard(shard_path, 3000, 17);
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
        json_t *want = reference_counts(filters[i], shard_path, NULL);
        ordo__filter *filter = compile(filters[i]);
        ordo__shard shard;
        ordo_error err;
        ASSERT_OK(index_shard(shard_path, filter, "text", &shard, &err), &err);
        ASSERT_EQ_INT(shard.counts.read, json_integer_value(json_object_get(want, "read")));
        ASSERT_EQ_INT(shard.counts.passed, json_integer_value(json_object_get(want, "passed")));
        ASSERT_EQ_INT(shard.counts.filtered, json_integer_value(json_object_get(want, "filtered")));
        ASSERT_EQ_INT(shard.counts.empty, json_integer_value(json_object_get(want, "empty")));
        ASSERT(shard.counts.passed > 20 && shard.counts.filtered > 20); /* both sides seen */
        uint64_t in_chunks = 0;
        for (uint32_t c = 0; c < shard.chunk_count; c++)
            in_chunks += shard.chunks[c].records;
        ASSERT_EQ_INT(in_chunks, shard.counts.passed);
        /* the very records kept, in order */
        json_t *kept = json_array();
        ordo__read_spec spec = {"text", filter, 0, 0};
        ordo__counts counts = {0};
        ASSERT_OK(
            ordo__file_scan(shard_path, ORDO_FORMAT_JSONL, &spec, keep_record, kept, &counts, &err),
            &err);
        ASSERT(json_equal(kept, json_object_get(want, "kept")));
        json_decref(kept);
        free(shard.chunks);
        free(shard.aux);
        ordo__filter_free(filter);
        json_decref(want);
    }
}

TEST(filter_type_error_found_where_the_reference_finds_it)
{
    /* "v" is a string where "kind" is "s": guarded, no error; unguarded,
     * the first such record stops the index */
    const char *shard_path = corpus_kept(test_path("unfriendly.jsonl"));
    unfriendly_shard(shard_path, 500, 5);
    int failed = 0;
    const char guarded[] = "{\"any\": [{\"field\": \"kind\", \"eq\": \"s\"}, {\"field\": "
                           "\"v\", \"ge\": 1}]}";
    json_decref(reference_counts(guarded, shard_path, &failed));
    ASSERT(!failed);
    ordo__filter *filter = compile(guarded);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_shard(shard_path, filter, "text", &shard, &err), &err);
    free(shard.chunks);
    ordo__filter_free(filter);
    const char bare[] = "{\"field\": \"v\", \"ge\": 1}";
    json_t *want = reference_counts(bare, shard_path, &failed);
    ASSERT(failed);
    filter = compile(bare);
    ASSERT_STATUS(index_shard(shard_path, filter, "text", &shard, &err), ORDO_INVALID, &err);
    char line[64];
    snprintf(line, sizeof line, "': line %lld, record at byte",
             (long long)json_integer_value(json_object_get(want, "record")) + 1);
    ASSERT_CONTAINS(err.message, line);
    ASSERT_CONTAINS(err.message, "unfriendly.jsonl");
    ASSERT_CONTAINS(err.message, "field 'v' is a string, and the filter compares it ('ge') with "
                                 "a number");
    ordo__filter_free(filter);
    json_decref(want);
}

/* Two .jsonl files whose documents either pass {"all": [meta.keep is true,
 * $bytes >= 30]} and hold only "abcdefgh " bytes, or do not and hold an
 * 'X'. */
static json_t *marked_corpus(void)
{
    json_t *passing = json_object(); /* the passing texts, as keys */
    mkdir(test_path("marked"), 0755);
    unsigned state = 99;
    for (int f = 0; f < 2; f++) {
        char name[64];
        snprintf(name, sizeof name, "marked/part-%d.jsonl", f);
        FILE *out = fopen(test_path(name), "w");
        ASSERT(out != NULL);
        for (int i = 0; i < 400; i++) {
            static const char *const keeps[] = {"true", "false", "null", "1", "\"true\""};
            unsigned k = next_random(&state) % 6; /* 5: no meta.keep at all */
            int len = 5 + (int)(next_random(&state) % 120);
            int pass = k == 0 && len >= 30;
            char text[160];
            for (int c = 0; c < len; c++)
                text[c] = "abcdefgh "[next_random(&state) % 9];
            if (!pass)
                text[next_random(&state) % len] = 'X';
            text[len] = '\0';
            if (pass)
                json_object_set_new(passing, text, json_true());
            if (k == 5)
                fprintf(out, "{\"text\": \"%s\", \"meta\": {}}\n", text);
            else if (k == 3 || k == 4)
                fprintf(out, "{\"meta\": {\"other\": %s}, \"text\": \"%s\"}\n", keeps[k], text);
            else
                fprintf(out, "{\"meta\": {\"keep\": %s}, \"text\": \"%s\"}\n", keeps[k], text);
        }
        ASSERT(fclose(out) == 0);
    }
    return passing;
}

/* The tokens of `steps` batches of the loader for `world` ranks, rank by
 * rank in each step (lanes in order), into `tokens`. */
static void run_world(const ordo_recipe *r, int world, int steps, uint32_t *tokens, size_t per_step)
{
    ordo_loader *loaders[4] = {NULL};
    ordo_error err;
    for (int rank = 0; rank < world; rank++) {
        ordo_loader_options o = {.rank = rank,
                                 .world_size = world,
                                 .read_workers = world == 1 ? 2 : 1,
                                 .tokenize_workers = world == 1 ? 2 : 1};
        ASSERT_OK(ordo_loader_open(r, &o, &loaders[rank], &err), &err);
    }
    for (int step = 0; step < steps; step++) {
        size_t at = 0;
        for (int rank = 0; rank < world; rank++) {
            ordo_batch b;
            ASSERT_OK(ordo_loader_next(loaders[rank], &b, &err), &err);
            size_t n = (size_t)b.rows * (size_t)b.seq_len;
            memcpy(tokens + step * per_step + at, b.tokens, n * sizeof *tokens);
            at += n;
        }
        ASSERT_EQ_INT(at, per_step);
    }
    for (int rank = 0; rank < world; rank++)
        ordo_loader_close(loaders[rank]);
}

TEST(filtered_recipe_delivers_only_passing_documents_at_any_world_size)
{
    json_t *passing = marked_corpus();
    const char text[] =
        "{\"seed\": 7, \"seq_len\": 256, \"global_batch\": 8, \"lanes\": 4, \"flush_every\": 2, "
        "\"chunk_records\": 16, \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": [{\"name\": "
        "\"web\", \"paths\": [\"marked/*.jsonl\"], \"weight\": 1, \"filter\": {\"all\": "
        "[{\"field\": \"meta.keep\", \"eq\": true}, {\"field\": \"$bytes\", \"ge\": 30}]}}]}";
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path(""));
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_parse(text, sizeof text - 1, root, 0, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    enum { STEPS = 30, SEQ = 256, PER_STEP = 8 * SEQ };
    static uint32_t one[STEPS * PER_STEP], four[STEPS * PER_STEP];
    run_world(r, 1, STEPS, one, PER_STEP);
    run_world(r, 4, STEPS, four, PER_STEP);
    ASSERT(memcmp(one, four, sizeof one) == 0);
    /* every byte delivered is of a passing document: never an 'X'; and
     * every document whole within a sample, decoded, is a passing one */
    size_t whole = 0;
    for (size_t row = 0; row < sizeof one / sizeof *one / SEQ; row++) {
        const uint32_t *t = one + row * SEQ;
        int last_end = -1;
        for (int i = 0; i < SEQ; i++) {
            if (t[i] == 'X')
                test_fail(__FILE__, __LINE__,
                          "row %zu token %d is 'X': a filtered-out document "
                          "was read",
                          row, i);
            ASSERT(t[i] == 256 || (t[i] != 0 && strchr("abcdefgh ", (int)t[i]) != NULL));
            if (t[i] != 256)
                continue;
            if (last_end >= 0) {
                char doc[SEQ + 1];
                int n = 0;
                for (int j = last_end + 1; j < i; j++)
                    doc[n++] = (char)t[j];
                doc[n] = '\0';
                if (!json_object_get(passing, doc))
                    test_fail(__FILE__, __LINE__, "document \"%s\" is not a passing one", doc);
                whole++;
            }
            last_end = i;
        }
    }
    ASSERT(whole > 100);
    json_decref(passing);
    ordo_recipe_free(r);
}
