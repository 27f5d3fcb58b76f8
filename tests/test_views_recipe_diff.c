/* How two recipes differ (ordo_recipe_diff): value by value, sources by
 * name, shards by path, keys in order; and the comparison of two runs
 * carrying it (ordo_compare_runs, ordo_compare_result_json). */
#include <jansson.h>

#include "fixtures.h"

/* A resolved recipe as ordo_recipe_canonical writes it, with a filter of
 * the shape sources take ({"all": [conditions]}); `web_weight`,
 * `threshold`, `text_field` and the second shard's digest vary. */
static char *canonical(const char *web_weight, const char *threshold, const char *text_field,
                       char digest)
{
    char *text = malloc(2048);
    ASSERT(text != NULL);
    snprintf(text, 2048,
             "{\"chunk_records\":256,\"data_algorithm\":2,\"global_batch\":8,\"lanes\":4,"
             "\"name\":\"mix\",\"seed\":7,\"sources\":["
             "{\"filter\":{\"all\":[{\"field\":\"lang\",\"eq\":\"en\"},"
             "{\"field\":\"metadata.score\",\"ge\":%s}]},\"name\":\"web\","
             "\"shards\":[{\"bytes\":10,\"path\":\"web/0.jsonl\",\"sha256\":\"aa\"},"
             "{\"bytes\":12,\"path\":\"web/1.jsonl\",\"sha256\":\"%c%c\"}],"
             "\"text_field\":\"%s\",\"weight\":%s},"
             "{\"name\":\"books\",\"shards\":[{\"bytes\":5,\"path\":\"books/0.txt\","
             "\"sha256\":\"cc\"}],\"text_field\":\"text\",\"weight\":0.3}],"
             "\"tokenizer\":{\"kind\":\"bytes\"}}",
             threshold, digest, digest, text_field, web_weight);
    return text;
}

static char *diff_of(const char *a, const char *b)
{
    char *diff = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_diff(a, b, &diff, &err), &err);
    ASSERT(diff != NULL);
    return diff;
}

/* The rule the dashboard leans on: a changed filter threshold is one entry
 * at its own path, sources named, array indexes in brackets. */
TEST(recipe_diff_shows_a_changed_filter_threshold)
{
    char *a = canonical("0.7", "0.65", "text", 'b'), *b = canonical("0.7", "0.7", "text", 'b');
    char *diff = diff_of(a, b);
    ASSERT_EQ_STR(diff, "[{\"key\":\"sources.web.filter.all[1].ge\",\"a\":0.65,\"b\":0.7}]");
    ordo_free(diff);
    free(a);
    free(b);
}

TEST(recipe_diff_of_the_same_recipe_is_empty)
{
    char *a = canonical("0.7", "0.65", "text", 'b');
    char *diff = diff_of(a, a);
    ASSERT_EQ_STR(diff, "[]");
    ordo_free(diff);
    /* the same values in another key order are the same recipe */
    diff = diff_of("{\"x\":1,\"y\":[1,2]}", "{\"y\":[1,2],\"x\":1}");
    ASSERT_EQ_STR(diff, "[]");
    ordo_free(diff);
    free(a);
}

/* Weights, text fields and shard digests: each a path of its own, in key
 * order (books before web, bytes before sha256), shards by path. */
TEST(recipe_diff_names_sources_by_name_and_shards_by_path)
{
    char *a = canonical("0.7", "0.65", "text", 'b'), *b = canonical("0.5", "0.65", "body", 'd');
    char *diff = diff_of(a, b);
    ASSERT_EQ_STR(diff, "[{\"key\":\"sources.web.shards[\\\"web/1.jsonl\\\"].sha256\",\"a\":"
                        "\"bb\",\"b\":\"dd\"},"
                        "{\"key\":\"sources.web.text_field\",\"a\":\"text\",\"b\":\"body\"},"
                        "{\"key\":\"sources.web.weight\",\"a\":0.7,\"b\":0.5}]");
    ordo_free(diff);
    free(a);
    free(b);
}

/* What exists on one side only is one entry with the whole value: a
 * source, a shard, a schedule; schedule entries by index. */
