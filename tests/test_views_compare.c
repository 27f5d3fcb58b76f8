/* Comparing runs through the step blocks: against a brute-force compare of
 * the steps themselves, on sparse runs across block boundaries; and the
 * blocks rebuilt by migration 0003 for steps recorded before it. */
#include <pthread.h>

#include "fixtures.h"

typedef struct {
    int64_t steps[4000];
    unsigned char digests[4000][ORDO_DIGEST_SIZE];
    size_t count;
} step_list;

static int collect(const ordo_step *s, void *context)
{
    step_list *l = context;
    l->steps[l->count] = s->step;
    memcpy(l->digests[l->count], s->batch_digest, ORDO_DIGEST_SIZE);
    l->count++;
    return 0;
}

/* What compare must say, from the steps themselves. */
static void brute_force(ordo_ledger *ledger, int64_t a, int64_t b, ordo_compare_result *want)
{
    static step_list x, y;
    ordo_error err;
    x.count = y.count = 0;
    ASSERT_OK(ordo_steps_scan(ledger, a, 1, ORDO_STEP_MAX, collect, &x, &err), &err);
    ASSERT_OK(ordo_steps_scan(ledger, b, 1, ORDO_STEP_MAX, collect, &y, &err), &err);
    memset(want, 0, sizeof *want);
    for (size_t i = 0, j = 0; i < x.count && j < y.count;) {
        if (x.steps[i] == y.steps[j]) {
            want->steps_compared++;
            if (memcmp(x.digests[i], y.digests[j], ORDO_DIGEST_SIZE) == 0)
                want->matched++;
            else if (want->diverged++ == 0)
                want->first_divergent_step = x.steps[i];
            i++, j++;
        } else if (x.steps[i] < y.steps[j]) {
            i++;
        } else {
            j++;
        }
    }
    want->only_a = (int64_t)x.count - want->steps_compared;
    want->only_b = (int64_t)y.count - want->steps_compared;
}

static void record_some(ordo_ledger *ledger, int64_t run, unsigned *state, unsigned seed,
                        int every)
{
    static unsigned char lanes[4][ORDO_DIGEST_SIZE];
    ordo_error err;
    for (int64_t s = 1; s <= 3000; s++) {
        *state = *state * 1103515245u + 12345u;
        if ((int)((*state >> 16) % 100) >= every)
            continue;
        ordo_step step;
        /* mostly the shared digest; sometimes this run's own */
        unsigned own = (*state >> 8) % 50 == 0 ? seed : 1;
        fixture_step(&step, s, 4, &lanes[0][0], own);
        ordo_status status = ordo_steps_record(ledger, run, &step, 1, NULL, &err);
        ASSERT(status == ORDO_OK);
    }
}

static void check_pair(ordo_ledger *ledger, const char *a, const char *b, int64_t ia, int64_t ib)
{
    ordo_compare_result got, want;
    ordo_error err;
    ASSERT_OK(ordo_compare_runs(ledger, a, b, &got, &err), &err);
    brute_force(ledger, ia, ib, &want);
    ASSERT_EQ_INT(got.steps_compared, want.steps_compared);
    ASSERT_EQ_INT(got.matched, want.matched);
    ASSERT_EQ_INT(got.diverged, want.diverged);
    ASSERT_EQ_INT(got.first_divergent_step, want.first_divergent_step);
    ASSERT_EQ_INT(got.only_a, want.only_a);
    ASSERT_EQ_INT(got.only_b, want.only_b);
    int64_t in_ranges = 0;
    for (size_t i = 0; i < got.range_count; i++) {
        ASSERT(got.ranges[i][0] <= got.ranges[i][1]);
        ASSERT(i == 0 || got.ranges[i][0] > got.ranges[i - 1][1]);
        in_ranges += got.ranges[i][1] - got.ranges[i][0] + 1;
    }
    ASSERT(in_ranges >= got.diverged);
    /* Buckets for display count every step once, and a bucket holding a
     * divergent step says so. */
    ordo_compare_buckets_result buckets;
    ASSERT_OK(ordo_compare_buckets(ledger, a, b, 0, 0, 37, &buckets, &err), &err);
    int64_t matched = 0, diverged = 0, missing = 0;
    for (size_t i = 0; i < buckets.count; i++) {
        const ordo_compare_bucket *k = &buckets.buckets[i];
        matched += k->matched;
        diverged += k->diverged;
        missing += k->missing;
        int has_divergence = 0;
        for (size_t j = 0; j < got.range_count; j++)
            has_divergence |= got.ranges[j][0] <= k->to && got.ranges[j][1] >= k->from;
        ASSERT_EQ_INT(k->diverged > 0, has_divergence);
    }
    ASSERT_EQ_INT(matched, want.matched);
    ASSERT_EQ_INT(diverged, want.diverged);
    ASSERT_EQ_INT(missing, want.only_a + want.only_b);
    ordo_compare_buckets_free(&buckets);
    ordo_compare_result_free(&got);
}

