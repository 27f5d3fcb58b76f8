/* The elastic loader end to end through the ordo binary: world sizes,
 * workers, resumes, rank binding, mixing, validation, checkpoints. */
#include <jansson.h>
#include <sys/stat.h>

#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Copies: test_path() hands out a small ring of buffers. */
static char db[1024];
static char recipe[1024];

/* Two sources whose documents differ in length by 10x, sharded to zstd. */
static void standard_setup(int lanes, double weight_short)
{
    corpus_jsonl("raw-short", "short", 4, 300, 20, 80, 1);
    corpus_jsonl("raw-long", "long", 2, 150, 200, 800, 2);
    free(ordo_ok(
        A("shard", "--out", test_path("short"), "--docs-per-frame", "16", test_path("raw-short")),
        0));
    free(ordo_ok(
        A("shard", "--out", test_path("long"), "--docs-per-frame", "8", test_path("raw-long")), 0));
    char sources[512];
    snprintf(sources, sizeof sources,
             "[{\"name\": \"short\", \"paths\": [\"short/*.jsonl.zst\"], \"weight\": %g},"
             " {\"name\": \"long\", \"paths\": [\"long/*.jsonl.zst\"], \"weight\": %g}]",
             weight_short, 1.0 - weight_short);
    snprintf(recipe, sizeof recipe, "%s",
             corpus_recipe("recipe.json", lanes, 64, 64, 3, 8, sources));
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
}

static void run(const char *name, const char *world, const char *steps, const char *extra)
{
    if (extra)
        free(ordo_ok(A("run", recipe, "--db", db, "--name", name, "--world-size", world, "--steps",
                       steps, "--quiet", "--checkpoint-every", "1", "--workers", extra),
                     0));
    else
        free(ordo_ok(A("run", recipe, "--db", db, "--name", name, "--world-size", world, "--steps",
                       steps, "--quiet", "--checkpoint-every", "1"),
                     0));
}

/* compare --json of two runs; asserts the exit code. */
static json_t *compare(const char *a, const char *b, int code)
{
    char *out = ordo_ok(A("compare", a, b, "--db", db, "--json"), code);
    json_t *result = json_loads(out, 0, NULL);
    free(out);
    ASSERT(result != NULL);
    return result;
}

static long long field(json_t *object, const char *key)
{
    json_t *v = json_object_get(object, key);
    return json_is_null(v) ? -1 : json_integer_value(v);
}

static void assert_same(const char *a, const char *b, long long steps)
{
    json_t *r = compare(a, b, 0);
    ASSERT_EQ_INT(field(r, "steps_compared"), steps);
    ASSERT_EQ_INT(field(r, "matched"), steps);
    ASSERT_EQ_INT(field(r, "diverged"), 0);
    ASSERT_EQ_INT(field(r, "first_divergent_step"), -1);
    json_decref(r);
}

TEST(loader_world_sizes_give_identical_batches)
{
    standard_setup(32, 0.5);
    const char *worlds[] = {"1", "2", "4", "8", "16", "32"};
    char name[32];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "w%s", worlds[i]);
        run(name, worlds[i], "200", NULL);
        if (i > 0)
            assert_same("w1", name, 200);
    }
}

TEST(loader_workers_change_nothing)
{
    standard_setup(32, 0.5);
    run("one", "4", "120", "read=1,tokenize=1");
    run("two", "4", "120", "read=2,tokenize=2");
    run("four", "2", "120", "read=4,tokenize=4");
    assert_same("one", "two", 120);
    assert_same("one", "four", 120);
}

/* Steps at the start, middle and end of a flush epoch (flush_every 3):
 * the first step of epoch 10, the second of epoch 16, the last of 19. A
 * checkpoint after each holds the packers at that epoch's start, so the
 * resume regenerates 1, 2 and 3 steps. */
static void pick_resume_steps(int64_t picks[3])
{
    picks[0] = 31;
    picks[1] = 50;
    picks[2] = 60;
}

