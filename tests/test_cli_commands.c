/* The ordo binary: commands, --help, exit codes, JSON output. */
#include <jansson.h>
#include <unistd.h>

#include "fixtures.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

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
    ordo_segment_spec seg = {.world_size = 8, .start_step = 51, .lanes = 32, .lane_ranks = ranks,
                             .resumed_from = 50};
    int64_t id;
    ASSERT_OK(ordo_segment_add(ledger, resumed, &seg, &id, &err), &err);
    ASSERT_OK(ordo_steps_record(ledger, resumed, steps + 50, 50, NULL, &err), &err);
    ordo_ledger_close(ledger);
    return test_path("cli.db");
}

TEST(cli_every_command_answers_help)
{
    const char *commands[] = {"migrate", "runs", "show"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        cli_result r = run_ordo(NULL, ARGS(commands[i], "--help"));
        ASSERT_EQ_INT(r.code, 0);
        ASSERT_CONTAINS(r.out, "usage: ordo ");
        ASSERT_CONTAINS(r.out, commands[i]);
        ASSERT_CONTAINS(r.out, "--db PATH");
        cli_result_free(&r);
    }
    cli_result r = run_ordo(NULL, ARGS("--help"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "migrate");
    cli_result_free(&r);
}

TEST(cli_usage_errors_exit_2)
{
    cli_result r = run_ordo(NULL, ARGS("frobnicate"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "unknown command 'frobnicate'");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("runs", "--bogus"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "'--bogus'");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("show"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "which run");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("show", "a", "b"));
    ASSERT_EQ_INT(r.code, 2);
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("show", "a", "--steps", "9:3"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "--steps '9:3'");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("migrate", "--db"));
    ASSERT_EQ_INT(r.code, 2);
    cli_result_free(&r);
    r = run_ordo(NULL, (const char *const[]){NULL});
    ASSERT_EQ_INT(r.code, 2);
    cli_result_free(&r);
}

TEST(cli_migrate_creates_and_reports)
{
    const char *db = test_path("m.db");
    cli_result r = run_ordo(NULL, ARGS("migrate", "--db", db));
    ASSERT_EQ_INT(r.code, 0);
    char expected[64];
    snprintf(expected, sizeof expected, "schema version 0 -> %d", ordo_schema_version_latest());
    ASSERT_CONTAINS(r.out, expected);
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("migrate", "--db", db));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "up to date");
    cli_result_free(&r);
    fixture_sql(db, "PRAGMA user_version = 42");
    r = run_ordo(NULL, ARGS("migrate", "--db", db));
    ASSERT_EQ_INT(r.code, 1);
    snprintf(expected, sizeof expected, "schema version 42, newer than this ordo's %d",
             ordo_schema_version_latest());
    ASSERT_CONTAINS(r.err, expected);
    cli_result_free(&r);
}

TEST(cli_db_defaults_to_env_then_ordo_db)
{
    const char *db = filled_ledger();
    cli_result r = run_ordo(db, ARGS("runs"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "base");
    cli_result_free(&r);
    /* Without --db or $ORDO_DB: ./ordo.db, here absent, and not created. */
    char cwd[4096];
    ASSERT(getcwd(cwd, sizeof cwd) != NULL);
    ASSERT(chdir(test_path("")) == 0);
    r = run_ordo(NULL, ARGS("runs"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "ledger './ordo.db' does not exist");
    ASSERT(access("ordo.db", F_OK) != 0);
    cli_result_free(&r);
    ASSERT(chdir(cwd) == 0);
}

TEST(cli_runs_table_and_json)
{
    const char *db = filled_ledger();
    cli_result r = run_ordo(NULL, ARGS("runs", "--db", db));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "RUN");
    ASSERT_CONTAINS(r.out, "resumed");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("runs", "--db", db, "--json"));
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
    json_decref(runs);
    cli_result_free(&r);
}

TEST(cli_show_text_and_json)
{
    const char *db = filled_ledger();
    cli_result r = run_ordo(NULL, ARGS("show", "resumed", "--db", db, "--steps", "50:51"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "segments (2)");
    ASSERT_CONTAINS(r.out, "51-100 (open)");
    ASSERT_CONTAINS(r.out, "resume");
    ASSERT_CONTAINS(r.out, "step 50");
    ASSERT_CONTAINS(r.out, "tokens 1000");
    cli_result_free(&r);

    r = run_ordo(NULL, ARGS("show", "resumed", "--db", db, "--json", "--steps", "51"));
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

    r = run_ordo(NULL, ARGS("show", "nobody", "--db", db));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "run 'nobody' is not in the ledger");
    cli_result_free(&r);
}

TEST(cli_refuses_bad_ledgers)
{
    test_write_file(test_path("junk.db"), "this is not sqlite at all, not even close........"
                                          "................................................",
                    98);
    cli_result r = run_ordo(NULL, ARGS("runs", "--db", test_path("junk.db")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "not an SQLite database");
    cli_result_free(&r);
    r = run_ordo(NULL, ARGS("migrate", "--db", test_path("nodir/x.db")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "nodir/x.db");
    cli_result_free(&r);
}

TEST(cli_db_option_beats_environment)
{
    ordo_ledger *ledger = fixture_open("a.db");
    fixture_run(ledger, "in-a", 4, 2);
    ordo_ledger_close(ledger);
    ledger = fixture_open("b.db");
    fixture_run(ledger, "in-b", 4, 2);
    ordo_ledger_close(ledger);
    cli_result r = run_ordo(test_path("a.db"), A("runs", "--db", test_path("b.db")));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "in-b");
    ASSERT(strstr(r.out, "in-a") == NULL);
    cli_result_free(&r);
    r = run_ordo(NULL, A("runs", "-xh"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "'-x'");
    cli_result_free(&r);
}
