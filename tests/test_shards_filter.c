/* Filters: every predicate and combinator, missing and null fields, nested
 * paths, exact numbers, type errors naming field, file and record, parse
 * errors naming the path, the canonical form in the recipe id, counts
 * against an independent reference (tests/filter_reference.py), and a
 * filtered recipe run end to end at two world sizes. */
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
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

typedef struct {
    const json_t *record;
    const ordo__filter *filter;
} record_fields;

static ordo_status record_field(void *context, uint32_t field, ordo__field_value *out,
                                ordo_error *err)
{
    (void)err;
    const record_fields *f = context;
    ordo__json_value(ordo__json_path(f->record, ordo__filter_field(f->filter, field)), out);
    return ORDO_OK;
}

/* 1: the record passes, 0: it does not, -1: an error (its message in
 * `message`, when given). */
static int decide(const char *filter_text, const char *record_text, size_t bytes, char *message)
{
    ordo__filter *filter = compile(filter_text);
    json_t *record = json_loads(record_text, 0, NULL);
    ASSERT(record != NULL);
    record_fields fields = {record, filter};
    ordo_error err;
    int pass = 7;
    ordo_status status = ordo__filter_eval(filter, bytes, record_field, &fields, &pass, &err);
    if (message)
        snprintf(message, ORDO_ERROR_MESSAGE_SIZE, "%s", status == ORDO_OK ? "" : err.message);
    json_decref(record);
    ordo__filter_free(filter);
    ASSERT(pass == 0 || pass == 1);
    return status == ORDO_OK ? pass : -1;
}

typedef struct {
    const char *filter, *record;
    int expect;
} filter_case;

static void check_cases(const filter_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char message[ORDO_ERROR_MESSAGE_SIZE];
        int got = decide(cases[i].filter, cases[i].record, 300, message);
        if (got != cases[i].expect)
            test_fail(__FILE__, __LINE__, "case %zu: filter %s on %s: %d, expected %d (%s)", i,
                      cases[i].filter, cases[i].record, got, cases[i].expect, message);
    }
}

#define CASES(array) check_cases(array, sizeof array / sizeof *array)

TEST(filter_every_predicate)
{
    static const filter_case cases[] = {
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 3}", 1},
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 3.0}", 1},
        {"{\"field\": \"n\", \"eq\": 3}", "{\"n\": 4}", 0},
        {"{\"field\": \"n\", \"ne\": 3}", "{\"n\": 4}", 1},
        {"{\"field\": \"n\", \"ne\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"lt\": 3}", "{\"n\": 2.5}", 1},
        {"{\"field\": \"n\", \"lt\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"le\": 3}", "{\"n\": 3}", 1},
        {"{\"field\": \"n\", \"le\": 3}", "{\"n\": 3.5}", 0},
        {"{\"field\": \"n\", \"gt\": 3}", "{\"n\": 3.5}", 1},
        {"{\"field\": \"n\", \"gt\": 3}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"ge\": 0.65}", "{\"n\": 0.65}", 1},
        {"{\"field\": \"n\", \"ge\": 0.65}", "{\"n\": 0.6499999}", 0},
        {"{\"field\": \"n\", \"ge\": -1}", "{\"n\": -1}", 1},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"en\"}", 1},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"EN\"}", 0},
        {"{\"field\": \"s\", \"eq\": \"en\"}", "{\"s\": \"en \"}", 0},
        {"{\"field\": \"s\", \"ne\": \"en\"}", "{\"s\": \"fr\"}", 1},
        {"{\"field\": \"s\", \"eq\": \"caf\\u00e9\"}", "{\"s\": \"caf\xc3\xa9\"}", 1},
        {"{\"field\": \"b\", \"eq\": true}", "{\"b\": true}", 1},
        {"{\"field\": \"b\", \"eq\": true}", "{\"b\": false}", 0},
        {"{\"field\": \"b\", \"ne\": true}", "{\"b\": false}", 1},
        {"{\"field\": \"s\", \"in\": [\"en\", \"de\"]}", "{\"s\": \"de\"}", 1},
        {"{\"field\": \"s\", \"in\": [\"en\", \"de\"]}", "{\"s\": \"fr\"}", 0},
        {"{\"field\": \"s\", \"not_in\": [\"en\", \"de\"]}", "{\"s\": \"fr\"}", 1},
        {"{\"field\": \"s\", \"not_in\": [\"en\", \"de\"]}", "{\"s\": \"en\"}", 0},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 2.5}", 1},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 7.0}", 1},
        {"{\"field\": \"n\", \"in\": [1, 2.5, 7]}", "{\"n\": 3}", 0},
        {"{\"field\": \"n\", \"not_in\": [1, 2.5, 7]}", "{\"n\": 3}", 1},
        {"{\"field\": \"b\", \"in\": [false]}", "{\"b\": false}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"x\": 0}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"x\": {}}", 1},
        {"{\"field\": \"x\", \"exists\": true}", "{\"y\": 0}", 0},
        {"{\"field\": \"x\", \"exists\": false}", "{\"y\": 0}", 1},
        {"{\"field\": \"x\", \"exists\": false}", "{\"x\": \"\"}", 0},
        {"{\"field\": \"$bytes\", \"ge\": 300}", "{}", 1},
        {"{\"field\": \"$bytes\", \"gt\": 300}", "{}", 0},
        {"{\"field\": \"$bytes\", \"in\": [299, 300.0]}", "{}", 1},
    };
    CASES(cases);
}

