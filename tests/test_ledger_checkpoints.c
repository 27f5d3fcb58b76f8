/* Checkpoints and events; a checkpoint's lanes follow its segment. */
#include "fixtures.h"

/* Records steps first..last of a run with `lanes` lanes (fixture digests). */
static void record_steps(ordo_ledger *ledger, int64_t run, int lanes, int64_t first, int64_t last)
{
    unsigned char *digests = malloc((size_t)lanes * ORDO_DIGEST_SIZE);
    ordo_error err;
    for (int64_t s = first; s <= last; s++) {
        ordo_step step;
        fixture_step(&step, s, lanes, digests, 1);
        ASSERT_OK(ordo_steps_record(ledger, run, &step, 1, NULL, &err), &err);
    }
    free(digests);
}

TEST(checkpoints_record_get_list)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 32, 4);
    record_steps(ledger, run, 32, 1, 200);
    ordo_error err;
    unsigned char state[32 * 12];
    for (size_t i = 0; i < sizeof state; i++)
        state[i] = (unsigned char)(i * 7);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 100, 32, state, sizeof state, &err), &err);
    state[0] = 99;
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 200, 32, state, sizeof state, &err), &err);
    ordo_checkpoint c;
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 0, &c, &err), &err);
    ASSERT_EQ_INT(c.step, 200);
    ASSERT_EQ_INT(c.lanes, 32);
    ASSERT_EQ_INT(c.state_size, sizeof state);
    ASSERT(memcmp(c.state, state, sizeof state) == 0);
    ordo_checkpoint_free(&c);
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 100, &c, &err), &err);
    ASSERT_EQ_INT(c.step, 100);
    ASSERT_EQ_INT(c.state[0], 0);
    ordo_checkpoint_free(&c);
    ASSERT_STATUS(ordo_checkpoint_get(ledger, run, 150, &c, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, "no checkpoint at step 150");
    ordo_checkpoint_list *list = NULL;
    ASSERT_OK(ordo_checkpoints_list(ledger, run, &list, &err), &err);
    ASSERT_EQ_INT(list->count, 2);
    ASSERT_EQ_INT(list->items[0].step, 100);
    ASSERT_EQ_INT(list->items[1].step, 200);
    ASSERT(list->items[0].state == NULL);
    ordo_checkpoint_list_free(list);
    ordo_ledger_close(ledger);
}

TEST(checkpoint_is_idempotent_and_conflicts_are_kept)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    record_steps(ledger, run, 4, 1, 10);
    ordo_error err;
    unsigned char state[16] = {1, 2, 3};
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 10, 4, state, sizeof state, &err), &err);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 10, 4, state, sizeof state, &err), &err);
    unsigned char other[16] = {9};
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 10, 4, other, sizeof other, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "step 10");
    ordo_checkpoint c;
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 10, &c, &err), &err);
    ASSERT_EQ_INT(c.state[0], 1);
    ordo_checkpoint_free(&c);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "checkpoints", run), 1);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"),
                              "SELECT count(*) FROM events WHERE kind = 'conflict' AND step = 10"),
                  1);
}

TEST(checkpoint_bad_input)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    ordo_error err;
    unsigned char state[8] = {0};
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 0, 4, state, 8, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 0");
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 5, 0, state, 8, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 5, 4, state, 0, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run + 9, 5, 4, state, 8, &err), ORDO_NOTFOUND,
                  &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM checkpoints"), 0);
}

