/* Steps: batches, read-back, idempotency, conflicts, all-or-nothing. */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>

#include "fixtures.h"

#define LANES 32

/* Runs whose kept step count differs from their steps rows. */
#define COUNTS_DISAGREE                                                                            \
    "SELECT count(*) FROM runs r WHERE step_count != "                                             \
    "(SELECT count(*) FROM steps t WHERE t.run_id = r.id)"

typedef struct {
    ordo_step *steps;
    unsigned char *lanes;
    size_t count;
} batch;

static batch make_batch(int64_t first, size_t count, unsigned seed)
{
    batch b = {calloc(count, sizeof(ordo_step)), malloc(count * LANES * ORDO_DIGEST_SIZE), count};
    ASSERT(b.steps && b.lanes);
    for (size_t i = 0; i < count; i++)
        fixture_step(&b.steps[i], first + (int64_t)i, LANES, b.lanes + i * LANES * ORDO_DIGEST_SIZE,
                     seed);
    return b;
}

static void free_batch(batch *b)
{
    free(b->steps);
    free(b->lanes);
}

typedef struct {
    batch *expected;
    size_t seen;
} compare_context;

static int compare_step(const ordo_step *s, void *context)
{
    compare_context *c = context;
    const ordo_step *e = &c->expected->steps[c->seen++];
    ASSERT_EQ_INT(s->step, e->step);
    ASSERT(memcmp(s->batch_digest, e->batch_digest, ORDO_DIGEST_SIZE) == 0);
    ASSERT_EQ_INT(s->lane_count, LANES);
    ASSERT(memcmp(s->lane_digests, e->lane_digests, LANES * ORDO_DIGEST_SIZE) == 0);
    ASSERT_EQ_INT(s->tokens, e->tokens);
    ASSERT_EQ_INT(s->has_loss, e->has_loss);
    if (e->has_loss)
        ASSERT(s->loss == e->loss);
    ASSERT_EQ_INT(s->source_count, e->source_count);
    for (int i = 0; i < e->source_count; i++)
        ASSERT_EQ_INT(s->source_tokens[i], e->source_tokens[i]);
    return 0;
}

TEST(steps_record_and_read_back)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", LANES, 8);
    batch b = make_batch(1, 300, 1);
    int64_t sources[3] = {100, 0, 4000000000LL};
    for (size_t i = 0; i < b.count; i++) {
        b.steps[i].tokens = 4096 + (int64_t)i;
        b.steps[i].has_loss = i % 2;
        b.steps[i].loss = 3.25 - 0.001 * (double)i;
        b.steps[i].source_tokens = sources;
        b.steps[i].source_count = 3;
    }
    b.steps[7].metrics = "{\"lr\": 0.0003, \"grad_norm\": 1.5}";
    ordo_record_result result;
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, b.steps, b.count, &result, &err), &err);
    ASSERT_EQ_INT(result.inserted, 300);
    ASSERT_EQ_INT(result.unchanged, 0);
    ASSERT_EQ_INT(result.conflicts, 0);

    compare_context context = {&b, 0};
    ASSERT_OK(ordo_steps_scan(ledger, run, 1, 300, compare_step, &context, &err), &err);
    ASSERT_EQ_INT(context.seen, 300);
    batch tail = {b.steps + 99, b.lanes + 99 * LANES * ORDO_DIGEST_SIZE, 11};
    context = (compare_context){&tail, 0};
    ASSERT_OK(ordo_steps_scan(ledger, run, 100, 110, compare_step, &context, &err), &err);
    ASSERT_EQ_INT(context.seen, 11);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "r", &info, &err), &err);
    ASSERT_EQ_INT(info.steps, 300);
    ASSERT_EQ_INT(info.first_step, 1);
    ASSERT_EQ_INT(info.last_step, 300);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"),
                              "SELECT json_extract(metrics, '$.grad_norm') * 10 FROM steps "
                              "WHERE step = 8"),
                  15);
    free_batch(&b);
    ordo_ledger_close(ledger);
}

