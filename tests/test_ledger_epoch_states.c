/* Epoch lane states carried by step reports (ordo_step.lane_state): kept
 * once per step, checked to be a checkpoint of the segment's logical lanes
 * taken after that step; a different one later is a conflict, never a
 * silent replacement. */
#include "fixtures.h"
#include "testing.h"
#include "pipeline/lane_state.h"

/* An encoded logical state of `lanes` lanes of one source after `step`,
 * the positions derived from `seed`, lane 1's document at `record` (0:
 * unknown); *size set. Caller frees. */
static unsigned char *make_state_at(int lanes, int64_t step, unsigned seed, uint64_t record,
                                    size_t *size)
{
    ordo__lane_record *records = calloc((size_t)lanes, sizeof *records);
    ordo__pos *positions = calloc((size_t)lanes, sizeof *positions);
    ASSERT(records && positions);
    for (int lane = 0; lane < lanes; lane++) {
        positions[lane] = (ordo__pos){.unit = (uint64_t)lane, .doc = seed, .offset = 3};
        positions[1].record = record;
        records[lane] = (ordo__lane_record){.lane = (uint64_t)lane, .positions = &positions[lane]};
    }
    ordo__state s = {.rank_bound = 0,
                     .step = (uint64_t)step,
                     .stride = (uint64_t)lanes,
                     .sources = 1,
                     .lanes = records,
                     .lane_count = (uint64_t)lanes,
                     .recipe_tag = 0x1234};
    unsigned char *data = NULL;
    ordo_error err;
    ASSERT_OK(ordo__state_encode(&s, &data, size, &err), &err);
    free(records);
    free(positions);
    return data;
}

static unsigned char *make_state(int lanes, int64_t step, unsigned seed, size_t *size)
{
    return make_state_at(lanes, step, seed, 0, size);
}

/* Records step `number` carrying `state`; returns the status. */
static ordo_status report(ordo_ledger *ledger, int64_t run, int64_t number, int lanes,
                          const unsigned char *state, size_t size, ordo_record_result *result,
                          ordo_error *err)
{
    unsigned char *digests = malloc((size_t)lanes * ORDO_DIGEST_SIZE);
    ordo_step step;
    fixture_step(&step, number, lanes, digests, 1);
    step.lane_state = state;
    step.lane_state_size = size;
    ordo_status status = ordo_steps_record(ledger, run, &step, 1, result, err);
    free(digests);
    return status;
}

/* The one lane state (or checkpoint) the query selects, as hex, equals
 * `state`. */
static void expect_stored(const char *sql, const unsigned char *state, size_t size)
{
    char *hex = fixture_text(test_path("l.db"), sql);
    ASSERT_EQ_INT(strlen(hex), 2 * size);
    for (size_t i = 0; i < size; i++) {
        unsigned byte = 0;
        sscanf(hex + 2 * i, "%2x", &byte);
        ASSERT_EQ_INT(byte, state[i]);
    }
    free(hex);
}

TEST(epoch_states_are_kept_once_with_their_step)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 8, 2);
    ordo_error err;
    ordo_record_result result;
    size_t size = 0, other_size = 0;
    unsigned char *state = make_state(8, 17, 5, &size), *other = make_state(8, 17, 6, &other_size);
    ASSERT_OK(report(ledger, run, 17, 8, state, size, &result, &err), &err);
    ASSERT_EQ_INT(result.inserted, 1);
    /* the same again: a no-op; a different state for the step: a conflict */
    ASSERT_OK(report(ledger, run, 17, 8, state, size, &result, &err), &err);
    ASSERT_EQ_INT(result.unchanged, 1);
    ASSERT_STATUS(report(ledger, run, 17, 8, other, other_size, &result, &err), ORDO_CONFLICT,
                  &err);
    ASSERT_EQ_INT(result.conflicts, 1);
    ASSERT_EQ_INT(result.first_conflict_step, 17);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"),
                              "SELECT count(*) FROM events WHERE kind = 'conflict' AND step = 17 "
                              "AND detail LIKE '%lane_state%'"),
                  1);
    ordo_ledger_close(ledger);
    /* the first state stands */
    expect_stored("SELECT hex(lane_state) FROM epoch_states", state, size);
    /* a state given with a step already recorded without one fills it in */
    ledger = fixture_open("l.db");
    ASSERT_OK(report(ledger, run, 33, 8, NULL, 0, &result, &err), &err);
    free(state);
    state = make_state(8, 33, 5, &size);
    ASSERT_OK(report(ledger, run, 33, 8, state, size, &result, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "epoch_states", run), 2);
    free(state);
    free(other);
}

/* A state that is not the step's is refused naming the step and what is
 * wrong, and nothing of the batch is recorded. */