TEST(filter_every_combinator)
{
    static const filter_case cases[] = {
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 1, \"b\": 2}", 1},
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 1, \"b\": 3}", 0},
        {"{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 0, \"b\": 2}", 1},
        {"{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 2}]}",
         "{\"a\": 0, \"b\": 0}", 0},
        {"{\"not\": {\"field\": \"a\", \"eq\": 1}}", "{\"a\": 1}", 0},
        {"{\"not\": {\"field\": \"a\", \"eq\": 1}}", "{\"a\": 2}", 1},
        {"{\"not\": {\"not\": {\"field\": \"a\", \"eq\": 1}}}", "{\"a\": 1}", 1},
        {"{\"all\": [{\"any\": [{\"field\": \"a\", \"eq\": 1}, {\"not\": {\"field\": \"b\", "
         "\"exists\": true}}]}, {\"field\": \"$bytes\", \"ge\": 200}]}",
         "{\"a\": 0}", 1},
        /* any stops at the first true, all at the first false: the
         * condition after it, a type error here, is not evaluated */
        {"{\"any\": [{\"field\": \"k\", \"eq\": \"s\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", 1},
        {"{\"all\": [{\"field\": \"k\", \"eq\": \"n\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", 0},
        {"{\"all\": [{\"field\": \"k\", \"eq\": \"s\"}, {\"field\": \"v\", \"gt\": 1}]}",
         "{\"k\": \"s\", \"v\": \"text\"}", -1},
    };
    CASES(cases);
}

TEST(filter_missing_and_null_fields_make_comparisons_false)
{
    static const char *const predicates[] = {
        "\"eq\": 1",    "\"ne\": 1",      "\"lt\": 1",          "\"le\": 1",
        "\"gt\": 1",    "\"ge\": 1",      "\"eq\": \"x\"",      "\"ne\": \"x\"",
        "\"ne\": true", "\"in\": [1, 2]", "\"not_in\": [1, 2]", "\"not_in\": [\"a\", \"b\"]"};
    static const char *const records[] = {"{}", "{\"f\": null}", "{\"other\": 1}"};
    for (size_t p = 0; p < sizeof predicates / sizeof *predicates; p++)
        for (size_t r = 0; r < 3; r++) {
            char filter[128], inverted[160];
            snprintf(filter, sizeof filter, "{\"field\": \"f\", %s}", predicates[p]);
            snprintf(inverted, sizeof inverted, "{\"not\": %s}", filter);
            if (decide(filter, records[r], 10, NULL) != 0 ||
                decide(inverted, records[r], 10, NULL) != 1)
                test_fail(__FILE__, __LINE__, "%s on %s should be false (and its not true)", filter,
                          records[r]);
        }
    ASSERT_EQ_INT(decide("{\"field\": \"f\", \"exists\": true}", "{\"f\": null}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"f\", \"exists\": false}", "{\"f\": null}", 1, NULL), 1);
    /* a missing step of a path is a missing field, and so is a step that
     * is not an object */
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"ne\": 1}", "{\"a\": null}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"ne\": 1}", "{\"a\": 5}", 1, NULL), 0);
    ASSERT_EQ_INT(decide("{\"field\": \"a.b\", \"exists\": false}", "{\"a\": [1]}", 1, NULL), 1);
}

