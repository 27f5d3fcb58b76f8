/* Runs and segments: creation, idempotency, lane plan validation, run ids
 * out of range, long recipe names. */
#include "fixtures.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static void recipe(ordo_ledger *ledger, char id[ORDO_DIGEST_HEX_SIZE])
{
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
}

TEST(run_create_get_list)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char id[ORDO_DIGEST_HEX_SIZE];
    recipe(ledger, id);
    ordo_error err;
    int64_t base = 0, other = 0, again = 0;
    ordo_run_spec spec = {.name = "base", .recipe_id = id, .group_tag = "ablation-a", .lanes = 32};
    ASSERT_OK(ordo_run_create(ledger, &spec, &base, &err), &err);
    ordo_run_spec spec2 = {.name = "other",
                           .recipe_id = id,
                           .group_tag = "ablation-a",
                           .baseline = "base",
                           .lanes = 32};
    ASSERT_OK(ordo_run_create(ledger, &spec2, &other, &err), &err);
    ASSERT(base != other);
    ASSERT_OK(ordo_run_create(ledger, &spec2, &again, &err), &err);
    ASSERT_EQ_INT(again, other);

    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "other", &info, &err), &err);
    ASSERT_EQ_STR(info.name, "other");
    ASSERT_EQ_STR(info.recipe_id, id);
    ASSERT_EQ_STR(info.recipe_name, "fixture");
    ASSERT_EQ_STR(info.group_tag, "ablation-a");
    ASSERT_EQ_STR(info.baseline, "base");
    ASSERT_EQ_STR(info.digest_kind, "ordo");
    ASSERT_EQ_INT(info.lanes, 32);
    ASSERT_EQ_INT(info.steps, 0);
    ASSERT_EQ_INT(info.segments, 0);

    ordo_run_list *runs = NULL;
    ASSERT_OK(ordo_runs_list(ledger, &runs, &err), &err);
    ASSERT_EQ_INT(runs->count, 2);
    ASSERT_EQ_STR(runs->items[0].name, "base");
    ASSERT_EQ_STR(runs->items[1].name, "other");
    ordo_run_list_free(runs);
    ASSERT_STATUS(ordo_run_get(ledger, "nope", &info, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, "'nope'");
    ordo_ledger_close(ledger);
}

TEST(run_create_conflicts_and_bad_specs)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char id[ORDO_DIGEST_HEX_SIZE];
    recipe(ledger, id);
    ordo_error err;
    int64_t run = 0;
    ordo_run_spec spec = {.name = "r", .recipe_id = id, .lanes = 32};
    ASSERT_OK(ordo_run_create(ledger, &spec, &run, &err), &err);
    spec.lanes = 16;
    ASSERT_STATUS(ordo_run_create(ledger, &spec, &run, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "another lanes");
    spec.lanes = 32;
    spec.group_tag = "g";
    ASSERT_STATUS(ordo_run_create(ledger, &spec, &run, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "group tag");

    ordo_run_spec bad = {.name = "x", .recipe_id = id, .lanes = 0};
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lanes (0)");
    bad.lanes = 8;
    bad.name = "";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    bad.name = "tab\there";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "control character (0x09) at byte 3");
    bad.name = "bad\xff";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "UTF-8");
    char long_name[300];
    memset(long_name, 'n', 299);
    long_name[299] = '\0';
    bad.name = long_name;
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "299 bytes");
    bad.name = "x";
    bad.baseline = "missing";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, "'missing'");
    bad.baseline = "x";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    bad.baseline = NULL;
    bad.recipe_id = "1234";
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "recipe id");
    char unknown[ORDO_DIGEST_HEX_SIZE];
    memset(unknown, 'b', 64);
    unknown[64] = '\0';
    bad.recipe_id = unknown;
    ASSERT_STATUS(ordo_run_create(ledger, &bad, &run, &err), ORDO_NOTFOUND, &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM runs"), 1);
}

static ordo_status add(ordo_ledger *ledger, int64_t run, int world, int64_t start, const int *ranks,
                       int lanes, const char *binding, ordo_error *err)
{
    ordo_segment_spec spec = {
        .world_size = world, .start_step = start, .lanes = lanes, .lane_ranks = ranks};
    ordo_status status =
        binding ? ordo_lane_binding_parse(binding, &spec.lane_binding, err) : ORDO_OK;
    int64_t id = 0;
    return status == ORDO_OK ? ordo_segment_add(ledger, run, &spec, &id, err) : status;
}