TEST(same_step_same_digest_is_a_no_op)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", LANES, 4);
    batch b = make_batch(1, 50, 1);
    ordo_record_result result;
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, b.steps, b.count, &result, &err), &err);
    /* Reported again, now with a loss: nothing new, but the loss fills in. */
    for (size_t i = 0; i < b.count; i++) {
        b.steps[i].has_loss = 1;
        b.steps[i].loss = 2.5;
    }
    ASSERT_OK(ordo_steps_record(ledger, run, b.steps, b.count, &result, &err), &err);
    ASSERT_EQ_INT(result.inserted, 0);
    ASSERT_EQ_INT(result.unchanged, 50);
    ASSERT_EQ_INT(result.conflicts, 0);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "steps", run), 50);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM steps WHERE loss = 2.5"),
                  50);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "events", run), 0);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), COUNTS_DISAGREE), 0);
    /* A whole-step report without lane digests of the same step agrees too. */
    b.steps[0].lane_digests = NULL;
    b.steps[0].lane_count = 0;
    ASSERT_OK(ordo_steps_record(ledger, run, b.steps, 1, &result, &err), &err);
    ASSERT_EQ_INT(result.unchanged, 1);
    free_batch(&b);
    ordo_ledger_close(ledger);
}

TEST(different_digest_is_a_conflict_and_never_overwrites)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", LANES, 4);
    batch first = make_batch(1, 20, 1);
    ordo_record_result result;
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, first.steps, first.count, &result, &err), &err);
    /* Steps 11..20 reported again with other data (seed 2). */
    batch second = make_batch(11, 10, 2);
    /* Only lane 3 differs at step 11. */
    memcpy(second.lanes, first.lanes + 10 * LANES * ORDO_DIGEST_SIZE, LANES * ORDO_DIGEST_SIZE);
    second.lanes[3 * ORDO_DIGEST_SIZE] ^= 1;
    ordo_batch_digest(second.lanes, LANES, second.steps[0].batch_digest);
    for (int round = 0; round < 2; round++) { /* the retry adds no events */
        ASSERT_STATUS(ordo_steps_record(ledger, run, second.steps, second.count, &result, &err),
                      ORDO_CONFLICT, &err);
        ASSERT_CONTAINS(err.message, "10 reported steps differ");
        ASSERT_CONTAINS(err.message, "first: step 11");
        ASSERT_EQ_INT(result.inserted, 0);
        ASSERT_EQ_INT(result.conflicts, 10);
        ASSERT_EQ_INT(result.first_conflict_step, 11);
    }
    ordo_event_list *events = NULL;
    ASSERT_OK(ordo_events_list(ledger, run, ORDO_EVENT_CONFLICT, &events, &err), &err);
    ASSERT_EQ_INT(events->count, 10);
    ASSERT_EQ_INT(events->items[0].step, 11);
    ASSERT_CONTAINS(events->items[0].detail, "\"lanes\":[3]");
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(first.steps[10].batch_digest, hex);
    ASSERT_CONTAINS(events->items[0].detail, hex);
    ordo_event_list_free(events);
    /* The first report stands. */
    compare_context context = {&first, 0};
    ASSERT_OK(ordo_steps_scan(ledger, run, 1, 20, compare_step, &context, &err), &err);
    ASSERT_EQ_INT(context.seen, 20);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "r", &info, &err), &err);
    ASSERT_EQ_INT(info.conflicts, 10);
    ASSERT_EQ_INT(info.steps, 20);
    free_batch(&first);
    free_batch(&second);
    ordo_ledger_close(ledger);
}

/* Records a batch where step `bad` is broken by `breaker`; expects
 * `expected` naming `needle`, and nothing of the batch stored. */
static void expect_refused(void (*breaker)(ordo_step *), const char *needle)
{
    static int calls;
    char name[32];
    snprintf(name, sizeof name, "l%d.db", calls++); /* a fresh ledger each time */
    ordo_ledger *ledger = fixture_open(name);
    int64_t run = fixture_run(ledger, "r", LANES, 4);
    batch b = make_batch(1, 100, 1);
    breaker(&b.steps[60]);
    ordo_record_result result;
    ordo_error err;
    ASSERT_STATUS(ordo_steps_record(ledger, run, b.steps, b.count, &result, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, needle);
    ASSERT_EQ_INT(result.inserted, 0);
    /* The same refusal on the inline (small batch) path. */
    ASSERT_STATUS(ordo_steps_record(ledger, run, b.steps + 58, 5, &result, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, needle);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path(name), "steps", run), 0);
    ASSERT_EQ_INT(fixture_int(test_path(name), COUNTS_DISAGREE), 0);
    free_batch(&b);
}