TEST(loader_resume_at_other_world_sizes_matches)
{
    standard_setup(32, 0.5);
    run("base", "4", "150", NULL);
    int64_t picks[3];
    pick_resume_steps(picks);
    const char *worlds[] = {"8", "2", "32"};
    for (int i = 0; i < 3; i++) {
        char from[24], name[32];
        snprintf(from, sizeof from, "%lld", (long long)picks[i]);
        snprintf(name, sizeof name, "resumed-%d", i);
        free(ordo_ok(A("resume", "base", "--db", db, "--from-step", from, "--as", name,
                       "--world-size", worlds[i], "--steps", "150", "--quiet", "--checkpoint-every",
                       "7"),
                     0));
        assert_same("base", name, 150 - picks[i]);
    }
    /* Two resumes in a row: 4 -> 16 -> 1 on the same run. */
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "twice", "--world-size", "4", "--steps",
                   "40", "--quiet", "--checkpoint-every", "20"),
                 0));
    free(ordo_ok(A("resume", "twice", "--db", db, "--world-size", "16", "--steps", "95", "--quiet",
                   "--checkpoint-every", "45"),
                 0));
    free(ordo_ok(A("resume", "twice", "--db", db, "--world-size", "1", "--steps", "150", "--quiet"),
                 0));
    assert_same("base", "twice", 150);
    char *shown = ordo_ok(A("show", "twice", "--db", db, "--json"), 0);
    json_t *view = json_loads(shown, 0, NULL);
    free(shown);
    ASSERT_EQ_INT(json_array_size(json_object_get(view, "segments")), 3);
    json_decref(view);
}

TEST(loader_rank_binding_diverges_after_resume)
{
    standard_setup(32, 0.5);
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "rank", "--world-size", "4", "--steps",
                   "100", "--quiet", "--lane-binding", "rank", "--checkpoint-every", "50"),
                 0));
    free(ordo_ok(A("resume", "rank", "--db", db, "--from-step", "50", "--as", "rank-w8",
                   "--world-size", "8", "--steps", "100", "--quiet"),
                 0));
    json_t *r = compare("rank", "rank-w8", 3);
    ASSERT_EQ_INT(field(r, "steps_compared"), 50);
    ASSERT_EQ_INT(field(r, "first_divergent_step"), 51);
    ASSERT_EQ_INT(field(r, "diverged"), 50);
    json_decref(r);
    /* The same resume with logical lanes agrees. */
    run("logical", "4", "100", NULL);
    free(ordo_ok(A("resume", "logical", "--db", db, "--from-step", "50", "--as", "logical-w8",
                   "--world-size", "8", "--steps", "100", "--quiet"),
                 0));
    assert_same("logical", "logical-w8", 50);
    char *text = ordo_ok(A("compare", "rank", "rank-w8", "--db", db), 3);
    ASSERT_CONTAINS(text, "first divergent step 51");
    free(text);
}

typedef struct {
    int64_t tokens[2];
    int64_t steps;
} share_sum;

static int add_shares(const ordo_step *s, void *context)
{
    share_sum *sum = context;
    ASSERT_EQ_INT(s->source_count, 2);
    sum->tokens[0] += s->source_tokens[0];
    sum->tokens[1] += s->source_tokens[1];
    sum->steps++;
    return 0;
}