TEST(segment_lane_plan_validation_names_the_numbers)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 32, 4);
    ordo_error err;
    int ranks[32];
    for (int lane = 0; lane < 32; lane++)
        ranks[lane] = lane % 12;
    ASSERT_STATUS(add(ledger, run, 12, 10, ranks, 32, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lanes (32) must be divisible by world size (12)");
    for (int lane = 0; lane < 32; lane++)
        ranks[lane] = lane % 8;
    ranks[5] = 9;
    ASSERT_STATUS(add(ledger, run, 8, 10, ranks, 32, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lane 5 is assigned to rank 9, outside world size 8");
    ranks[5] = 0;
    ASSERT_STATUS(add(ledger, run, 8, 10, ranks, 32, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lane_plan gives rank 0 5 lanes; every rank owns 4");
    ranks[5] = 5;
    ASSERT_STATUS(add(ledger, run, 8, 10, ranks, 16, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "16 lanes but the run has 32");
    ASSERT_STATUS(add(ledger, run, 8, 10, ranks, 32, "rank", &err), ORDO_INVALID, &err);
    ASSERT_STATUS(add(ledger, run, 8, 10, ranks, 32, "sideways", &err), ORDO_INVALID, &err);
    ASSERT_STATUS(add(ledger, run, 0, 10, ranks, 32, NULL, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(add(ledger, run, 8, 0, ranks, 32, NULL, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(add(ledger, run + 100, 8, 10, ranks, 32, NULL, &err), ORDO_NOTFOUND, &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "segments", run), 1);
}

TEST(segment_resume_closes_previous_and_records_event)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 32, 4);
    ordo_error err;
    int ranks[32];
    for (int lane = 0; lane < 32; lane++)
        ranks[lane] = lane / 4; /* blocks of 4 lanes per rank */
    ordo_segment_spec spec = {.world_size = 8,
                              .start_step = 51,
                              .lanes = 32,
                              .lane_ranks = ranks,
                              .workers = "{\"read\": 2, \"tokenize\": 4}",
                              .host = "node-7",
                              .resumed_from = 50};
    int64_t id = 0;
    ASSERT_OK(ordo_segment_add(ledger, run, &spec, &id, &err), &err);
    ordo_segment_list *segs = NULL;
    ASSERT_OK(ordo_segments_list(ledger, run, &segs, &err), &err);
    ASSERT_EQ_INT(segs->count, 2);
    ASSERT_EQ_INT(segs->items[0].world_size, 4);
    ASSERT_EQ_INT(segs->items[0].start_step, 1);
    ASSERT_EQ_INT(segs->items[0].end_step, 50);
    ASSERT_EQ_INT(segs->items[0].open, 0);
    ASSERT_EQ_STR(segs->items[0].lane_plan, "[[0,4,8,12,16,20,24,28],[1,5,9,13,17,21,25,29],"
                                            "[2,6,10,14,18,22,26,30],[3,7,11,15,19,23,27,31]]");
    ASSERT_EQ_INT(segs->items[1].world_size, 8);
    ASSERT_EQ_INT(segs->items[1].open, 1);
    ASSERT_EQ_INT(segs->items[1].end_step, 50); /* nothing recorded yet: start - 1 */
    ASSERT_EQ_INT(segs->items[1].resumed_from, 50);
    ASSERT_EQ_INT(segs->items[1].lane_binding, ORDO_BINDING_LOGICAL);
    ASSERT_EQ_STR(segs->items[1].host, "node-7");
    ASSERT_CONTAINS(segs->items[1].lane_plan, "[[0,1,2,3],[4,5,6,7],");
    ASSERT_CONTAINS(segs->items[1].workers, "\"tokenize\"");
    ordo_segment_list_free(segs);

    ordo_event_list *events = NULL;
    ASSERT_OK(ordo_events_list(ledger, run, ORDO_EVENT_RESUME, &events, &err), &err);
    ASSERT_EQ_INT(events->count, 1);
    ASSERT_EQ_INT(events->items[0].step, 51);
    ASSERT_CONTAINS(events->items[0].detail, "\"from_world_size\":4");
    ASSERT_CONTAINS(events->items[0].detail, "\"to_world_size\":8");
    ordo_event_list_free(events);

    spec.start_step = 40; /* before the segment at 51 */
    spec.resumed_from = 0;
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "must be after the previous segment's (51)");
    spec.start_step = 60;
    spec.workers = "[1]";
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &id, &err), ORDO_INVALID, &err);
    spec.workers = NULL;
    spec.resumed_from = 60;
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &id, &err), ORDO_INVALID, &err);
    ordo_ledger_close(ledger);
}

TEST(rank_bound_segment_has_one_lane_per_rank)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    ordo_error err;
    int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ASSERT_OK(add(ledger, run, 8, 20, ranks, 8, "rank", &err), &err);
    ordo_segment_list *segs = NULL;
    ASSERT_OK(ordo_segments_list(ledger, run, &segs, &err), &err);
    ASSERT_EQ_INT(segs->count, 2);
    ASSERT_EQ_INT(segs->items[1].lane_binding, ORDO_BINDING_RANK);
    ASSERT_EQ_INT(segs->items[1].lanes, 8);
    ordo_segment_list_free(segs);
    ordo_ledger_close(ledger);
}

TEST(run_ids_out_of_range_are_not_found)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 2);
    unsigned char lanes[4 * ORDO_DIGEST_SIZE];
    ordo_step step;
    fixture_step(&step, 1, 4, lanes, 1);
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, &step, 1, NULL, &err), &err);
    int64_t bogus[] = {0, -1, run + 1, ((int64_t)1 << 24) + run, INT64_MAX};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        int calls = 0;
        ASSERT_STATUS(ordo_steps_scan(ledger, bogus[i], 1, ORDO_STEP_MAX, NULL, &calls, &err),
                      ORDO_NOTFOUND, &err);
        ASSERT_STATUS(ordo_steps_record(ledger, bogus[i], &step, 1, NULL, &err), ORDO_NOTFOUND,
                      &err);
        ASSERT_STATUS(ordo_event_record(ledger, bogus[i], 1, ORDO_EVENT_SKIP, NULL, &err),
                      ORDO_NOTFOUND, &err);
    }
    ordo_ledger_close(ledger);
}

