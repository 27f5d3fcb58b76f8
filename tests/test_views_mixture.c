/* A run's mixture (ordo.h, "a run's mixture"): target shares from the
 * stored recipe's weights or schedule against the shares its steps
 * delivered, per step, per series bucket and summed up per source. */
#include <jansson.h>
#include <math.h>

#include "fixtures.h"

/* From step 1 web 0.75 / books 0.25; ramping from step 11 to step 21 to
 * 0.25 / 0.75. B = 16 samples of 8 tokens. */
static const char ramp_recipe[] =
    "{\"name\": \"ramp\", \"seed\": 1, \"seq_len\": 8, \"global_batch\": 16, \"lanes\": 4,"
    " \"sources\": [{\"name\": \"web\", \"shards\": []}, {\"name\": \"books\", \"shards\": []}],"
    " \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 3, \"books\": 1}},"
    " {\"step\": 21, \"linear_from\": 11, \"weights\": {\"web\": 0.25, \"books\": 0.75}}]}";

/* The web's target by hand: 0.75 to step 11, then linearly to 0.25 at 21. */
static double web_target(int64_t step)
{
    if (step <= 11)
        return 0.75;
    if (step >= 21)
        return 0.25;
    return 0.75 + (0.25 - 0.75) * (double)(step - 11) / 10.0;
}

/* web's samples at a step: its target rounded, two more at step 17. */
static int64_t web_samples(int64_t step)
{
    return (int64_t)floor(web_target(step) * 16 + 0.5) + (step == 17 ? 2 : 0);
}

static int64_t put_run(ordo_ledger *ledger, const char *recipe, const char *name)
{
    ordo_error err;
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, recipe, strlen(recipe), id, &err), &err);
    ordo_run_spec spec = {.name = name, .recipe_id = id, .lanes = 4};
    int64_t run = 0, segment = 0;
    ASSERT_OK(ordo_run_create(ledger, &spec, &run, &err), &err);
    int ranks[4] = {0, 0, 0, 0};
    ordo_segment_spec seg = {.world_size = 1, .start_step = 1, .lanes = 4, .lane_ranks = ranks};
    ASSERT_OK(ordo_segment_add(ledger, run, &seg, &segment, &err), &err);
    return run;
}

/* Steps 1..30, per-source tokens on steps 1..24 only. */
static void record_steps(ordo_ledger *ledger, int64_t run)
{
    static unsigned char lanes[30][4 * ORDO_DIGEST_SIZE];
    static int64_t tokens[30][2];
    ordo_step steps[30];
    for (int64_t k = 1; k <= 30; k++) {
        ordo_step *s = &steps[k - 1];
        fixture_step(s, k, 4, lanes[k - 1], 5);
        s->tokens = 128;
        s->pad_tokens = 0;
        if (k > 24)
            continue;
        tokens[k - 1][0] = web_samples(k) * 8;
        tokens[k - 1][1] = (16 - web_samples(k)) * 8;
        s->source_tokens = tokens[k - 1];
        s->source_count = 2;
    }
    ordo_record_result result;
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, steps, 30, &result, &err), &err);
}

static ordo_mixture *open_mixture(ordo_ledger *ledger, const char *run_name)
{
    ordo_run_info info;
    ordo_mixture *mixture = NULL;
    ordo_error err;
    ASSERT_OK(ordo_run_get(ledger, run_name, &info, &err), &err);
    ASSERT_OK(ordo_mixture_open(ledger, info.recipe_id, &mixture, &err), &err);
    return mixture;
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-8; /* the targets are exact to 2^-30 */
}

typedef struct {
    const ordo_mixture *mixture;
    char *text;
} step_text;

static int keep_view(const ordo_step *step, void *context)
{
    step_text *t = context;
    t->text = ordo_step_mixture_json(step, t->mixture);
    return 1;
}

/* Step k's JSON view, parsed. */
static json_t *step_view(ordo_ledger *ledger, int64_t run, const ordo_mixture *m, int64_t k)
{
    step_text t = {m, NULL};
    ordo_error err;
    ASSERT_OK(ordo_steps_scan(ledger, run, k, k, keep_view, &t, &err), &err);
    ASSERT(t.text != NULL);
    json_t *view = json_loads(t.text, 0, NULL);
    ASSERT(view != NULL);
    ordo_free(t.text);
    return view;
}