TEST(compare_by_blocks_equals_brute_force)
{
    ordo_ledger *ledger = fixture_open("l.db");
    const char *names[3] = {"a", "b", "c"};
    int64_t ids[3];
    unsigned state = 99;
    int density[3] = {100, 70, 15};
    for (int r = 0; r < 3; r++) {
        ids[r] = fixture_run(ledger, names[r], 4, 2);
        record_some(ledger, ids[r], &state, 100 + (unsigned)r, density[r]);
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            check_pair(ledger, names[a], names[b], ids[a], ids[b]);
    ordo_ledger_close(ledger);
}

TEST(migration_rebuilds_step_blocks)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t a = fixture_run(ledger, "a", 4, 2), b = fixture_run(ledger, "b", 4, 2);
    unsigned state = 7;
    record_some(ledger, a, &state, 11, 90);
    record_some(ledger, b, &state, 12, 60);
    ordo_compare_result before;
    ordo_error err;
    ASSERT_OK(ordo_compare_runs(ledger, "a", "b", &before, &err), &err);
    ordo_ledger_close(ledger);
    /* As a ledger from before migration 0003 looked: no blocks (nor what
     * later migrations add). */
    fixture_sql(test_path("l.db"), "ALTER TABLE shards DROP COLUMN chunk_digests");
    fixture_sql(test_path("l.db"), "DROP TABLE step_blocks");
    fixture_sql(test_path("l.db"), "DROP TABLE shard_files");
    fixture_sql(test_path("l.db"), "PRAGMA user_version = 2");
    ledger = fixture_open("l.db"); /* migrates to the latest */
    ASSERT_EQ_INT(ordo_ledger_schema_version(ledger), ordo_schema_version_latest());
    ordo_compare_result after;
    ASSERT_OK(ordo_compare_runs(ledger, "a", "b", &after, &err), &err);
    ASSERT(before.steps_compared > 100);
    ASSERT_EQ_INT(after.steps_compared, before.steps_compared);
    ASSERT_EQ_INT(after.diverged, before.diverged);
    ASSERT_EQ_INT(after.first_divergent_step, before.first_divergent_step);
    ASSERT_EQ_INT(after.only_a, before.only_a);
    ASSERT_EQ_INT(after.range_count, before.range_count);
    ordo_compare_result_free(&before);
    ordo_compare_result_free(&after);
    check_pair(ledger, "a", "b", a, b);
    ordo_ledger_close(ledger);
}

static void record_one_step(ordo_ledger *ledger, int64_t run, int64_t step, unsigned seed)
{
    static unsigned char lanes[4][ORDO_DIGEST_SIZE];
    ordo_step s;
    ordo_error err;
    fixture_step(&s, step, 4, &lanes[0][0], seed);
    ASSERT_OK(ordo_steps_record(ledger, run, &s, 1, NULL, &err), &err);
}

/* Steps near the largest step number keep to their run's blocks. */
TEST(step_blocks_of_large_steps_stay_in_their_run)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t r1 = fixture_run(ledger, "r1", 4, 2), r2 = fixture_run(ledger, "r2", 4, 2),
            r3 = fixture_run(ledger, "r3", 4, 2);
    for (int64_t s = 1; s <= 120; s++) {
        record_one_step(ledger, r2, s, 2);
        record_one_step(ledger, r3, s, 3); /* every step differs */
    }
    const int64_t large[] = {(int64_t)120 << 30 | 1, ORDO_STEP_MAX - 1, ORDO_STEP_MAX};
    for (size_t i = 0; i < 3; i++) {
        record_one_step(ledger, r1, large[i], 1);
        record_one_step(ledger, r2, large[i], 1);
    }
    ordo_compare_result r;
    ordo_error err;
    ASSERT_OK(ordo_compare_runs(ledger, "r2", "r3", &r, &err), &err);
    ASSERT_EQ_INT(r.steps_compared, 120);
    ASSERT_EQ_INT(r.diverged, 120);
    ASSERT_EQ_INT(r.only_a, 3);
    ordo_compare_result_free(&r);
    ASSERT_OK(ordo_compare_runs(ledger, "r1", "r2", &r, &err), &err);
    ASSERT_EQ_INT(r.steps_compared, 3);
    ASSERT_EQ_INT(r.matched, 3);
    ASSERT_EQ_INT(r.only_b, 120);
    ordo_compare_result_free(&r);
    ordo_ledger_close(ledger);
}

static void lane_report(ordo_lane_report *r, int64_t step, int lane, unsigned seed)
{
    unsigned char lanes[4][ORDO_DIGEST_SIZE];
    ordo_step s;
    fixture_step(&s, step, 4, &lanes[0][0], seed);
    memset(r, 0, sizeof *r);
    r->step = step;
    r->lane = lane;
    r->rank = lane % 2; /* fixture_run's plan at world size 2 */
    memcpy(r->digest, lanes[lane], ORDO_DIGEST_SIZE);
}