TEST(long_recipe_names_stay_valid_utf8)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char recipe[600];
    int n = snprintf(recipe, sizeof recipe, "{\"name\": \"");
    for (int i = 0; i < 200; i++)
        n += snprintf(recipe + n, sizeof recipe - (size_t)n, "\xc3\xa9"); /* 400 bytes of é */
    snprintf(recipe + n, sizeof recipe - (size_t)n, "\"}");
    char id[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, recipe, strlen(recipe), id, &err), &err);
    ordo_run_spec spec = {.name = "r", .recipe_id = id, .lanes = 4};
    int64_t run;
    ASSERT_OK(ordo_run_create(ledger, &spec, &run, &err), &err);
    ordo_ledger_close(ledger);
    cli_result r = run_ordo(NULL, A("runs", "--db", test_path("l.db"), "--json"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "\"name\": \"r\"");
    cli_result_free(&r);
}

TEST(run_names_may_not_hold_a_slash)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char id[ORDO_DIGEST_HEX_SIZE];
    recipe(ledger, id);
    ordo_error err;
    int64_t run = 0;
    ordo_run_spec spec = {.name = "a/b", .recipe_id = id, .lanes = 32};
    ASSERT_STATUS(ordo_run_create(ledger, &spec, &run, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "run names may not contain '/' (they are URL path segments)");
    ASSERT_STATUS(ordo_run_name_check("/", &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "'/'");
    ASSERT_STATUS(ordo_run_name_check("", &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "run name is empty");
    ASSERT_OK(ordo_run_name_check("a.b-c d", &err), &err);
    /* a group tag is no path segment: it may hold '/' */
    ordo_run_spec grouped = {.name = "ab", .recipe_id = id, .group_tag = "sweep/lr", .lanes = 32};
    ASSERT_OK(ordo_run_create(ledger, &grouped, &run, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM runs"), 1);
}

TEST(run_start_takes_the_recipes_lanes_and_records_nothing_it_refuses)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char id[ORDO_DIGEST_HEX_SIZE], bare[ORDO_DIGEST_HEX_SIZE];
    recipe(ledger, id); /* 32 lanes */
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, "{\"name\": \"bare\"}", 16, bare, &err), &err);
    ordo_run_start_spec spec = {.run = {.name = "job", .recipe_id = id, .lanes = 5},
                                .world_size = 4};
    ordo_run_started started;
    ASSERT_OK(ordo_run_start(ledger, &spec, &started, &err), &err);
    ASSERT(started.created == 1 && started.run_id > 0 && started.segment_id > 0);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "job", &info, &err), &err);
    ASSERT_EQ_INT(info.lanes, 32); /* the recipe's, not run.lanes */
    ASSERT_EQ_INT(info.world_size, 4);
    int64_t first = started.run_id;
    ASSERT_OK(ordo_run_start(ledger, &spec, &started, &err), &err); /* again: a no-op */
    ASSERT(started.created == 0 && started.run_id == first && started.segment_id == 0);
    spec.world_size = 8;
    ASSERT_STATUS(ordo_run_start(ledger, &spec, &started, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "run 'job' exists at world size 4, not 8");
    /* refusals, none of which records a run */
    const char *plan = "[[0, 1, 2], [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, "
                       "19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]]";
    ordo_run_start_spec bad = {.run = {.name = "half", .recipe_id = id},
                               .world_size = 2,
                               .lane_plan = plan,
                               .lane_plan_len = strlen(plan)};
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lane_plan gives rank 0 3 lanes; every rank owns 16");
    bad.lane_plan = NULL;
    bad.world_size = 3;
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lanes (32) must be divisible by world size (3)");
    bad.world_size = 2;
    bad.resumed_from = 4;
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "resumed-from step (4)");
    bad.resumed_from = 0;
    bad.host = "a\nb";
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "host has a control character");
    bad.host = NULL;
    bad.run.recipe_id = bare;
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "has no 'lanes'");
    bad.run.name = "a/b";
    bad.run.recipe_id = id;
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "may not contain '/'");
    char unknown[ORDO_DIGEST_HEX_SIZE];
    memset(unknown, 'e', 64);
    unknown[64] = '\0';
    bad.run.name = "half";
    bad.run.recipe_id = unknown;
    ASSERT_STATUS(ordo_run_start(ledger, &bad, &started, &err), ORDO_NOTFOUND, &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM runs"), 1);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM segments"), 1);
}

