/* Parsing recipes: canonical JSON and ids, bad JSON named by position,
 * weights that must add up to a finite number. */
#include "corpus.h"
#include "fixtures.h"

TEST(recipe_canonical_form_and_id)
{
    const char *a = "{ \"b\": {\"d\": 0.5, \"c\": \"\xc3\xa9\"},\n  \"a\": [1, 2] }";
    const char *b = "{\"a\":[1,2],\"b\":{\"c\":\"\\u00e9\",\"d\":0.5}}";
    char *canonical = NULL;
    char id_a[ORDO_DIGEST_HEX_SIZE], id_b[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_canonicalize(a, strlen(a), &canonical, id_a, &err), &err);
    ASSERT_EQ_STR(canonical, "{\"a\":[1,2],\"b\":{\"c\":\"\xc3\xa9\",\"d\":0.5}}");
    ASSERT_EQ_STR(id_a, "f4c35cd050cc0327f1a54a5cfa6ccbd1bb02f0edeb2abae1ecedbb9892d7d656");
    ordo_free(canonical);
    ASSERT_OK(ordo_recipe_canonicalize(b, strlen(b), NULL, id_b, &err), &err);
    ASSERT_EQ_STR(id_a, id_b);
}

TEST(recipe_bad_json_is_refused_with_position)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    const char *broken = "{\"a\": 1,\n \"b\": }";
    ASSERT_STATUS(ordo_recipe_canonicalize(broken, strlen(broken), NULL, id, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "line 2");
    ASSERT_CONTAINS(err.message, "column");
    const char *dup = "{\"a\": 1, \"a\": 2}";
    ASSERT_STATUS(ordo_recipe_canonicalize(dup, strlen(dup), NULL, id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "duplicate");
    ASSERT_STATUS(ordo_recipe_canonicalize("[1]", 3, NULL, id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "must be an object");
    const char bad_utf8[] = "{\"a\": \"\xff\xfe\"}";
    ASSERT_STATUS(ordo_recipe_canonicalize(bad_utf8, sizeof bad_utf8 - 1, NULL, id, &err),
                  ORDO_INVALID, &err);
    ASSERT_STATUS(ordo_recipe_canonicalize("", 0, NULL, id, &err), ORDO_INVALID, &err);
}

TEST(recipe_weights_must_add_up_to_a_finite_number)
{
    corpus_jsonl("data", "doc", 1, 5, 3, 20, 16);
    const char *recipe =
        corpus_recipe("recipe.json", 4, 8, 16, 1, 2,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1e308},"
                      " {\"name\": \"b\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1e308}]");
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_recipe_load(recipe, &r, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "weights add up");
    ASSERT(r == NULL);
}
