/* Lane plans read and checked by the library (the service's and the CLI's
 * one rule), and the lane count of a stored recipe. */
#include "fixtures.h"

/* A binding by its name: NULL is logical, an unknown name a value outside
 * the enum. */
static ordo_lane_binding binding_of(const char *name)
{
    ordo_lane_binding binding = ORDO_BINDING_LOGICAL;
    if (name && ordo_lane_binding_parse(name, &binding, NULL) != ORDO_OK)
        binding = (ordo_lane_binding)9;
    return binding;
}

/* Parses `plan` for L lanes at W ranks; the message of a refusal, or "" */
static const char *parse(int lanes, int world, const char *binding, const char *plan, int **ranks,
                         int *count)
{
    static ordo_error err;
    ordo_status status = ordo_lane_plan_parse(lanes, world, binding_of(binding), plan,
                                              plan ? strlen(plan) : 0, ranks, count, &err);
    if (status == ORDO_OK)
        return "";
    ASSERT_EQ_INT(status, ORDO_INVALID);
    ASSERT(*ranks == NULL && *count == 0);
    return err.message;
}

TEST(lane_plan_defaults_and_explicit_plans)
{
    int *ranks = NULL, count = 0;
    ASSERT_EQ_STR(parse(8, 2, NULL, NULL, &ranks, &count), "");
    ASSERT_EQ_INT(count, 8);
    for (int l = 0; l < 8; l++)
        ASSERT_EQ_INT(ranks[l], l / 4); /* rank r owns [r*L/W, (r+1)*L/W) */
    ordo_free(ranks);
    ASSERT_EQ_STR(parse(8, 4, "rank", NULL, &ranks, &count), "");
    ASSERT_EQ_INT(count, 4); /* one lane per rank */
    for (int l = 0; l < 4; l++)
        ASSERT_EQ_INT(ranks[l], l);
    ordo_free(ranks);
    ASSERT_EQ_STR(parse(4, 2, "logical", "[[3, 0], [2, 1]]", &ranks, &count), "");
    ASSERT(ranks[0] == 0 && ranks[1] == 1 && ranks[2] == 1 && ranks[3] == 0);
    ordo_free(ranks);
}

TEST(lane_plan_refusals_are_the_services_texts)
{
    int *ranks = NULL, count = 0;
    ASSERT_EQ_STR(parse(8, 3, NULL, NULL, &ranks, &count),
                  "lanes (8) must be divisible by world size (3)");
    ASSERT_EQ_STR(parse(8, 2, "sideways", NULL, &ranks, &count),
                  "lane_binding must be 'logical' or 'rank'");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2, 3]]", &ranks, &count),
                  "lane_plan must be an array of 2 arrays (one per rank)");
    ASSERT_EQ_STR(parse(8, 2, NULL, "{\"0\": [1]}", &ranks, &count),
                  "lane_plan must be an array of 2 arrays (one per rank)");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2, 3], [4, 5, 6, 3]]", &ranks, &count),
                  "lane_plan: rank 1 lists lane 3, which is not one of the 8 lanes or is "
                  "listed twice");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2, 3], [4, 5, 6, 8]]", &ranks, &count),
                  "lane_plan: rank 1 lists lane 8, which is not one of the 8 lanes or is "
                  "listed twice");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2, 3], [4, 5, 6, \"7\"]]", &ranks, &count),
                  "lane_plan: rank 1 lists lane 0, which is not one of the 8 lanes or is "
                  "listed twice");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2, 3], [4, 5, 6]]", &ranks, &count),
                  "lane_plan leaves lane 7 without a rank");
    ASSERT_EQ_STR(parse(8, 2, NULL, "[[0, 1, 2], [3, 4, 5, 6, 7]]", &ranks, &count),
                  "lane_plan gives rank 0 3 lanes; every rank owns 4");
    ASSERT_EQ_STR(parse(4, 4, "rank", "[[0, 1], [], [2], [3]]", &ranks, &count),
                  "lane_plan gives rank 0 2 lanes; every rank owns 1");
    ASSERT_EQ_STR(parse(8, 0, NULL, NULL, &ranks, &count),
                  "world size (0) must be between 1 and 65536");
    ASSERT_EQ_STR(parse(0, 1, NULL, NULL, &ranks, &count), "lane plan is empty");
    ASSERT_CONTAINS(parse(8, 2, NULL, "[[0, 1, 2, 3], ", &ranks, &count),
                    "lane_plan is not valid JSON");
}

