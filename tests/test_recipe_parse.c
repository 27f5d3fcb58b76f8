/* Parsing recipes: canonical JSON and ids, bad JSON named by position,
 * weights that must add up to a finite number. */
#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

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

/* Parses `fields` (JSON members after the fixed head, sources included)
 * over a resolved source list that is never read; returns the status and
 * leaves the message in *err. */
static ordo_status parse_with(const char *fields, ordo_error *err)
{
    char json[4096];
    snprintf(json, sizeof json,
             "{\"seed\": 1, \"seq_len\": 8, \"global_batch\": 8, \"lanes\": 2, %s}", fields);
    ordo_recipe *r = NULL;
    ordo_status status = ordo_recipe_parse(json, strlen(json), "/", 0, &r, err);
    ordo_recipe_free(r);
    return status;
}

#define SHARD                                                                                      \
    "\"shards\": [{\"path\": \"x.jsonl\", \"sha256\": \""                                          \
    "0000000000000000000000000000000000000000000000000000000000000000\", \"bytes\": 1}]"
#define TWO_SOURCES                                                                                \
    "\"sources\": [{\"name\": \"web\", " SHARD "}, {\"name\": \"code book\", " SHARD "}]"

/* The mixture's bad inputs are refused naming the entry, the source and
 * the numbers; the old shuffle window and another data algorithm say what
 * they are. */
TEST(recipe_schedule_and_its_bad_inputs)
{
    ordo_error err;
    ASSERT_OK(parse_with(TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 0.9, "
                                     "\"code book\": 0.1}}, {\"step\": 801, \"weights\": {\"web\": "
                                     "1}, \"linear_from\": 501}]",
                         &err),
              &err);
    static const struct {
        const char *fields, *message;
    } bad[] = {
        {TWO_SOURCES ", \"schedule\": [{\"step\": 2, \"weights\": {\"web\": 1}}]",
         "schedule[0] is at step 2; the first entry must be at step 1"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 1}}, {\"step\": 1, "
                     "\"weights\": {\"web\": 1}}]",
         "schedule[1] is at step 1, not after the previous entry's 1"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 1}}, {\"step\": 9, "
                     "\"linear_from\": 9, \"weights\": {\"web\": 1}}]",
         "schedule[1]: 'linear_from' (9) must be from the previous entry's step (1) to before "
         "this entry's (9)"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"linear_from\": 1, \"weights\": {\"web\": "
                     "1}}]",
         "'linear_from' (1)"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"books\": 1}}]",
         "schedule[0]: 'books' is not a source of the recipe"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": -0.5}}]",
         "the weight of 'web' must be a finite number >= 0"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 0, \"code book\": 0}}]",
         "schedule[0]: the weights must have a positive sum"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {}}]", "schedule[0]: 'weights'"},
        {TWO_SOURCES ", \"schedule\": []", "'schedule' must be an array of 1 to 4096 entries"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 1}, \"at\": 3}]",
         "unknown key 'at' in schedule[0]"},
        {TWO_SOURCES ", \"schedule\": [{\"step\": 0, \"weights\": {\"web\": 1}}]",
         "'step' must be an integer from 1"},
        {"\"sources\": [{\"name\": \"web\", \"weight\": 1, " SHARD "}], \"schedule\": [{\"step\": "
         "1, \"weights\": {\"web\": 1}}]",
         "source 'web' has a 'weight' and the recipe a 'schedule'"},
        {"\"sources\": [{\"name\": \"web\", " SHARD "}]", "source 'web': 'weight' must be"},
        {"\"shuffle_window\": 8, \"sources\": [{\"name\": \"web\", \"weight\": 1, " SHARD "}]",
         "'shuffle_window' was replaced by 'shuffle'"},
        {"\"shuffle\": 1, \"sources\": [{\"name\": \"web\", \"weight\": 1, " SHARD "}]",
         "'shuffle' must be true or false"},
        {"\"data_algorithm\": 1, \"sources\": [{\"name\": \"web\", \"weight\": 1, " SHARD "}]",
         "it is of data algorithm 1, and this ordo cuts batches with data algorithm 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ordo_status status = parse_with(bad[i].fields, &err);
        if (status != ORDO_INVALID)
            test_fail(__FILE__, __LINE__, "case %zu was not refused", i);
        ASSERT_CONTAINS(err.message, bad[i].message);
    }
}