TEST(filter_nested_paths_and_names_with_spaces)
{
    static const filter_case cases[] = {
        {"{\"field\": \"meta.quality.score\", \"ge\": 0.5}",
         "{\"meta\": {\"quality\": {\"score\": 0.75}}}", 1},
        {"{\"field\": \"meta.quality.score\", \"ge\": 0.5}",
         "{\"meta\": {\"quality\": {\"score\": 0.25}}}", 0},
        {"{\"field\": \"meta.quality\", \"exists\": true}", "{\"meta\": {\"quality\": {}}}", 1},
        {"{\"field\": \"meta data.the score\", \"eq\": 2}", "{\"meta data\": {\"the score\": 2}}",
         1},
        {"{\"field\": \"caf\\u00e9.\\u03bb\", \"eq\": \"\\u00fc\"}",
         "{\"caf\\u00e9\": {\"\\u03bb\": \"\xc3\xbc\"}}", 1},
        /* dots always separate: a key holding a dot cannot be named */
        {"{\"field\": \"a.b\", \"exists\": true}", "{\"a.b\": 1}", 0},
        {"{\"field\": \"a.b\", \"eq\": 1}", "{\"a.b\": 2, \"a\": {\"b\": 1}}", 1},
        /* an object compared with anything is a type error, even nested */
        {"{\"field\": \"meta\", \"eq\": 1}", "{\"meta\": {\"quality\": 1}}", -1},
    };
    CASES(cases);
    ordo__filter *filter =
        compile("{\"all\": [{\"field\": \"b.c\", \"eq\": 1}, {\"field\": \"a\", \"eq\": 1}, "
                "{\"field\": \"$bytes\", \"ge\": 1}, {\"field\": \"b.c\", \"ne\": 2}]}");
    ASSERT_EQ_INT(ordo__filter_field_count(filter), 2); /* first use order, $bytes apart */
    ASSERT_EQ_STR(ordo__filter_field(filter, 0), "b.c");
    ASSERT_EQ_STR(ordo__filter_field(filter, 1), "a");
    ordo__filter_free(filter);
}

