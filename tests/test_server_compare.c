/* The service's compare over real HTTP: how the two runs' recipes differ
 * is the library's recipe diff, as `ordo compare --json` prints it. */
#include <jansson.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *two_sources(const char *file, const char *weight_a, const char *weight_b)
{
    char sources[512];
    snprintf(sources, sizeof sources,
             "[{\"name\": \"a\", \"paths\": [\"data/doc-0.jsonl\"], \"weight\": %s},"
             " {\"name\": \"b\", \"paths\": [\"data/doc-1.jsonl\"], \"weight\": %s}]",
             weight_a, weight_b);
    return corpus_kept(corpus_recipe(file, 4, 8, 16, 2, 0, sources));
}

/* What the library says of runs a and b (ordo_compare_result_json). */
static json_t *library_view(const char *db, const char *a, const char *b)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ordo_run_info ra, rb;
    ordo_compare_result r;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    ASSERT_OK(ordo_run_get(ledger, a, &ra, &err), &err);
    ASSERT_OK(ordo_run_get(ledger, b, &rb, &err), &err);
    ASSERT_OK(ordo_compare_runs(ledger, ra.id, rb.id, &r, &err), &err);
    char *text = ordo_compare_result_json(a, b, &r);
    json_t *view = json_loads(text, 0, NULL);
    ASSERT(view != NULL);
    ordo_free(text);
    ordo_compare_result_free(&r);
    ordo_ledger_close(ledger);
    return view;
}

TEST(server_compare_gives_the_recipe_diff)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 120, 17);
    const char *x = two_sources("x.json", "0.5", "0.5"), *y = two_sources("y.json", "0.7", "0.5");
    char db[1024];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    const char *runs[][2] = {{x, "x"}, {y, "y"}, {x, "x2"}};
    for (int i = 0; i < 3; i++)
        free(ordo_ok(A("run", runs[i][0], "--db", db, "--name", runs[i][1], "--world-size", "2",
                       "--steps", "2", "--quiet"),
                     0));
    test_server s;
    server_up(&s, db, NULL);
    http_result r = http(&s, "GET", "/api/compare?a=x&b=y", NULL, NULL);
    ASSERT_EQ_INT(r.status, 200);
    json_t *diff = json_object_get(r.json, "recipe_diff");
    ASSERT_EQ_INT(json_array_size(diff), 2); /* the recipes' names (their files'), a weight */
    ASSERT_EQ_STR(json_string_value(json_object_get(json_array_get(diff, 0), "key")), "name");
    json_t *entry = json_array_get(diff, 1);
    ASSERT_EQ_STR(json_string_value(json_object_get(entry, "key")), "sources.a.weight");
    ASSERT(json_real_value(json_object_get(entry, "a")) == 0.5);
    ASSERT(json_real_value(json_object_get(entry, "b")) == 0.7);
    ASSERT(json_is_false(json_object_get(json_object_get(r.json, "recipes"), "same")));
    json_t *library = library_view(db, "x", "y");
    ASSERT(json_equal(diff, json_object_get(library, "recipe_diff")));
    ASSERT(json_equal(json_object_get(r.json, "recipes"), json_object_get(library, "recipes")));
    json_decref(library);
    http_free(&r);
    /* the same recipe: an empty list */
    r = http(&s, "GET", "/api/compare?a=x&b=x2", NULL, NULL);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "recipe_diff")), 0);
    ASSERT(json_is_array(json_object_get(r.json, "recipe_diff")));
    ASSERT(json_is_true(json_object_get(json_object_get(r.json, "recipes"), "same")));
    http_free(&r);
    server_down(&s);
}