TEST(lane_binding_names_and_values)
{
    ordo_lane_binding binding = ORDO_BINDING_RANK;
    ordo_error err;
    ASSERT_OK(ordo_lane_binding_parse("logical", &binding, &err), &err);
    ASSERT_EQ_INT(binding, ORDO_BINDING_LOGICAL);
    ASSERT_OK(ordo_lane_binding_parse("rank", &binding, &err), &err);
    ASSERT_EQ_INT(binding, ORDO_BINDING_RANK);
    ASSERT_EQ_STR(ordo_lane_binding_name(ORDO_BINDING_LOGICAL), "logical");
    ASSERT_EQ_STR(ordo_lane_binding_name(ORDO_BINDING_RANK), "rank");
    ASSERT(ordo_lane_binding_name((ordo_lane_binding)2) == NULL);
    ASSERT_STATUS(ordo_lane_binding_parse("Rank", &binding, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "lane binding 'Rank' must be 'logical' or 'rank'");
    ASSERT_STATUS(ordo_lane_binding_parse(NULL, &binding, &err), ORDO_INVALID, &err);
    /* a value outside the enum is refused by the calls that take one */
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    int ranks[4] = {0, 1, 2, 3};
    ordo_segment_spec spec = {.world_size = 4,
                              .start_step = 20,
                              .lanes = 4,
                              .lane_ranks = ranks,
                              .lane_binding = (ordo_lane_binding)7};
    int64_t id = 0;
    ASSERT_STATUS(ordo_segment_add(ledger, run, &spec, &id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "lane binding 7");
    ordo_ledger_close(ledger);
}

TEST(token_role_names_and_values)
{
    ordo_token_role role = ORDO_ROLE_WRITER;
    ordo_error err;
    ASSERT_OK(ordo_token_role_parse("reader", &role, &err), &err);
    ASSERT_EQ_INT(role, ORDO_ROLE_READER);
    ASSERT_EQ_STR(ordo_token_role_name(ORDO_ROLE_WRITER), "writer");
    ASSERT(ordo_token_role_name((ordo_token_role)2) == NULL);
    ASSERT_STATUS(ordo_token_role_parse("admin", &role, &err), ORDO_INVALID, &err);
    ASSERT_EQ_STR(err.message, "token role 'admin' must be writer or reader");
    ordo_ledger *ledger = fixture_open("l.db");
    char token[ORDO_TOKEN_SIZE];
    ASSERT_STATUS(ordo_token_create(ledger, "x", (ordo_token_role)5, token, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "token role 5");
    ASSERT_OK(ordo_token_create(ledger, "w", ORDO_ROLE_WRITER, token, &err), &err);
    ASSERT_OK(ordo_token_check(ledger, token, &role, &err), &err);
    ASSERT_EQ_INT(role, ORDO_ROLE_WRITER);
    ordo_token_list *tokens = NULL;
    ASSERT_OK(ordo_tokens_list(ledger, &tokens, &err), &err);
    ASSERT_EQ_INT(tokens->count, 1);
    ASSERT_EQ_INT(tokens->items[0].role, ORDO_ROLE_WRITER);
    ordo_token_list_free(tokens);
    ordo_ledger_close(ledger);
}