TEST(filter_numbers_compare_exactly)
{
    static const filter_case cases[] = {
        /* 2^53 + 1 is not a double: an INT64 field against a double
         * threshold is compared without rounding either */
        {"{\"field\": \"n\", \"gt\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 1},
        {"{\"field\": \"n\", \"eq\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 0},
        {"{\"field\": \"n\", \"ne\": 9007199254740992.0}", "{\"n\": 9007199254740993}", 1},
        {"{\"field\": \"n\", \"lt\": 9007199254740993}", "{\"n\": 9007199254740992.0}", 1},
        {"{\"field\": \"n\", \"eq\": 9007199254740993}", "{\"n\": 9007199254740992.0}", 0},
        {"{\"field\": \"n\", \"in\": [9007199254740993]}", "{\"n\": 9007199254740992}", 0},
        {"{\"field\": \"n\", \"in\": [9007199254740992.0, 1]}", "{\"n\": 9007199254740993}", 0},
        /* INT64 max against 2^63, the double next to it */
        {"{\"field\": \"n\", \"lt\": 9223372036854775807.0}", "{\"n\": 9223372036854775807}", 1},
        {"{\"field\": \"n\", \"gt\": -9223372036854775808.0}", "{\"n\": -9223372036854775807}", 1},
        {"{\"field\": \"n\", \"ge\": -9223372036854775808.0}", "{\"n\": -9223372036854775808}", 1},
        {"{\"field\": \"n\", \"gt\": 1e300}", "{\"n\": 9223372036854775807}", 0},
        {"{\"field\": \"n\", \"lt\": -2.5}", "{\"n\": -3}", 1},
        {"{\"field\": \"n\", \"lt\": -2.5}", "{\"n\": -2}", 0},
        {"{\"field\": \"n\", \"gt\": -2.5}", "{\"n\": -2}", 1},
        {"{\"field\": \"n\", \"eq\": 0}", "{\"n\": -0.0}", 1},
        {"{\"field\": \"n\", \"ge\": 2e2}", "{\"n\": 200}", 1},
    };
    CASES(cases);
}

TEST(filter_type_errors_name_field_and_types)
{
    static const struct {
        const char *filter, *record, *got, *want;
    } cases[] = {
        {"{\"field\": \"language_score\", \"ge\": 0.65}", "{\"language_score\": \"high\"}",
         "is a string", "with a number"},
        {"{\"field\": \"lang\", \"eq\": \"en\"}", "{\"lang\": 1}", "is a number", "with a string"},
        {"{\"field\": \"flag\", \"eq\": true}", "{\"flag\": 1}", "is a number", "with a boolean"},
        {"{\"field\": \"n\", \"lt\": 1}", "{\"n\": true}", "is a boolean", "with a number"},
        {"{\"field\": \"n\", \"in\": [1, 2]}", "{\"n\": \"1\"}", "is a string", "with a number"},
        {"{\"field\": \"n\", \"not_in\": [\"a\", \"b\"]}", "{\"n\": [1]}",
         "is an object or an array", "with a string"},
        {"{\"field\": \"m.x\", \"ne\": \"a\"}", "{\"m\": {\"x\": {\"y\": 1}}}",
         "is an object or an array", "with a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char message[ORDO_ERROR_MESSAGE_SIZE];
        ASSERT_EQ_INT(decide(cases[i].filter, cases[i].record, 1, message), -1);
        json_t *spec = json_loads(cases[i].filter, 0, NULL);
        char field[64];
        snprintf(field, sizeof field, "field '%s'",
                 json_string_value(json_object_get(spec, "field")));
        json_decref(spec);
        ASSERT_CONTAINS(message, field);
        ASSERT_CONTAINS(message, cases[i].got);
        ASSERT_CONTAINS(message, cases[i].want);
    }
}

/* Indexes the .jsonl shard at `path` with `filter` (NULL: none). */
static ordo_status index_shard(const char *path, const ordo__filter *filter, const char *text_field,
                               ordo__shard *shard, ordo_error *err)
{
    *shard = (ordo__shard){.path = (char *)path, .format = ORDO_FORMAT_JSONL};
    ASSERT_OK(ordo__sha256_file(path, shard->sha256, &shard->size, err), err);
    ordo__index_spec spec = {
        .read = {text_field, filter}, .per_chunk = 7, .chunk_limit = ORDO__CHUNK_MIN, .lanes = 1};
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

/* Parses a recipe over data/a.jsonl with `filter` as its source's filter. */
static ordo_status parse_with_filter(const char *filter, ordo_recipe **recipe, ordo_error *err)
{
    mkdir(test_path("data"), 0755);
    const char line[] = "{\"text\": \"a document\"}\n";
    if (access(test_path("data/a.jsonl"), F_OK) != 0) /* else the test's own */
        test_write_file(test_path("data/a.jsonl"), line, sizeof line - 1);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    fprintf(f,
            "{\"seed\": 1, \"seq_len\": 16, \"global_batch\": 2, \"lanes\": 1, \"sources\": "
            "[{\"name\": \"web\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1, \"filter\": %s}]}",
            filter);
    fclose(f);
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path(""));
    ordo_status status = ordo_recipe_parse(text, size, root, 0, recipe, err);
    free(text);
    return status;
}

TEST(filter_parse_errors_name_the_path)
{
    static const struct {
        const char *filter, *path, *why;
    } cases[] = {
        {"[]", "sources.web.filter: ", "must be an object"},
        {"null", "sources.web.filter: ", "must be an object"},
        {"{}", "sources.web.filter: ", "an empty condition"},
        {"{\"all\": []}", "sources.web.filter.all: ", "non-empty array"},
        {"{\"any\": {}}", "sources.web.filter.any: ", "non-empty array"},
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"ge\": \"x\"}]}",
         "sources.web.filter.all[1].ge: ", "must be a number"},
        {"{\"all\": [{\"field\": \"a\", \"gte\": 1}]}",
         "sources.web.filter.all[0].gte: ", "unknown key"},
        {"{\"field\": \"a\", \"eq\": 1, \"lt\": 2}", "sources.web.filter: ", "both 'eq' and 'lt'"},
        {"{\"field\": \"a\"}", "sources.web.filter: ", "needs one operator"},
        {"{\"eq\": 1}", "sources.web.filter: ", "'eq' needs a 'field'"},
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}], \"field\": \"a\"}",
         "sources.web.filter: ", "'field' belongs to a predicate"},
        {"{\"all\": [{\"field\": \"a\", \"eq\": 1}], \"any\": []}",
         "sources.web.filter: ", "both 'all' and 'any'"},
        {"{\"not\": [1]}", "sources.web.filter.not: ", "must be an object"},
        {"{\"field\": \"\", \"eq\": 1}", "sources.web.filter.field: ", "dotted path"},
        {"{\"field\": \"a..b\", \"eq\": 1}", "sources.web.filter.field: ", "dotted path"},
        {"{\"field\": \".a\", \"eq\": 1}", "sources.web.filter.field: ", "dotted path"},
        {"{\"field\": 3, \"eq\": 1}", "sources.web.filter.field: ", "dotted path"},
        {"{\"field\": \"$tokens\", \"eq\": 1}",
         "sources.web.filter.field: ", "unknown special field"},
        {"{\"field\": \"$bytes\", \"eq\": \"x\"}", "sources.web.filter.eq: ", "compare it with"},
        {"{\"field\": \"$bytes\", \"exists\": true}",
         "sources.web.filter.exists: ", "always exists"},
        {"{\"field\": \"a\", \"eq\": null}", "sources.web.filter.eq: ", "exists"},
        {"{\"field\": \"a\", \"ne\": [1]}", "sources.web.filter.ne: ", "a string, a number or"},
        {"{\"field\": \"a\", \"lt\": true}", "sources.web.filter.lt: ", "must be a number"},
        {"{\"field\": \"a\", \"in\": []}", "sources.web.filter.in: ", "non-empty array"},
        {"{\"field\": \"a\", \"in\": \"en\"}", "sources.web.filter.in: ", "non-empty array"},
        {"{\"field\": \"a\", \"in\": [\"en\", 1]}", "sources.web.filter.in[1]: ", "of one type"},
        {"{\"field\": \"a\", \"not_in\": [1, null]}",
         "sources.web.filter.not_in[1]: ", "a string, a number or"},
        {"{\"field\": \"a\", \"exists\": 1}", "sources.web.filter.exists: ", "true or false"},
        {"{\"any\": [{\"not\": {\"all\": [{\"field\": \"a\", \"le\": {}}]}}]}",
         "sources.web.filter.any[0].not.all[0].le: ", "must be a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ordo_recipe *r = NULL;
        ordo_error err;
        ordo_status status = parse_with_filter(cases[i].filter, &r, &err);
        if (status != ORDO_INVALID || !strstr(err.message, cases[i].path) ||
            !strstr(err.message, cases[i].why))
            test_fail(__FILE__, __LINE__, "filter %s: %s (expected '%s' ... '%s')", cases[i].filter,
                      status == ORDO_OK ? "accepted" : err.message, cases[i].path, cases[i].why);
        ASSERT(r == NULL);
    }
}