TEST(lane_plan_check_is_the_segments_rule)
{
    ordo_error err;
    int ranks[8] = {0, 0, 0, 1, 1, 1, 1, 1};
    ASSERT_STATUS(ordo_lane_plan_check(8, 2, ORDO_BINDING_LOGICAL, ranks, &err), ORDO_INVALID,
                  &err);
    ASSERT_EQ_STR(err.message, "lane_plan gives rank 0 3 lanes; every rank owns 4");
    ranks[7] = 2;
    ASSERT_STATUS(ordo_lane_plan_check(8, 2, ORDO_BINDING_LOGICAL, ranks, &err), ORDO_INVALID,
                  &err);
    ASSERT_EQ_STR(err.message, "lane 7 is assigned to rank 2, outside world size 2");
    ASSERT_STATUS(ordo_lane_plan_check(8, 4, ORDO_BINDING_RANK, ranks, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lanes (8) must equal world size (4)");
    ASSERT_STATUS(ordo_lane_plan_check(8, 2, ORDO_BINDING_LOGICAL, NULL, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lane plan is empty");
    int good[4] = {1, 0, 0, 1};
    ASSERT_OK(ordo_lane_plan_check(4, 2, ORDO_BINDING_LOGICAL, good, &err), &err);
    /* ordo_segment_add refuses with the same words, recording nothing */
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 8, 2), segment = 0;
    ranks[7] = 1;
    ordo_segment_spec spec = {.world_size = 2, .start_step = 5, .lanes = 8, .lane_ranks = ranks};
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &segment, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lane_plan gives rank 0 3 lanes; every rank owns 4");
    spec.lane_binding = (ordo_lane_binding)9;
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &segment, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lane binding 9 must be ORDO_BINDING_LOGICAL or ORDO_BINDING_RANK");
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "segments", run), 1);
}

TEST(recipe_lanes_are_read_from_the_stored_recipe)
{
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    char id[ORDO_DIGEST_HEX_SIZE], none[ORDO_DIGEST_HEX_SIZE];
    int lanes = -1;
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ASSERT_OK(ordo_recipe_lanes(ledger, id, &lanes, &err), &err);
    ASSERT_EQ_INT(lanes, 32);
    ASSERT_OK(ordo_recipe_put(ledger, "{\"name\": \"x\"}", 13, none, &err), &err);
    ASSERT_STATUS(ordo_recipe_lanes(ledger, none, &lanes, &err), ORDO_INVALID, &err);
    ASSERT_EQ_INT(lanes, 0);
    ASSERT_CONTAINS(err.message, "has no 'lanes'");
    ASSERT_CONTAINS(err.message, none);
    memset(none, 'a', 64);
    ASSERT_STATUS(ordo_recipe_lanes(ledger, none, &lanes, &err), ORDO_NOTFOUND, &err);
    /* what every stored recipe must hold, for every caller */
    const char *bad = "{\"lanes\": 3, \"global_batch\": 8}";
    ASSERT_STATUS(ordo_recipe_put(ledger, bad, strlen(bad), id, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "global_batch (8) must be divisible by lanes (3)");
    bad = "{\"lanes\": 0}";
    ASSERT_STATUS(ordo_recipe_put(ledger, bad, strlen(bad), id, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "recipe: 'lanes' and 'global_batch' must be positive whole "
                               "numbers");
    bad = "{\"global_batch\": 2.5}";
    ASSERT_STATUS(ordo_recipe_put(ledger, bad, strlen(bad), id, &err), ORDO_INVALID, &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM recipes"), 2);
}