TEST(events_record_and_filter)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    ordo_error err;
    ASSERT_OK(
        ordo_event_record(ledger, run, 12, ORDO_EVENT_DIVERGENCE, "{\"baseline\": \"x\"}", &err),
        &err);
    ASSERT_OK(ordo_event_record(ledger, run, 0, ORDO_EVENT_SKIP, NULL, &err), &err);
    ASSERT_STATUS(ordo_event_record(ledger, run, 1, ORDO_EVENT_CONFLICT, NULL, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "event kind 'conflict' must be resume");
    ASSERT_STATUS(ordo_event_record(ledger, run, 1, (ordo_event_kind)40, NULL, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "event kind 40");
    ordo_event_kind kind = ORDO_EVENT_ANY;
    ASSERT_STATUS(ordo_event_kind_parse("party", &kind, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "'party'");
    ASSERT_OK(ordo_event_kind_parse("replay_mismatch", &kind, &err), &err);
    ASSERT_EQ_INT(kind, ORDO_EVENT_REPLAY_MISMATCH);
    ASSERT_EQ_STR(ordo_event_kind_name(ORDO_EVENT_CHUNK_MISMATCH), "chunk_mismatch");
    ASSERT(ordo_event_kind_name(ORDO_EVENT_ANY) == NULL);
    ASSERT_STATUS(ordo_event_record(ledger, run, 1, ORDO_EVENT_SKIP, "not json", &err),
                  ORDO_INVALID, &err);
    ordo_event_list *events = NULL;
    ASSERT_OK(ordo_events_list(ledger, run, ORDO_EVENT_ANY, &events, &err), &err);
    ASSERT_EQ_INT(events->count, 2);
    ASSERT_EQ_INT(events->items[0].kind, ORDO_EVENT_DIVERGENCE);
    ASSERT_EQ_INT(events->items[0].step, 12);
    ASSERT_EQ_INT(events->items[1].kind, ORDO_EVENT_SKIP);
    ASSERT_EQ_INT(events->items[1].step, 0);
    ASSERT_EQ_STR(events->items[1].detail, "{}");
    ordo_event_list_free(events);
    ASSERT_OK(ordo_events_list(ledger, run, ORDO_EVENT_SKIP, &events, &err), &err);
    ASSERT_EQ_INT(events->count, 1);
    ordo_event_list_free(events);
    ordo_ledger_close(ledger);
}

/* A checkpoint claims its step was delivered: one past every report is
 * refused; one whose step has lanes pending is held (not resumed from,
 * not the base of a manifest) until the step's last lane is in. */
TEST(checkpoint_past_the_reports_is_refused_and_pending_one_held)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    record_steps(ledger, run, 4, 1, 10);
    ordo_error err;
    unsigned char state[16] = {1, 2, 3};
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 10, 4, state, sizeof state, &err), &err);
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 11, 4, state, sizeof state, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 11");
    ASSERT_CONTAINS(err.message, "last recorded step is 10");
    /* Lanes 0 and 1 of step 12 are in, 2 and 3 pending. */
    ordo_lane_report reports[2] = {{12, 0, 0, {1}}, {12, 1, 1, {2}}};
    ordo_record_result result;
    ASSERT_OK(ordo_lanes_record(ledger, run, reports, 2, &result, NULL, &err), &err);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 12, 4, state, sizeof state, &err), &err);
    ordo_checkpoint c;
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 0, &c, &err), &err);
    ASSERT_EQ_INT(c.step, 10);
    ordo_checkpoint_free(&c);
    ASSERT_STATUS(ordo_checkpoint_get(ledger, run, 12, &c, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "held");
    ordo_checkpoint_list *list = NULL;
    ASSERT_OK(ordo_checkpoints_list(ledger, run, &list, &err), &err);
    ASSERT_EQ_INT(list->count, 2);
    ASSERT_EQ_INT(list->items[0].held, 0);
    ASSERT_EQ_INT(list->items[1].held, 1);
    ordo_checkpoint_list_free(list);
    /* Step 11 and the rest of 12 arrive: the held checkpoint is the latest. */
    unsigned char digests[4 * ORDO_DIGEST_SIZE];
    ordo_step step;
    fixture_step(&step, 11, 4, digests, 1);
    ASSERT_OK(ordo_steps_record(ledger, run, &step, 1, NULL, &err), &err);
    ordo_lane_report rest[2] = {{12, 2, 2, {3}}, {12, 3, 3, {4}}};
    ASSERT_OK(ordo_lanes_record(ledger, run, rest, 2, &result, NULL, &err), &err);
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 0, &c, &err), &err);
    ASSERT_EQ_INT(c.step, 12);
    ASSERT_EQ_INT(c.held, 0);
    ordo_checkpoint_free(&c);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM checkpoints"), 2);
}

TEST(checkpoint_lanes_follow_the_segment)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 2);
    unsigned char state[16] = {0};
    ordo_error err;
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 5, 999, state, 5, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "has 999 lanes, its segment has 4");
    ordo_ledger_close(ledger);
}