TEST(recipe_diff_gives_what_one_side_alone_holds_whole)
{
    const char *a =
        "{\"schedule\":[{\"step\":1,\"weights\":{\"web\":0.9}}],"
        "\"sources\":[{\"name\":\"web\",\"shards\":[{\"path\":\"w0\",\"sha256\":\"aa\"}]}]}";
    const char *b =
        "{\"schedule\":[{\"step\":1,\"weights\":{\"web\":0.8}},{\"step\":50,\"weights\":"
        "{\"web\":0.5}}],\"sources\":[{\"name\":\"web\",\"shards\":[{\"path\":\"w0\","
        "\"sha256\":\"aa\"},{\"path\":\"w1\",\"sha256\":\"bb\"}]},{\"name\":\"code\"}]}";
    char *diff = diff_of(a, b);
    ASSERT_EQ_STR(
        diff, "[{\"key\":\"schedule[0].weights.web\",\"a\":0.9,\"b\":0.8},"
              "{\"key\":\"schedule[1]\",\"a\":null,\"b\":{\"step\":50,\"weights\":{\"web\":0.5}}},"
              "{\"key\":\"sources.code\",\"a\":null,\"b\":{\"name\":\"code\"}},"
              "{\"key\":\"sources.web.shards.w1\",\"a\":null,\"b\":{\"path\":\"w1\",\"sha256\":"
              "\"bb\"}}]");
    ordo_free(diff);
    /* a key of one side only, and values of another JSON type */
    diff = diff_of("{\"lanes\":4,\"tokenizer\":{\"kind\":\"bytes\"}}",
                   "{\"lanes\":4.0,\"shuffle\":true,\"tokenizer\":\"bytes\"}");
    ASSERT_EQ_STR(diff, "[{\"key\":\"lanes\",\"a\":4,\"b\":4.0},"
                        "{\"key\":\"shuffle\",\"a\":null,\"b\":true},"
                        "{\"key\":\"tokenizer\",\"a\":{\"kind\":\"bytes\"},\"b\":\"bytes\"}]");
    ordo_free(diff);
}

/* Sources in another order cut other batches: matched by name, their
 * order is an entry of its own. Keys that are not plain words are quoted. */
TEST(recipe_diff_tells_source_order_and_quotes_odd_keys)
{
    char *diff = diff_of("{\"sources\":[{\"name\":\"web\",\"weight\":1},{\"name\":\"my books\"}]}",
                         "{\"sources\":[{\"name\":\"my books\"},{\"name\":\"web\",\"weight\":2}]}");
    ASSERT_EQ_STR(diff, "[{\"key\":\"sources[*].name\",\"a\":[\"web\",\"my books\"],"
                        "\"b\":[\"my books\",\"web\"]},"
                        "{\"key\":\"sources.web.weight\",\"a\":1,\"b\":2}]");
    ordo_free(diff);
    diff = diff_of("{\"sources\":[{\"name\":\"0\",\"weight\":1}]}",
                   "{\"sources\":[{\"name\":\"0\",\"weight\":2}]}");
    ASSERT_EQ_STR(diff, "[{\"key\":\"sources[\\\"0\\\"].weight\",\"a\":1,\"b\":2}]");
    ordo_free(diff);
    /* elements without distinct names are compared by index */
    diff = diff_of("{\"sources\":[{\"name\":\"a\"},{\"name\":\"a\",\"weight\":1}]}",
                   "{\"sources\":[{\"name\":\"a\"},{\"name\":\"a\",\"weight\":2}]}");
    ASSERT_EQ_STR(diff, "[{\"key\":\"sources[1].weight\",\"a\":1,\"b\":2}]");
    ordo_free(diff);
}