TEST(loader_token_ratio_mixing_meets_weights)
{
    standard_setup(8, 0.7);
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "mix", "--world-size", "2", "--steps",
                   "400", "--quiet"),
                 0));
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    ordo_run_info info;
    ASSERT_OK(ordo_run_get(ledger, "mix", &info, &err), &err);
    share_sum sum = {{0, 0}, 0};
    ASSERT_OK(ordo_steps_scan(ledger, info.id, 1, 400, add_shares, &sum, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_INT(sum.steps, 400);
    double share = (double)sum.tokens[0] / (double)(sum.tokens[0] + sum.tokens[1]);
    /* Documented tolerance: within 0.02 of the weight over 400 steps. */
    if (share < 0.68 || share > 0.72)
        test_fail(__FILE__, __LINE__, "short source share %.4f, weight 0.70", share);
}

TEST(loader_validation_names_the_numbers)
{
    standard_setup(32, 0.5);
    cli_result r = run_ordo(
        NULL, A("run", recipe, "--db", db, "--name", "x", "--world-size", "12", "--steps", "5"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "lanes (32) must be divisible by world size (12)");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM runs"), 0);
    r = run_ordo(NULL, A("run", recipe, "--db", db, "--name", "x", "--world-size", "3", "--steps",
                         "5", "--lane-binding", "rank"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "global_batch (64) must be divisible by world size (3)");
    cli_result_free(&r);
    const char *bad = corpus_recipe("bad.json", 32, 100, 64, 3, 0,
                                    "[{\"name\": \"s\", \"paths\": [\"short/*\"], \"weight\": 1}]");
    r = run_ordo(NULL, A("recipe", "check", bad));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "global_batch (100) must be divisible by lanes (32)");
    cli_result_free(&r);
    struct {
        const char *sources, *needle;
    } cases[] = {
        {"[{\"name\": \"s\", \"paths\": [\"short/*\"], \"weight\": 1, \"wieght\": 2}]",
         "unknown key 'wieght' in sources[0]"},
        {"[{\"name\": \"s\", \"paths\": [\"short/*\"], \"weight\": 0}]",
         "'weight' must be a positive finite number"},
        {"[{\"name\": \"s\", \"paths\": [\"short/*\"], \"weight\": 1},"
         " {\"name\": \"s\", \"paths\": [\"long/*\"], \"weight\": 1}]",
         "source name 's' is used twice"},
        {"[{\"name\": \"\", \"paths\": [\"short/*\"], \"weight\": 1}]", "non-empty 'name'"},
        {"[{\"name\": \"s\", \"paths\": [\"nothing/*.jsonl\"], \"weight\": 1}]",
         "path 'nothing/*.jsonl' matches no file"},
        {"[]", "'sources' must be a non-empty array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = corpus_recipe("case.json", 32, 64, 64, 3, 0, cases[i].sources);
        r = run_ordo(NULL, A("recipe", "check", path));
        ASSERT_EQ_INT(r.code, 1);
        ASSERT_CONTAINS(r.err, cases[i].needle);
        cli_result_free(&r);
    }
    const char *tiny =
        corpus_recipe("tiny.json", 32, 64, 1, 3, 0,
                      "[{\"name\": \"s\", \"paths\": [\"short/*\"], \"weight\": 1}]");
    r = run_ordo(NULL, A("recipe", "check", tiny));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "'seq_len' (1) must be between 2");
    cli_result_free(&r);
    char *ok = ordo_ok(A("recipe", "check", recipe), 0);
    ASSERT_CONTAINS(ok, "recipe ");
    free(ok);
}

TEST(loader_changed_shard_refuses_resume)
{
    standard_setup(32, 0.5);
    run("base", "4", "30", NULL);
    const char *shard = test_path("long/shard-00000.jsonl.zst");
    size_t size = 0;
    char *data = test_read_file(shard, &size);
    ASSERT(data && size > 100);
    data[size / 2] ^= 0x40;
    test_write_file(shard, data, size);
    free(data);
    cli_result r =
        run_ordo(NULL, A("resume", "base", "--db", db, "--world-size", "8", "--steps", "60"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "long/shard-00000.jsonl.zst");
    ASSERT_CONTAINS(r.err, "changed since it was recorded");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments"), 1);
}

TEST(loader_checkpoints_are_small)
{
    standard_setup(32, 0.5);
    run("base", "8", "60", NULL);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM checkpoints"), 60);
    /* A lane record is its number, flush epoch, samples delivered and per
     * source (2 here) chunks taken and estimated tokens: 7 varints, at most
     * 2 + 2 + 2 + 2 * (3 + 4) = 20 bytes for a run this size; the header is
     * shared by all 32 lanes. The target is 64. */
    long long worst = fixture_int(db, "SELECT max((length(lane_state) + lanes - 1) / lanes) "
                                      "FROM checkpoints");
    ASSERT(worst >= 7);
    ASSERT(worst <= 20);
    char *shown = ordo_ok(A("show", "base", "--db", db), 0);
    ASSERT_CONTAINS(shown, "per lane");
    free(shown);
}