TEST(lane_reports_composing_several_steps_count_each_once)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t a = fixture_run(ledger, "a", 4, 2), b = fixture_run(ledger, "b", 4, 2);
    ordo_lane_report reports[12];
    for (int64_t s = 1; s <= 3; s++) {
        for (int lane = 0; lane < 4; lane++)
            lane_report(&reports[(s - 1) * 4 + lane], s, lane, 1);
        record_one_step(ledger, b, s, 1);
    }
    ordo_record_result result;
    size_t completed = 0;
    ordo_error err;
    ASSERT_OK(ordo_lanes_record(ledger, a, reports, 12, &result, &completed, &err), &err);
    ASSERT_EQ_INT(completed, 3);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "a", &info, &err), &err);
    ASSERT_EQ_INT(info.steps, 3);
    ordo_compare_result r;
    ASSERT_OK(ordo_compare_runs(ledger, "a", "b", &r, &err), &err);
    ASSERT_EQ_INT(r.matched, 3);
    ASSERT_EQ_INT(r.only_a, 0);
    ordo_compare_result_free(&r);
    ordo_ledger_close(ledger);
}

/* Lanes reported before the step was recorded some other way are checked
 * against it when the next lane comes, and then go. */
TEST(pending_lane_reports_are_checked_when_the_step_is_recorded_otherwise)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t a = fixture_run(ledger, "a", 4, 2);
    ordo_lane_report reports[3], last;
    for (int lane = 0; lane < 3; lane++)
        lane_report(&reports[lane], 1, lane, 1);
    ordo_record_result result;
    size_t completed;
    ordo_error err;
    ASSERT_OK(ordo_lanes_record(ledger, a, reports, 3, &result, &completed, &err), &err);
    /* the whole step differs in every lane: its three pending lanes are
     * conflicts at once, and nothing is left waiting for lane 3 */
    static unsigned char lanes[4][ORDO_DIGEST_SIZE];
    ordo_step whole;
    fixture_step(&whole, 1, 4, &lanes[0][0], 2);
    ASSERT_STATUS(ordo_steps_record(ledger, a, &whole, 1, &result, &err), ORDO_CONFLICT, &err);
    ASSERT_EQ_INT(result.inserted, 1);
    ASSERT_EQ_INT(result.conflicts, 3);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "lane_reports", a), 0);
    lane_report(&last, 1, 3, 1);
    ASSERT_OK(ordo_lanes_record(ledger, a, &last, 1, &result, &completed, &err), &err);
    ASSERT_EQ_INT(result.conflicts, 1);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM events WHERE kind = "
                                                 "'conflict'"), 4);
    /* pending lanes that agree with the whole step go without a conflict */
    int64_t b = fixture_run(ledger, "b", 4, 2);
    ASSERT_OK(ordo_lanes_record(ledger, b, reports, 3, &result, &completed, &err), &err);
    fixture_step(&whole, 1, 4, &lanes[0][0], 1);
    ASSERT_OK(ordo_steps_record(ledger, b, &whole, 1, &result, &err), &err);
    ASSERT_EQ_INT(result.conflicts, 0);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "lane_reports", b), 0);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM events WHERE kind = "
                                                 "'conflict'"), 4);
    ordo_ledger_close(ledger);
}

static int64_t writer_run;
static volatile int writer_stop;

static void *write_steps(void *unused)
{
    (void)unused;
    ordo_ledger *ledger = fixture_open("l.db");
    static unsigned char lanes[60][4][ORDO_DIGEST_SIZE];
    for (int64_t s = 1; s <= 6000 && !writer_stop; s += 60) {
        ordo_step steps[60];
        for (int k = 0; k < 60; k++)
            fixture_step(&steps[k], s + k, 4, &lanes[k][0][0], 1);
        ordo_error err;
        ordo_steps_record(ledger, writer_run, steps, 60, NULL, &err);
    }
    ordo_ledger_close(ledger);
    return NULL;
}

/* Counts and steps come from one snapshot while another connection writes. */
TEST(compare_reads_one_snapshot)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t a = fixture_run(ledger, "a", 4, 2);
    writer_run = fixture_run(ledger, "b", 4, 2);
    static unsigned char lanes[120][4][ORDO_DIGEST_SIZE];
    ordo_error err;
    for (int64_t s = 1; s <= 6000; s += 120) {
        ordo_step steps[120];
        for (int k = 0; k < 120; k++)
            fixture_step(&steps[k], s + k, 4, &lanes[k][0][0], 1);
        ASSERT_OK(ordo_steps_record(ledger, a, steps, 120, NULL, &err), &err);
    }
    pthread_t writer;
    ASSERT(pthread_create(&writer, NULL, write_steps, NULL) == 0);
    for (int i = 0; i < 400; i++) {
        ordo_compare_result r;
        ASSERT_OK(ordo_compare_runs(ledger, "a", "b", &r, &err), &err);
        ASSERT_EQ_INT(r.only_b, 0);
        ASSERT_EQ_INT(r.only_a + r.steps_compared, 6000);
        ordo_compare_result_free(&r);
    }
    writer_stop = 1;
    pthread_join(writer, NULL);
    ordo_ledger_close(ledger);
}