TEST(recipe_diff_refuses_what_is_not_a_recipe_object)
{
    char *diff = (char *)"unset";
    ordo_error err;
    ASSERT_STATUS(ordo_recipe_diff("{\"a\":1}", "[1]", &diff, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "recipe b is not a JSON object");
    ASSERT(diff == NULL);
    ASSERT_STATUS(ordo_recipe_diff("{\"a\":", "{}", &diff, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "recipe a is not a JSON object");
}

/* Two runs of recipes that differ in a weight: the comparison carries the
 * diff, and its JSON view (ordo compare --json, the service) shows it. */
TEST(compare_runs_carries_the_recipe_diff)
{
    ordo_ledger *ledger = fixture_open("diff.db");
    ordo_error err;
    const char *ra =
        "{\"lanes\":4,\"global_batch\":8,\"sources\":[{\"name\":\"web\",\"weight\":0.7}]}";
    const char *rb =
        "{\"lanes\":4,\"global_batch\":8,\"sources\":[{\"name\":\"web\",\"weight\":0.6}]}";
    char ida[ORDO_DIGEST_HEX_SIZE], idb[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, ra, strlen(ra), ida, &err), &err);
    ASSERT_OK(ordo_recipe_put(ledger, rb, strlen(rb), idb, &err), &err);
    int64_t run[3];
    const char *names[3] = {"x", "y", "z"}, *ids[3] = {ida, idb, ida};
    for (int i = 0; i < 3; i++) {
        ordo_run_spec spec = {.name = names[i], .recipe_id = ids[i], .lanes = 4};
        ASSERT_OK(ordo_run_create(ledger, &spec, &run[i], &err), &err);
    }
    ordo_compare_result r;
    ASSERT_OK(ordo_compare_runs(ledger, run[0], run[1], &r, &err), &err);
    ASSERT_EQ_STR(r.recipe_a, ida);
    ASSERT_EQ_STR(r.recipe_b, idb);
    ASSERT_EQ_STR(r.recipe_diff, "[{\"key\":\"sources.web.weight\",\"a\":0.7,\"b\":0.6}]");
    char *json = ordo_compare_result_json("x", "y", &r);
    json_t *view = json_loads(json, 0, NULL);
    ASSERT(view != NULL);
    json_t *entry = json_array_get(json_object_get(view, "recipe_diff"), 0);
    ASSERT_EQ_STR(json_string_value(json_object_get(entry, "key")), "sources.web.weight");
    ASSERT(json_real_value(json_object_get(entry, "b")) == 0.6);
    ASSERT(json_is_false(json_object_get(json_object_get(view, "recipes"), "same")));
    ASSERT_EQ_STR(json_string_value(json_object_get(json_object_get(view, "recipes"), "b")), idb);
    json_decref(view);
    ordo_free(json);
    ordo_compare_result_free(&r);
    ASSERT(r.recipe_diff == NULL);
    /* the same recipe: an empty list */
    ASSERT_OK(ordo_compare_runs(ledger, run[0], run[2], &r, &err), &err);
    ASSERT_EQ_STR(r.recipe_diff, "[]");
    json = ordo_compare_result_json("x", "z", &r);
    ASSERT_CONTAINS(json, "\"recipe_diff\":[]");
    ASSERT_CONTAINS(json, "\"same\":true");
    ordo_free(json);
    ordo_compare_result_free(&r);
    ordo_ledger_close(ledger);
}

/* A stored recipe that is not a JSON object (a damaged ledger) stops the
 * comparison naming it, and leaves nothing behind. */
TEST(compare_runs_names_a_damaged_stored_recipe)
{
    ordo_ledger *ledger = fixture_open("damaged.db");
    ordo_error err;
    const char *ra = "{\"lanes\":4,\"global_batch\":8}", *rb = "{\"lanes\":4,\"global_batch\":16}";
    char ida[ORDO_DIGEST_HEX_SIZE], idb[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, ra, strlen(ra), ida, &err), &err);
    ASSERT_OK(ordo_recipe_put(ledger, rb, strlen(rb), idb, &err), &err);
    int64_t run[2];
    const char *names[2] = {"x", "y"}, *ids[2] = {ida, idb};
    for (int i = 0; i < 2; i++) {
        ordo_run_spec spec = {.name = names[i], .recipe_id = ids[i], .lanes = 4};
        ASSERT_OK(ordo_run_create(ledger, &spec, &run[i], &err), &err);
    }
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE recipes SET canonical = '[1, 2]' WHERE id = '%s'", idb);
    fixture_sql(test_path("damaged.db"), sql);
    ordo_compare_result r;
    ASSERT_STATUS(ordo_compare_runs(ledger, run[0], run[1], &r, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, idb);
    ASSERT_CONTAINS(err.message, "must be a JSON object");
    ASSERT(r.recipe_diff == NULL);
    ordo_ledger_close(ledger);
}