/* {"not": {"not": ... n deep ... {"field": "a", "eq": 1}}} */
static char *nested(int depth)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    for (int i = 1; i < depth; i++)
        fprintf(f, "{\"not\": ");
    fprintf(f, "{\"field\": \"a\", \"eq\": 1}");
    for (int i = 1; i < depth; i++)
        fprintf(f, "}");
    fclose(f);
    return text;
}

TEST(filter_limits_are_recipe_errors)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    char *text = nested(32);
    ASSERT_OK(parse_with_filter(text, &r, &err), &err);
    ordo_recipe_free(r);
    free(text);
    text = nested(33);
    ASSERT_STATUS(parse_with_filter(text, &r, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "sources.web.filter.not.not.not");
    ASSERT_CONTAINS(err.message, "nest more than 32 deep");
    free(text);
    /* 64 fields are fine, 65 are not */
    for (int fields = 64; fields <= 65; fields++) {
        char *list = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&list, &size);
        fprintf(f, "{\"any\": [");
        for (int i = 0; i < fields; i++)
            fprintf(f, "%s{\"field\": \"f%d\", \"exists\": true}", i ? ", " : "", i);
        fprintf(f, "]}");
        fclose(f);
        ordo_status status = parse_with_filter(list, &r, &err);
        free(list);
        if (fields == 64) {
            ASSERT_OK(status, &err);
            ordo_recipe_free(r);
        } else {
            ASSERT_EQ_INT(status, ORDO_INVALID);
            ASSERT_CONTAINS(err.message, "sources.web.filter.any[64].field: ");
            ASSERT_CONTAINS(err.message, "more than 64 different fields");
        }
    }
    /* 1,024 conditions are fine, 1,025 are not; lists of 65,536 values
     * likewise */
    for (int extra = 0; extra <= 1; extra++) {
        char *many = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&many, &size);
        fprintf(f, "{\"any\": [");
        for (int i = 0; i < 1022 + extra; i++)
            fprintf(f, "%s{\"field\": \"a\", \"eq\": %d}", i ? ", " : "", i);
        fprintf(f, ", {\"field\": \"b\", \"in\": [");
        for (int i = 0; i < 65536 + extra; i++)
            fprintf(f, "%s%d", i ? ", " : "", i);
        fprintf(f, "]}]}");
        fclose(f);
        ordo_status status = parse_with_filter(many, &r, &err);
        free(many);
        if (!extra) {
            ASSERT_OK(status, &err);
            ordo_recipe_free(r);
        } else {
            ASSERT_EQ_INT(status, ORDO_INVALID);
            ASSERT_CONTAINS(err.message, "sources.web.filter.any[1023]: more than 1024 conditions");
        }
    }
    char *list = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&list, &size);
    fprintf(f, "{\"field\": \"b\", \"not_in\": [");
    for (int i = 0; i <= 65536; i++)
        fprintf(f, "%s\"v%d\"", i ? ", " : "", i);
    fprintf(f, "]}");
    fclose(f);
    ASSERT_STATUS(parse_with_filter(list, &r, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "sources.web.filter.not_in: has more than 65536 values");
    free(list);
}