/* The resolved recipe carries the data algorithm, the shuffle flag and
 * the schedule; parsing it again gives the same id. */
TEST(recipe_canonical_form_holds_the_mixture)
{
    const char *json = "{\"seed\": 1, \"seq_len\": 8, \"global_batch\": 8, \"lanes\": 2, "
                       "\"shuffle\": false, " TWO_SOURCES ", \"schedule\": [{\"step\": 1, "
                       "\"weights\": {\"web\": 3}}, {\"step\": 50, \"linear_from\": 10, "
                       "\"weights\": {\"web\": 1, \"code book\": 1}}]}";
    ordo_recipe *r = NULL, *again = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_parse(json, strlen(json), "/", 0, &r, &err), &err);
    const char *canonical = ordo_recipe_canonical(r);
    ASSERT_CONTAINS(canonical, "\"data_algorithm\":2");
    ASSERT_CONTAINS(canonical, "\"shuffle\":false");
    ASSERT_CONTAINS(canonical, "\"schedule\":[{\"step\":1,\"weights\":{\"web\":3.0}},"
                               "{\"linear_from\":10,\"step\":50,\"weights\":{\"code book\":1.0,"
                               "\"web\":1.0}}]");
    ASSERT(strstr(canonical, "\"weight\"") == NULL);
    ASSERT_OK(ordo_recipe_parse(canonical, strlen(canonical), "/", 0, &again, &err), &err);
    ASSERT_EQ_STR(ordo_recipe_id(again), ordo_recipe_id(r));
    /* shares at the ramp's ends and middle, exact integers summing to 2^30 */
    uint64_t shares[2];
    ordo__step_shares(r, 10, shares);
    ASSERT(shares[0] == ORDO__SHARE_ONE && shares[1] == 0);
    ordo__step_shares(r, 30, shares);
    ASSERT(shares[0] + shares[1] == ORDO__SHARE_ONE && shares[1] == ORDO__SHARE_ONE / 4);
    ordo__step_shares(r, 50, shares);
    ASSERT(shares[0] == ORDO__SHARE_ONE / 2 && shares[1] == ORDO__SHARE_ONE / 2);
    double w[2];
    ASSERT_OK(ordo_recipe_step_weights(r, 30, w, &err), &err);
    ASSERT(w[0] == 0.75 && w[1] == 0.25);
    ASSERT_STATUS(ordo_recipe_step_weights(r, 0, w, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 0 is not between 1 and");
    ordo_recipe_free(r);
    ordo_recipe_free(again);
}

/* The seed written is the seed used: it is in the canonical recipe, so two
 * recipes that differ only in their seed have different ids (and the
 * data-algorithm field read after it does not overwrite it). */
TEST(recipe_keeps_the_seed_it_was_given)
{
    const char *ids[3];
    const char *seeds[] = {"1234", "0", "9223372036854775807"};
    ordo_recipe *r[3] = {0};
    ordo_error err;
    for (int i = 0; i < 3; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"seed\": %s, \"seq_len\": 8, \"global_batch\": 8, \"lanes\": 2, "
                 "\"data_algorithm\": 2, \"sources\": [{\"name\": \"web\", \"weight\": 1, " SHARD
                 "}]}",
                 seeds[i]);
        ASSERT_OK(ordo_recipe_parse(json, strlen(json), "/", 0, &r[i], &err), &err);
        char want[64];
        snprintf(want, sizeof want, "\"seed\":%s", seeds[i]);
        ASSERT_CONTAINS(ordo_recipe_canonical(r[i]), want);
        ids[i] = ordo_recipe_id(r[i]);
    }
    ASSERT(strcmp(ids[0], ids[1]) != 0 && strcmp(ids[0], ids[2]) != 0 &&
           strcmp(ids[1], ids[2]) != 0);
    for (int i = 0; i < 3; i++)
        ordo_recipe_free(r[i]);
}
