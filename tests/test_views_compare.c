/* Comparing runs through the step blocks: against a brute-force compare of
 * the steps themselves, on sparse runs across block boundaries; and the
 * blocks rebuilt by migration 0003 for steps recorded before it; and the
 * conflicting reports of a job restarted in place. */
#include <jansson.h>
#include <pthread.h>

#include "corpus.h"
#include "fixtures.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

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

static void record_some(ordo_ledger *ledger, int64_t run, unsigned *state, unsigned seed, int every)
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

static void check_pair(ordo_ledger *ledger, int64_t ia, int64_t ib)
{
    ordo_compare_result got, want;
    ordo_error err;
    ASSERT_OK(ordo_compare_runs(ledger, ia, ib, &got, &err), &err);
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
    ASSERT_OK(ordo_compare_buckets(ledger, ia, ib, 0, 0, 37, &buckets, &err), &err);
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
    ordo_compare_buckets_result_free(&buckets);
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
            check_pair(ledger, ids[a], ids[b]);
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
    ASSERT_OK(ordo_compare_runs(ledger, fixture_run_id(ledger, "a"), fixture_run_id(ledger, "b"),
                                &before, &err),
              &err);
    ordo_ledger_close(ledger);
    /* As a ledger from before migration 0003 looked: no blocks (nor what
     * later migrations add). */
    fixture_sql(test_path("l.db"), "ALTER TABLE shards DROP COLUMN chunk_digests");
    fixture_sql(test_path("l.db"), "DROP TABLE step_blocks");
    fixture_sql(test_path("l.db"), "DROP TABLE shard_files");
    fixture_sql(test_path("l.db"), "DROP TABLE epoch_states");
    fixture_sql(test_path("l.db"), "ALTER TABLE runs DROP COLUMN lane_states");
    fixture_sql(test_path("l.db"), "PRAGMA user_version = 2");
    ledger = fixture_open("l.db"); /* migrates to the latest */
    ASSERT_EQ_INT(ordo_ledger_schema_version(ledger), ordo_schema_version_latest());
    ordo_compare_result after;
    ASSERT_OK(ordo_compare_runs(ledger, fixture_run_id(ledger, "a"), fixture_run_id(ledger, "b"),
                                &after, &err),
              &err);
    ASSERT(before.steps_compared > 100);
    ASSERT_EQ_INT(after.steps_compared, before.steps_compared);
    ASSERT_EQ_INT(after.diverged, before.diverged);
    ASSERT_EQ_INT(after.first_divergent_step, before.first_divergent_step);
    ASSERT_EQ_INT(after.only_a, before.only_a);
    ASSERT_EQ_INT(after.range_count, before.range_count);
    ordo_compare_result_free(&before);
    ordo_compare_result_free(&after);
    check_pair(ledger, a, b);
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
    ASSERT_OK(ordo_compare_runs(ledger, fixture_run_id(ledger, "r2"), fixture_run_id(ledger, "r3"),
                                &r, &err),
              &err);
    ASSERT_EQ_INT(r.steps_compared, 120);
    ASSERT_EQ_INT(r.diverged, 120);
    ASSERT_EQ_INT(r.only_a, 3);
    ordo_compare_result_free(&r);
    ASSERT_OK(ordo_compare_runs(ledger, fixture_run_id(ledger, "r1"), fixture_run_id(ledger, "r2"),
                                &r, &err),
              &err);
    ASSERT_EQ_INT(r.steps_compared, 3);
    ASSERT_EQ_INT(r.matched, 3);
    ASSERT_EQ_INT(r.only_b, 120);
    ordo_compare_result_free(&r);
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
        ASSERT_OK(ordo_compare_runs(ledger, fixture_run_id(ledger, "a"),
                                    fixture_run_id(ledger, "b"), &r, &err),
                  &err);
        ASSERT_EQ_INT(r.only_b, 0);
        ASSERT_EQ_INT(r.only_a + r.steps_compared, 6000);
        ordo_compare_result_free(&r);
    }
    writer_stop = 1;
    pthread_join(writer, NULL);
    ordo_ledger_close(ledger);
}

/* Steps a job recorded after its last checkpoint before it crashed: made
 * up here as the steps 61-65 of a 4-lane run. */
static void crashed_after(const char *db, const char *name)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, 0, &ledger, &err), &err);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, name, &info, &err), &err);
    unsigned char lanes[5][4 * ORDO_DIGEST_SIZE];
    ordo_step steps[5];
    for (int i = 0; i < 5; i++) {
        memset(lanes[i], 0xA0 + i, sizeof lanes[i]);
        ordo_step_init(&steps[i], 61 + i);
        steps[i].lane_digests = lanes[i];
        steps[i].lane_count = 4;
        ordo_batch_digest(lanes[i], 4, steps[i].batch_digest);
    }
    ordo_record_result result;
    ASSERT_OK(ordo_steps_record(ledger, info.id, steps, 5, &result, &err), &err);
    ordo_ledger_close(ledger);
}

/* A rank-bound job restarted in place at another world size re-reports
 * the steps it had recorded before its crash: compare says so. */
TEST(compare_reports_conflicting_reports)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 60, 17);
    const char *recipe = corpus_one_source(4, 8, 16, 2, 2);
    char db[512];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "rank", "--world-size", "4", "--steps",
                   "60", "--quiet", "--lane-binding", "rank", "--checkpoint-every", "30"),
                 0));
    free(ordo_ok(A("compare", "rank", "rank", "--db", db), 0));
    crashed_after(db, "rank");
    cli_result res = run_ordo(
        NULL, A("resume", "rank", "--db", db, "--world-size", "8", "--steps", "80", "--quiet"));
    ASSERT_EQ_INT(res.code, 0);
    ASSERT_CONTAINS(res.err, "5 steps differ from what run 'rank' recorded before (first: "
                             "step 61)");
    cli_result_free(&res);
    char *out = ordo_ok(A("compare", "rank", "rank", "--db", db, "--json"), 3);
    json_t *r = json_loads(out, 0, NULL);
    free(out);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "matched")), 80);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "conflicts_a")), 5);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "conflicts_b")), 5);
    ASSERT_EQ_INT(json_integer_value(json_object_get(r, "first_conflict_step")), 61);
    json_decref(r);
    out = ordo_ok(A("compare", "rank", "rank", "--db", db), 3);
    ASSERT_CONTAINS(out, "rank: 5 steps");
    ASSERT_CONTAINS(out, "(first: step 61)");
    free(out);
}