static void step_zero(ordo_step *s)
{
    s->step = 0;
}
static void step_negative(ordo_step *s)
{
    s->step = -5;
}
static void step_huge(ordo_step *s)
{
    s->step = ORDO_STEP_MAX + 1;
}
static void wrong_lane_count(ordo_step *s)
{
    s->lane_count = LANES - 1;
}
static void lanes_without_digests(ordo_step *s)
{
    s->lane_digests = NULL;
}
static void batch_digest_mismatch(ordo_step *s)
{
    s->batch_digest[0] ^= 0x80;
}
static void nan_loss(ordo_step *s)
{
    s->has_loss = 1, s->loss = NAN;
}
static void infinite_loss(ordo_step *s)
{
    s->has_loss = 1, s->loss = INFINITY;
}
static void negative_tokens(ordo_step *s)
{
    s->tokens = -7;
}
static void metrics_not_object(ordo_step *s)
{
    s->metrics = "[1, 2]";
}
static void metrics_malformed(ordo_step *s)
{
    s->metrics = "{\"lr\": }";
}
static void sources_missing(ordo_step *s)
{
    s->source_count = 2;
}

TEST(bad_steps_are_refused_whole_batch)
{
    expect_refused(step_zero, "step 0 is out of range");
    expect_refused(step_negative, "step -5 is out of range");
    expect_refused(step_huge, "out of range (1 to 1000000000000)");
    expect_refused(wrong_lane_count, "step 61 has 31 lane digests, its segment has 32 lanes");
    expect_refused(lanes_without_digests, "step 61: lane digest count (32)");
    expect_refused(batch_digest_mismatch, "step 61: batch digest is not the digest of its 32");
    expect_refused(nan_loss, "step 61: loss is not a finite number");
    expect_refused(infinite_loss, "step 61: loss is not a finite number");
    expect_refused(negative_tokens, "step 61: token counts");
    expect_refused(metrics_not_object, "step 61: metrics must be a JSON object");
    expect_refused(metrics_malformed, "step 61: metrics is not valid JSON");
    expect_refused(sources_missing, "step 61: source token count (2)");
}