static char *recipe_id_of(const char *filter)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(parse_with_filter(filter, &r, &err), &err);
    char *id = strdup(ordo_recipe_id(r));
    ordo_recipe_free(r);
    return id;
}

static char *canonical_of(const char *filter)
{
    ordo__filter *f = compile(filter);
    json_t *canonical = ordo__filter_canonical(f);
    char *text = json_dumps(canonical, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(canonical);
    ordo__filter_free(f);
    return text;
}

TEST(filter_canonical_form_gives_one_id_per_filter)
{
    static const char example[] =
        "{\"all\": [{\"field\": \"language\", \"in\": [\"en\"]}, {\"field\": \"language_score\", "
        "\"ge\": 0.65}, {\"field\": \"$bytes\", \"ge\": 200}, {\"not\": {\"field\": \"url\", "
        "\"eq\": \"http://example.com/\"}}, {\"any\": [{\"field\": \"dump\", \"eq\": "
        "\"CC-MAIN-2024-10\"}, {\"field\": \"token_count\", \"lt\": 2000}]}]}";
    /* the same filter written otherwise: keys in another order, 200.0 and
     * 2e3 for 200 and 2000, a list of one, nested all, not of not */
    static const char same[] =
        "{\"all\": [{\"in\": [\"en\", \"en\"], \"field\": \"language\"}, {\"all\": [{\"ge\": "
        "0.65, \"field\": \"language_score\"}, {\"field\": \"$bytes\", \"ge\": 200.0}]}, {\"not\": "
        "{\"not\": {\"not\": {\"field\": \"url\", \"eq\": \"http://example.com/\"}}}}, {\"any\": "
        "[{\"any\": [{\"field\": \"dump\", \"eq\": \"CC-MAIN-2024-10\"}]}, {\"field\": "
        "\"token_count\", \"lt\": 2e3}]}]}";
    char *a = canonical_of(example), *b = canonical_of(same);
    ASSERT_EQ_STR(a, b);
    /* readable: thresholds as written where a double prints exactly */
    ASSERT_CONTAINS(a, "{\"field\":\"$bytes\",\"ge\":200}");
    ASSERT_CONTAINS(a, "{\"eq\":\"en\",\"field\":\"language\"}");
    ASSERT_CONTAINS(a, "{\"field\":\"token_count\",\"lt\":2000}");
    /* compiling the canonical form gives it back */
    char *again = canonical_of(a);
    ASSERT_EQ_STR(again, a);
    free(again);
    free(a);
    free(b);
    char *id = recipe_id_of(example), *id_same = recipe_id_of(same);
    ASSERT_EQ_STR(id, id_same);
    /* lists are sets */
    char *l1 = recipe_id_of("{\"field\": \"n\", \"in\": [3, 1, 2.5, 1.0]}");
    char *l2 = recipe_id_of("{\"field\": \"n\", \"in\": [1, 2.5, 3]}");
    ASSERT_EQ_STR(l1, l2);
    free(l1);
    free(l2);
    /* a changed threshold, operator, field or order is another recipe */
    static const char *const others[] = {
        "{\"field\": \"language_score\", \"ge\": 0.7}",
        "{\"field\": \"language_score\", \"gt\": 0.65}",
        "{\"field\": \"language_score\", \"ge\": 0.65000000000000013}",
        "{\"field\": \"language_scores\", \"ge\": 0.65}",
        "{\"all\": [{\"field\": \"a\", \"eq\": 1}, {\"field\": \"b\", \"eq\": 1}]}",
        "{\"all\": [{\"field\": \"b\", \"eq\": 1}, {\"field\": \"a\", \"eq\": 1}]}",
        "{\"field\": \"a\", \"eq\": 1}",
        "{\"field\": \"a\", \"eq\": \"1\"}",
        "{\"field\": \"a\", \"eq\": true}",
    };
    char *base = recipe_id_of("{\"field\": \"language_score\", \"ge\": 0.65}");
    ASSERT(strcmp(base, id) != 0);
    char *seen[sizeof others / sizeof *others];
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        seen[i] = recipe_id_of(others[i]);
        ASSERT(strcmp(seen[i], base) != 0);
        for (size_t j = 0; j < i; j++)
            if (strcmp(seen[i], seen[j]) == 0)
                test_fail(__FILE__, __LINE__, "%s and %s give one id", others[i], others[j]);
    }
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        free(seen[i]);
    free(base);
    free(id);
    free(id_same);
}