static double share_at(json_t *view, const char *key, size_t i)
{
    json_t *list = json_object_get(view, key);
    ASSERT(json_is_array(list) && json_array_size(list) == 2);
    return json_number_value(json_array_get(list, i));
}

/* Per step, the target follows the schedule's ramp (at its middle, step
 * 16, exactly half: 0.75 + (0.25 - 0.75) * 5/10) and the delivered share
 * is the step's tokens; the view of a step carries both. */
TEST(mixture_step_targets_follow_the_ramp_and_delivered_the_tokens)
{
    ordo_ledger *ledger = fixture_open("mix.db");
    int64_t run = put_run(ledger, ramp_recipe, "ramp");
    record_steps(ledger, run);
    ordo_mixture *m = open_mixture(ledger, "ramp");
    ASSERT_EQ_INT(ordo_mixture_sources(m), 2);
    ASSERT_EQ_STR(ordo_mixture_source_name(m, 0), "web");
    ASSERT_EQ_STR(ordo_mixture_source_name(m, 1), "books");
    ASSERT_EQ_INT(ordo_mixture_global_batch(m), 16);
    ASSERT_EQ_STR(ordo_mixture_why(m), "");

    json_t *middle = step_view(ledger, run, m, 16);
    ASSERT(share_at(middle, "target_shares", 0) == 0.5);
    ASSERT(share_at(middle, "target_shares", 1) == 0.5);
    ASSERT(share_at(middle, "delivered_shares", 0) == 0.5);
    ASSERT_EQ_INT(json_integer_value(json_object_get(middle, "step")), 16);
    ASSERT(json_is_array(json_object_get(middle, "source_tokens")));
    json_decref(middle);
    for (int64_t k = 1; k <= 24; k++) {
        json_t *view = step_view(ledger, run, m, k);
        double web = share_at(view, "target_shares", 0);
        if (!near(web, web_target(k)) || !near(share_at(view, "target_shares", 1), 1 - web))
            test_fail(__FILE__, __LINE__, "step %lld: target %.10f, by hand %.10f", (long long)k,
                      web, web_target(k));
        ASSERT(near(share_at(view, "delivered_shares", 0), (double)web_samples(k) / 16));
        json_decref(view);
    }
    /* recorded without per-source tokens: no delivered share, a target */
    json_t *late = step_view(ledger, run, m, 27);
    ASSERT(json_is_null(json_object_get(late, "delivered_shares")));
    ASSERT(share_at(late, "target_shares", 0) == 0.25);
    json_decref(late);
    ordo_mixture_free(m);
    ordo_ledger_close(ledger);
}

/* Over the run: the target's mean and the delivered share over the steps
 * that have per-source tokens (1..24), and the worst step in samples: step
 * 17, two samples more than the rounded target (9 of 16 against 7.2). */
