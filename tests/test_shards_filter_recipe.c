/* Filters in recipes: parse errors naming the path, limits, the canonical
 * form in the recipe id and as the key of the ledger's chunk tables. */
#include <jansson.h>
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
