/* Comparing runs through the step blocks: against a brute-force compare of
 * the steps themselves, on sparse runs across block boundaries; and the
 * blocks rebuilt by migration 0003 for steps recorded before it. */
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
    /* As a ledger from before migration 0003 looked: no blocks. */
    fixture_sql(test_path("l.db"), "DROP TABLE step_blocks");
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