TEST(filter_canonical_recipe_reparses_to_its_id)
{
    ordo_recipe *r = NULL, *again = NULL;
    ordo_error err;
    ASSERT_OK(parse_with_filter("{\"all\": [{\"field\": \"meta data.score\", \"ge\": 0.65}, "
                                "{\"field\": \"$bytes\", \"lt\": 1e3}]}",
                                &r, &err),
              &err);
    const char *canonical = ordo_recipe_canonical(r);
    ASSERT_CONTAINS(canonical, "\"filter\":{\"all\":[{\"field\":\"meta data.score\",\"ge\":0.65");
    ASSERT_CONTAINS(canonical, "{\"field\":\"$bytes\",\"lt\":1000}");
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path(""));
    ASSERT_OK(ordo_recipe_parse(canonical, strlen(canonical), root, 0, &again, &err), &err);
    ASSERT_EQ_STR(ordo_recipe_id(again), ordo_recipe_id(r));
    ASSERT_EQ_STR(ordo_recipe_canonical(again), canonical);
    ordo_recipe_free(again);
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
        ordo__read_spec spec = {"text", filter};
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

static ordo_status nan_field(void *context, uint32_t field, ordo__field_value *out, ordo_error *err)
{
    (void)context, (void)field, (void)err;
    *out = (ordo__field_value){.kind = ORDO__VALUE_DOUBLE, .d = NAN};
    return ORDO_OK;
}