TEST(step_before_first_segment_or_unknown_run)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", LANES, 4);
    int ranks[LANES];
    for (int lane = 0; lane < LANES; lane++)
        ranks[lane] = lane % 2;
    ordo_error err;
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ordo_run_spec spec = {.name = "late", .recipe_id = id, .lanes = LANES};
    int64_t late = 0, segment = 0;
    ASSERT_OK(ordo_run_create(ledger, &spec, &late, &err), &err);
    ordo_segment_spec seg = {
        .world_size = 2, .start_step = 100, .lanes = LANES, .lane_ranks = ranks};
    ASSERT_OK(ordo_segment_add(ledger, late, &seg, &segment, &err), &err);
    batch b = make_batch(99, 2, 1);
    ASSERT_STATUS(ordo_steps_record(ledger, late, b.steps, 2, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 99 comes before the run's first segment");
    ASSERT_OK(ordo_steps_record(ledger, late, b.steps + 1, 1, NULL, &err), &err);
    ASSERT_STATUS(ordo_steps_record(ledger, run + 1000, b.steps, 1, NULL, &err), ORDO_NOTFOUND,
                  &err);
    free_batch(&b);
    ordo_ledger_close(ledger);
}

TEST(lane_count_follows_the_segment)
{
    /* A rank-bound resume at W=8 after 4 lanes: steps then carry 8 lanes. */
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    int ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ordo_segment_spec seg = {.world_size = 8,
                             .start_step = 3,
                             .lanes = 8,
                             .lane_ranks = ranks,
                             .lane_binding = ORDO_BINDING_RANK};
    int64_t id;
    ordo_error err;
    ASSERT_OK(ordo_segment_add(ledger, run, &seg, &id, &err), &err);
    unsigned char lanes4[4 * ORDO_DIGEST_SIZE], lanes8[8 * ORDO_DIGEST_SIZE];
    ordo_step steps[2];
    fixture_step(&steps[0], 2, 4, lanes4, 1);
    fixture_step(&steps[1], 3, 8, lanes8, 1);
    ASSERT_OK(ordo_steps_record(ledger, run, steps, 2, NULL, &err), &err);
    fixture_step(&steps[0], 4, 4, lanes4, 1);
    ASSERT_STATUS(ordo_steps_record(ledger, run, steps, 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "step 4 has 4 lane digests, its segment has 8 lanes");
    ordo_ledger_close(ledger);
}

typedef struct {
    const char *path;
    const char *name;
    ordo_status status;
    char message[ORDO_ERROR_MESSAGE_SIZE];
} writer_args;

static void *writer(void *arg)
{
    writer_args *w = arg;
    ordo_ledger *ledger = NULL; /* one connection per thread */
    ordo_error err;
    w->status = ordo_ledger_open(w->path, 0, &ledger, &err);
    int64_t run = 0;
    if (w->status == ORDO_OK) {
        ordo_run_info info;
        w->status = ordo_run_get(ledger, w->name, &info, &err);
        run = info.id;
    }
    for (int64_t first = 1; w->status == ORDO_OK && first <= 2000; first += 100) {
        batch b = make_batch(first, 100, 3);
        w->status = ordo_steps_record(ledger, run, b.steps, b.count, NULL, &err);
        free_batch(&b);
    }
    if (w->status != ORDO_OK)
        memcpy(w->message, err.message, sizeof w->message);
    ordo_ledger_close(ledger);
    return NULL;
}

TEST(concurrent_writers_with_their_own_connections)
{
    ordo_ledger *ledger = fixture_open("l.db");
    fixture_run(ledger, "a", LANES, 4);
    fixture_run(ledger, "b", LANES, 8);
    ordo_ledger_close(ledger);
    writer_args args[2] = {{test_path("l.db"), "a", ORDO_OK, ""},
                           {test_path("l.db"), "b", ORDO_OK, ""}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_create(&threads[i], NULL, writer, &args[i]) == 0);
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_join(threads[i], NULL) == 0);
    for (int i = 0; i < 2; i++)
        if (args[i].status != ORDO_OK)
            test_fail(__FILE__, __LINE__, "writer %s: %s", args[i].name, args[i].message);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM steps"), 4000);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), COUNTS_DISAGREE), 0);
    /* Both runs saw the same data: same digests step for step. */
    ASSERT_EQ_INT(fixture_int(test_path("l.db"),
                              "SELECT count(*) FROM steps a JOIN steps b ON a.step = b.step "
                              "AND a.run_id < b.run_id AND a.batch_digest = b.batch_digest"),
                  2000);
}

typedef struct {
    const char *path;
    int locked;
    int release;
    int begin_rc;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
} lock_holder;

static void *hold_write_lock(void *arg)
{
    lock_holder *h = arg;
    sqlite3 *db = NULL;
    sqlite3_open(h->path, &db);
    h->begin_rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    pthread_mutex_lock(&h->mutex);
    h->locked = 1;
    pthread_cond_broadcast(&h->cond);
    while (!h->release)
        pthread_cond_wait(&h->cond, &h->mutex);
    pthread_mutex_unlock(&h->mutex);
    /* Keep the lock a little longer than it takes the writer to block. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    return NULL;
}

TEST(busy_ledger_waits_instead_of_failing)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", LANES, 4);
    lock_holder h = {test_path("l.db"),       0, 0, -1, PTHREAD_MUTEX_INITIALIZER,
                     PTHREAD_COND_INITIALIZER};
    pthread_t thread;
    ASSERT(pthread_create(&thread, NULL, hold_write_lock, &h) == 0);
    pthread_mutex_lock(&h.mutex);
    while (!h.locked)
        pthread_cond_wait(&h.cond, &h.mutex);
    h.release = 1; /* the holder commits 200 ms from now */
    pthread_cond_broadcast(&h.cond);
    pthread_mutex_unlock(&h.mutex);
    batch b = make_batch(1, 10, 1);
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, b.steps, b.count, NULL, &err), &err);
    pthread_join(thread, NULL);
    ASSERT_EQ_INT(h.begin_rc, SQLITE_OK); /* the lock really was held */
    free_batch(&b);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_count(test_path("l.db"), "steps", run), 10);
}

TEST(same_step_twice_in_one_batch)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 2);
    unsigned char lanes[3][4 * ORDO_DIGEST_SIZE];
    ordo_step steps[3];
    fixture_step(&steps[0], 5, 4, lanes[0], 1);
    fixture_step(&steps[1], 5, 4, lanes[1], 1); /* same data */
    fixture_step(&steps[2], 5, 4, lanes[2], 2); /* other data */
    ordo_record_result result;
    ordo_error err;
    ASSERT_STATUS(ordo_steps_record(ledger, run, steps, 3, &result, &err), ORDO_CONFLICT, &err);
    ASSERT_EQ_INT(result.inserted, 1);
    ASSERT_EQ_INT(result.unchanged, 1);
    ASSERT_EQ_INT(result.conflicts, 1);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT step_count FROM runs"), 1);
}