TEST(epoch_states_that_are_not_the_steps_are_refused)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 8, 2);
    ordo_error err;
    size_t size = 0;
    unsigned char *state = make_state(8, 17, 5, &size);
    ASSERT_STATUS(report(ledger, run, 18, 8, state, size, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 18: its lane state was taken after step 17");
    ASSERT_STATUS(report(ledger, run, 17, 8, state, size - 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 17: its lane state is not a checkpoint");
    ASSERT_STATUS(report(ledger, run, 17, 8, state, 0, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 17: its lane state has 0 bytes");
    ASSERT_STATUS(report(ledger, run, 17, 8, (const unsigned char *)"\xff\xff\xff", 3, NULL, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 17: its lane state is not a checkpoint");
    unsigned char *four = NULL;
    size_t four_size = 0;
    four = make_state(4, 17, 5, &four_size);
    ASSERT_STATUS(report(ledger, run, 17, 8, four, four_size, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 17: its lane state holds 4 lanes, its segment has 8");
    /* a rank-bound segment keeps none */
    int64_t rank = 0, segment = 0;
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ordo_run_spec spec = {.name = "rank", .recipe_id = id, .lanes = 8};
    ASSERT_OK(ordo_run_create(ledger, &spec, &rank, &err), &err);
    int ranks[4] = {0, 1, 2, 3};
    ordo_segment_spec seg = {.world_size = 4,
                             .start_step = 1,
                             .lanes = 4,
                             .lane_ranks = ranks,
                             .lane_binding = ORDO_BINDING_RANK};
    ASSERT_OK(ordo_segment_add(ledger, rank, &seg, &segment, &err), &err);
    ASSERT_STATUS(report(ledger, rank, 17, 4, four, four_size, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 17: a lane state is kept for logical lanes only");
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM steps"), 0);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM epoch_states"), 0);
    free(state);
    free(four);
}

/* A position's record unknown (0: a resume from a format-5 checkpoint
 * has not read it yet) matches any: the state that knows it replaces the
 * one that does not, whichever came first; two known records that differ
 * are a conflict. Checkpoints are compared the same way. */
TEST(epoch_states_with_unknown_records_take_the_known_ones)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 8, 2);
    ordo_error err;
    ordo_record_result result;
    size_t na = 0, nb = 0, nc = 0;
    unsigned char *a = make_state_at(8, 17, 5, 0, &na), *b = make_state_at(8, 17, 5, 7, &nb),
                  *c = make_state_at(8, 17, 5, 9, &nc);
    int same = 0, more = 0;
    ASSERT_OK(ordo_checkpoint_equivalent(a, na, b, nb, &same, &more, &err), &err);
    ASSERT(same && more);
    ASSERT_OK(ordo_checkpoint_equivalent(b, nb, a, na, &same, &more, &err), &err);
    ASSERT(same && !more);
    ASSERT_OK(ordo_checkpoint_equivalent(b, nb, c, nc, &same, &more, &err), &err);
    ASSERT(!same && !more);
    ASSERT_OK(report(ledger, run, 17, 8, a, na, &result, &err), &err);
    ASSERT_OK(report(ledger, run, 17, 8, b, nb, &result, &err), &err); /* knows more: kept */
    ASSERT_EQ_INT(result.conflicts, 0);
    ASSERT_OK(report(ledger, run, 17, 8, a, na, &result, &err), &err); /* knows less: no change */
    ASSERT_EQ_INT(result.conflicts, 0);
    ASSERT_STATUS(report(ledger, run, 17, 8, c, nc, &result, &err), ORDO_CONFLICT, &err);
    ASSERT_EQ_INT(result.conflicts, 1);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "r", &info, &err), &err);
    ASSERT_EQ_INT(info.lane_states, 1);
    /* checkpoints: the same rules */
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 17, 8, a, na, &err), &err);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 17, 8, b, nb, &err), &err);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 17, 8, a, na, &err), &err);
    ASSERT_STATUS(ordo_checkpoint_record(ledger, run, 17, 8, c, nc, &err), ORDO_CONFLICT, &err);
    ordo_ledger_close(ledger);
    expect_stored("SELECT hex(lane_state) FROM epoch_states", b, nb);
    expect_stored("SELECT hex(lane_state) FROM checkpoints", b, nb);
    free(a);
    free(b);
    free(c);
}

/* Migration 0008 counts the lane states a ledger of version 7 holds. */
TEST(migration_counts_the_lane_states_recorded)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 8, 2);
    ordo_error err;
    ordo_record_result result;
    for (int64_t step = 1; step <= 3; step++) {
        size_t size = 0;
        unsigned char *state = make_state(8, step, 5, &size);
        ASSERT_OK(report(ledger, run, step, 8, state, size, &result, &err), &err);
        free(state);
    }
    ASSERT_OK(report(ledger, run, 4, 8, NULL, 0, &result, &err), &err);
    ordo_ledger_close(ledger);
    fixture_sql(test_path("l.db"), "ALTER TABLE runs DROP COLUMN lane_states");
    fixture_sql(test_path("l.db"), "PRAGMA user_version = 7");
    ledger = fixture_open("l.db");
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "r", &info, &err), &err);
    ASSERT_EQ_INT(info.lane_states, 3);
    ASSERT_EQ_INT(info.steps, 4);
    ordo_ledger_close(ledger);
}