TEST(mixture_summary_gives_target_mean_delivered_and_worst_step)
{
    ordo_ledger *ledger = fixture_open("mix.db");
    int64_t run = put_run(ledger, ramp_recipe, "ramp");
    record_steps(ledger, run);
    ordo_mixture *m = open_mixture(ledger, "ramp");
    ordo_error err;
    ASSERT_OK(ordo_mixture_scan(ledger, m, run, 1, ORDO_STEP_MAX, &err), &err);
    double target = 0, web = 0;
    for (int64_t k = 1; k <= 24; k++) {
        target += web_target(k) / 24;
        web += (double)web_samples(k);
    }
    ordo_mixture_source s;
    ASSERT_OK(ordo_mixture_summary(m, 0, &s, &err), &err);
    ASSERT_EQ_STR(s.name, "web");
    ASSERT_EQ_INT(s.steps, 30);
    ASSERT_EQ_INT(s.measured_steps, 24);
    ASSERT(near(s.target_mean, target));
    ASSERT(near(s.delivered, web / (24 * 16)));
    ASSERT_EQ_INT(s.worst_step, 17);
    ASSERT(near(s.worst_deviation, 9 - 7.2));
    ASSERT_OK(ordo_mixture_summary(m, 1, &s, &err), &err);
    ASSERT_EQ_INT(s.worst_step, 17);
    ASSERT(near(s.worst_deviation, 7.2 - 9));
    ASSERT_STATUS(ordo_mixture_summary(m, 2, &s, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "source 2 does not exist (2 sources)");

    char *text = ordo_mixture_json(m);
    json_t *view = json_loads(text, 0, NULL);
    ordo_free(text);
    ASSERT_EQ_INT(json_integer_value(json_object_get(view, "global_batch")), 16);
    ASSERT_EQ_INT(json_integer_value(json_object_get(view, "steps")), 30);
    ASSERT_EQ_INT(json_integer_value(json_object_get(view, "measured_steps")), 24);
    ASSERT(json_is_null(json_object_get(view, "unavailable")));
    json_t *books = json_array_get(json_object_get(view, "by_source"), 1);
    ASSERT_EQ_STR(json_string_value(json_object_get(books, "name")), "books");
    ASSERT(near(json_number_value(json_object_get(books, "target_mean")), 1 - target));
    ASSERT(near(json_number_value(json_object_get(books, "worst_deviation_samples")), -1.8));
    ASSERT_EQ_INT(json_integer_value(json_object_get(books, "worst_step")), 17);
    json_decref(view);
    ordo_mixture_free(m);
    ordo_ledger_close(ledger);
}

/* Buckets of 10 steps: the mean of the ramp's targets in each (11..20:
 * 0.75 down to 0.30, mean 0.525), the delivered share of its tokens; a
 * bucket with none delivered has NAN. */
TEST(mixture_series_buckets_hold_target_means_and_delivered_shares)
{
    ordo_ledger *ledger = fixture_open("mix.db");
    int64_t run = put_run(ledger, ramp_recipe, "ramp");
    record_steps(ledger, run);
    ordo_mixture *m = open_mixture(ledger, "ramp");
    ordo_series_result r;
    ordo_error err;
    ASSERT_OK(ordo_run_series(ledger, run, 1, 30, 3, m, &r, &err), &err);
    ASSERT_EQ_INT(r.count, 3);
    ASSERT_EQ_INT(r.width, 10);
    ASSERT_EQ_INT(r.sources, 2);
    ASSERT(near(r.target_shares[0], 0.75));
    ASSERT(near(r.target_shares[2], 0.525));
    ASSERT(near(r.target_shares[3], 0.475));
    ASSERT(near(r.target_shares[4], 0.25));
    double web = 0;
    for (int64_t k = 11; k <= 20; k++)
        web += (double)web_samples(k);
    ASSERT(near(r.delivered_shares[2], web / 160));
    ASSERT(near(r.delivered_shares[4], (double)(4 * 4) / 64)); /* steps 21..24: 4 of 16 */
    ordo_series_result_free(&r);
    /* the steps scanned went into the summary too */
    ordo_mixture_source s;
    ASSERT_OK(ordo_mixture_summary(m, 0, &s, &err), &err);
    ASSERT_EQ_INT(s.steps, 30);
    ordo_mixture_free(m);

    /* without a mixture: no sources, no shares */
    ASSERT_OK(ordo_run_series(ledger, run, 1, 30, 3, NULL, &r, &err), &err);
    ASSERT_EQ_INT(r.sources, 0);
    ordo_series_result_free(&r);
    ordo_ledger_close(ledger);
}

/* Steps recorded without per-source tokens: delivered null, not an error;
 * the target mean is over every step. */
TEST(mixture_of_a_run_without_source_tokens_has_no_delivered_share)
{
    ordo_ledger *ledger = fixture_open("mix.db");
    int64_t run = put_run(ledger, ramp_recipe, "bare");
    unsigned char lanes[4 * ORDO_DIGEST_SIZE];
    for (int64_t k = 1; k <= 4; k++) {
        ordo_step s;
        fixture_step(&s, k, 4, lanes, 9);
        ordo_record_result result;
        ordo_error err;
        ASSERT_OK(ordo_steps_record(ledger, run, &s, 1, &result, &err), &err);
    }
    ordo_mixture *m = open_mixture(ledger, "bare");
    ordo_error err;
    ASSERT_OK(ordo_mixture_scan(ledger, m, run, 1, ORDO_STEP_MAX, &err), &err);
    ordo_mixture_source s;
    ASSERT_OK(ordo_mixture_summary(m, 0, &s, &err), &err);
    ASSERT_EQ_INT(s.steps, 4);
    ASSERT_EQ_INT(s.measured_steps, 0);
    ASSERT(s.target_mean == 0.75);
    ASSERT(isnan(s.delivered) && isnan(s.worst_deviation) && s.worst_step == 0);
    char *text = ordo_mixture_json(m);
    ASSERT_CONTAINS(text, "\"target_mean\":0.75,\"delivered\":null,"
                          "\"worst_deviation_samples\":null,\"worst_step\":null");
    ordo_free(text);
    json_t *view = step_view(ledger, run, m, 2);
    ASSERT(json_is_null(json_object_get(view, "delivered_shares")));
    ASSERT(share_at(view, "target_shares", 0) == 0.75);
    json_decref(view);
    ordo_mixture_free(m);
    ordo_ledger_close(ledger);
}

/* A stored recipe whose mixture cannot be read (a loader that is not
 * ordo, or a broken one) gives no targets and says why; the run's views
 * still render. */
TEST(mixture_of_a_recipe_without_one_says_why)
{
    static const struct {
        const char *recipe, *why;
    } cases[] = {
        {"{\"lanes\": 4, \"global_batch\": 8}", "'sources' must be an array of 1 to 1024"},
        {"{\"lanes\": 4, \"sources\": [{\"name\": \"a\", \"weight\": -1}]}",
         "source 'a': 'weight' must be a finite number >= 0"},
        {"{\"lanes\": 4, \"sources\": [{\"name\": \"a\", \"weight\": 0}]}",
         "the sources' weights must have a positive finite sum"},
        {"{\"lanes\": 4, \"sources\": [{\"name\": \"a\", \"weight\": 1}, {\"name\": \"a\", "
         "\"weight\": 1}]}",
         "source name 'a' is used twice"},
        {"{\"lanes\": 4, \"sources\": [{\"weight\": 1}]}", "sources[0] needs a non-empty 'name'"},
        {"{\"lanes\": 4, \"sources\": [7]}", "sources[0] must be an object"},
        {"{\"lanes\": 4, \"sources\": [{\"name\": \"a\"}], \"schedule\": [{\"step\": 2, "
         "\"weights\": {\"a\": 1}}]}",
         "schedule[0] is at step 2; the first entry must be at step 1"},
        {"{\"lanes\": 4, \"sources\": [{\"name\": \"a\"}], \"schedule\": [{\"step\": 1, "
         "\"weights\": {\"b\": 1}}]}",
         "schedule[0]: 'b' is not a source of the recipe"},
    };
    ordo_ledger *ledger = fixture_open("mix.db");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%zu", i);
        int64_t run = put_run(ledger, cases[i].recipe, name);
        unsigned char lanes[4 * ORDO_DIGEST_SIZE];
        int64_t tokens[1] = {64};
        ordo_step s;
        fixture_step(&s, 1, 4, lanes, 3);
        s.source_tokens = tokens;
        s.source_count = 1;
        ordo_record_result result;
        ordo_error err;
        ASSERT_OK(ordo_steps_record(ledger, run, &s, 1, &result, &err), &err);
        ordo_mixture *m = open_mixture(ledger, name);
        ASSERT_EQ_INT(ordo_mixture_sources(m), 0);
        ASSERT_CONTAINS(ordo_mixture_why(m), cases[i].why);
        ASSERT_OK(ordo_mixture_scan(ledger, m, run, 1, ORDO_STEP_MAX, &err), &err);
        char *text = ordo_mixture_json(m);
        ASSERT_CONTAINS(text, "\"by_source\":[],\"unavailable\":\"recipe: ");
        ordo_free(text);
        json_t *view = step_view(ledger, run, m, 1);
        ASSERT(json_is_null(json_object_get(view, "target_shares")));
        ASSERT(json_is_null(json_object_get(view, "delivered_shares")));
        json_decref(view);
        ordo_mixture_free(m);
    }
    ordo_error err;
    ordo_mixture *m = NULL;
    char unknown[ORDO_DIGEST_HEX_SIZE];
    memset(unknown, '0', ORDO_DIGEST_HEX_SIZE - 1);
    unknown[ORDO_DIGEST_HEX_SIZE - 1] = '\0';
    ASSERT_STATUS(ordo_mixture_open(ledger, unknown, &m, &err), ORDO_NOTFOUND, &err);
    ASSERT(m == NULL);
    ordo_ledger_close(ledger);
}
