/* The ordo binary's JSON output, checked field by field. What a command
 * line must answer (exit code and text) is a case in tests/cli/cases.txt. */
#include <jansson.h>

#include "fixtures.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A ledger with a run "base" (W=4) and "resumed" (W=4, then W=8 at 51). */
static const char *filled_ledger(void)
{
    ordo_ledger *ledger = fixture_open("cli.db");
    int64_t base = fixture_run(ledger, "base", 32, 4);
    int64_t resumed = fixture_run(ledger, "resumed", 32, 4);
    static unsigned char lanes[100][32 * ORDO_DIGEST_SIZE];
    ordo_step steps[100];
    for (int i = 0; i < 100; i++) {
        fixture_step(&steps[i], i + 1, 32, lanes[i], 1);
        steps[i].tokens = 1000;
        steps[i].has_loss = 1;
        steps[i].loss = 2.0;
    }
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, base, steps, 100, NULL, &err), &err);
    ASSERT_OK(ordo_steps_record(ledger, resumed, steps, 50, NULL, &err), &err);
    unsigned char state[32 * 8] = {0};
    ASSERT_OK(ordo_checkpoint_record(ledger, resumed, 50, 32, state, sizeof state, &err), &err);
    int ranks[32];
    for (int lane = 0; lane < 32; lane++)
        ranks[lane] = lane % 8;
    ordo_segment_spec seg = {
        .world_size = 8, .start_step = 51, .lanes = 32, .lane_ranks = ranks, .resumed_from = 50};
    int64_t id;
    ASSERT_OK(ordo_segment_add(ledger, resumed, &seg, &id, &err), &err);
    ASSERT_OK(ordo_steps_record(ledger, resumed, steps + 50, 50, NULL, &err), &err);
    ordo_ledger_close(ledger);
    return test_path("cli.db");
}

TEST(cli_runs_json)
{
    const char *db = filled_ledger();
    cli_result r = run_ordo(NULL, ARGS("runs", "--db", db, "--json"));
    ASSERT_EQ_INT(r.code, 0);
    json_error_t jerr;
    json_t *runs = json_loads(r.out, 0, &jerr);
    ASSERT(runs != NULL);
    ASSERT_EQ_INT(json_array_size(runs), 2);
    json_t *resumed = json_array_get(runs, 1);
    ASSERT_EQ_STR(json_string_value(json_object_get(resumed, "name")), "resumed");
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "steps")), 100);
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "segments")), 2);
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "world_size")), 8);
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "lanes")), 32);
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "last_step")), 100);
    ASSERT_EQ_INT(json_integer_value(json_object_get(resumed, "lane_states")), 0);
    ASSERT(json_is_integer(json_object_get(resumed, "lane_states")));
    json_decref(runs);
    cli_result_free(&r);
}

TEST(cli_show_json)
{
    const char *db = filled_ledger();
    cli_result r = run_ordo(NULL, ARGS("show", "resumed", "--db", db, "--json", "--steps", "51"));
    ASSERT_EQ_INT(r.code, 0);
    json_t *view = json_loads(r.out, 0, NULL);
    ASSERT(view != NULL);
    json_t *segments = json_object_get(view, "segments");
    ASSERT_EQ_INT(json_array_size(segments), 2);
    json_t *second = json_array_get(segments, 1);
    ASSERT_EQ_INT(json_integer_value(json_object_get(second, "world_size")), 8);
    ASSERT_EQ_INT(json_array_size(json_object_get(second, "lane_plan")), 8);
    ASSERT_EQ_INT(json_integer_value(json_object_get(second, "resumed_from")), 50);
    json_t *steps = json_object_get(view, "steps");
    ASSERT_EQ_INT(json_array_size(steps), 1);
    json_t *step = json_array_get(steps, 0);
    ASSERT_EQ_INT(json_integer_value(json_object_get(step, "step")), 51);
    ASSERT_EQ_INT(strlen(json_string_value(json_object_get(step, "batch_digest"))), 64);
    ASSERT_EQ_INT(json_array_size(json_object_get(step, "lane_digests")), 32);
    ASSERT_EQ_INT(json_array_size(json_object_get(view, "checkpoints")), 1);
    json_decref(view);
    cli_result_free(&r);
}