TEST(filter_nan_equals_nothing_and_is_ordered_with_nothing)
{
    static const struct {
        const char *filter;
        int expect;
    } cases[] = {
        {"{\"field\": \"x\", \"eq\": 1}", 0},
        {"{\"field\": \"x\", \"ne\": 1}", 1},
        {"{\"field\": \"x\", \"lt\": 1}", 0},
        {"{\"field\": \"x\", \"le\": 1.5}", 0},
        {"{\"field\": \"x\", \"gt\": 1}", 0},
        {"{\"field\": \"x\", \"ge\": -1e300}", 0},
        {"{\"field\": \"x\", \"in\": [1, 2.5]}", 0},
        {"{\"field\": \"x\", \"not_in\": [1, 2.5]}", 1},
        {"{\"field\": \"x\", \"exists\": true}", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ordo__filter *filter = compile(cases[i].filter);
        ordo_error err;
        int pass = -1;
        ASSERT_OK(ordo__filter_eval(filter, 1, nan_field, NULL, &pass, &err), &err);
        if (pass != cases[i].expect)
            test_fail(__FILE__, __LINE__, "%s on NaN: %d", cases[i].filter, pass);
        ordo__filter_free(filter);
    }
}

/* Parses a recipe over data/a.jsonl with `filter` and indexes it into the
 * ledger; the documents it keeps. */
static uint64_t index_into(ordo_ledger *ledger, const char *filter)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(parse_with_filter(filter, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    ordo_source_info info;
    ASSERT_OK(ordo_recipe_source(r, 0, &info, &err), &err);
    ordo_recipe_free(r);
    return info.records;
}

TEST(filter_keys_the_ledgers_chunk_tables)
{
    mkdir(test_path("data"), 0755);
    ordo_ledger *ledger = fixture_open("l.db");
    FILE *f = fopen(test_path("data/a.jsonl"), "w");
    for (int n = 0; n < 100; n++)
        fprintf(f, "{\"text\": \"doc %d\", \"n\": %d%s}\n", n, n, n % 2 ? ".0" : "");
    fclose(f);
    const char *db = corpus_kept(test_path("l.db"));
    ASSERT_EQ_INT(index_into(ledger, "{\"field\": \"n\", \"ge\": 50}"), 50);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM shards"), 1);
    /* written otherwise: the same chunk table */
    ASSERT_EQ_INT(index_into(ledger, "{\"all\": [{\"ge\": 5e1, \"field\": \"n\"}]}"), 50);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM shards"), 1);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM shards WHERE filter = "
                                  "'{\"field\":\"n\",\"ge\":50}' AND filtered = 50"),
                  1);
    /* another threshold: another chunk table */
    ASSERT_EQ_INT(index_into(ledger, "{\"field\": \"n\", \"ge\": 50.5}"), 49);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM shards"), 2);
    ordo_ledger_close(ledger);
}
