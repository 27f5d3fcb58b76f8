/* Edges found in review: file kinds and permissions, run id ranges,
 * damaged rows, frozen migrations, settings on every connection. */
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Released migrations never change: a ledger made by an earlier ordo has
 * already applied them under their version number. A new schema change is
 * a new migration file. */
static const struct {
    const char *file, *sha256;
} released[] = {
    {"migrations/0001_initial.sql", "945774845675dd0d4dcad79c80d88f4151e5a1e4a32205a4cfdf8bfb44a6a155"},
    {"migrations/0002_lane_reports.sql",
     "97e2fb59f79f2b4869e7eb779ea2436e1e4b8f523af2b17741d9516c20f94095"},
    {"migrations/0003_step_blocks.sql",
     "1f3ef37f919821a02b0db6e132f3aa9d1055785629a0451d5e1714618b80fb00"},
    {"migrations/0004_chunk_digests.sql",
     "31a9d54794f676853fb7bd552555e096dddf81334216ad6d24c17ce9f3b4e1b1"},
    {"migrations/0005_shard_files_chunk_events.sql",
     "fda4233c40d6a2dfa6b83c9daa1e09c2b974a4a40a341d38b7d96900c6614478"},
};

TEST(released_migrations_are_frozen)
{
    for (size_t i = 0; i < sizeof released / sizeof released[0]; i++) {
        size_t size = 0;
        char *text = test_read_file(released[i].file, &size);
        ASSERT(text != NULL);
        unsigned char digest[ORDO_DIGEST_SIZE];
        char hex[ORDO_DIGEST_HEX_SIZE];
        ordo_sha256(text, size, digest);
        ordo_digest_to_hex(digest, hex);
        free(text);
        if (strcmp(hex, released[i].sha256) != 0)
            test_fail(__FILE__, __LINE__, "%s was edited after release (SHA-256 %s); add a new "
                                          "migration instead", released[i].file, hex);
    }
    ASSERT_EQ_INT(ordo_schema_version_latest(), (int)(sizeof released / sizeof released[0]));
}

static long long pragma(ordo_ledger *ledger, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    ASSERT(sqlite3_prepare_v2(ledger->db, sql, -1, &stmt, NULL) == SQLITE_OK);
    ASSERT(sqlite3_step(stmt) == SQLITE_ROW);
    long long value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
}

TEST(every_connection_has_foreign_keys_and_busy_timeout)
{
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_ledger_close(ledger);
    unsigned modes[] = {0, ORDO_OPEN_READONLY, ORDO_OPEN_NO_CREATE};
    for (size_t i = 0; i < 3; i++) {
        ordo_error err;
        ASSERT_OK(ordo_ledger_open(test_path("l.db"), modes[i], &ledger, &err), &err);
        ASSERT_EQ_INT(pragma(ledger, "PRAGMA foreign_keys"), 1);
        ASSERT(pragma(ledger, "PRAGMA busy_timeout") >= 1000);
        ordo_ledger_close(ledger);
    }
}

TEST(ledger_path_kinds_are_checked)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT(mkfifo(test_path("fifo"), 0600) == 0);
    ASSERT_STATUS(ordo_ledger_open(test_path("fifo"), 0, &ledger, &err), ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "not a regular file");
    ASSERT_STATUS(ordo_ledger_open("/dev/null", ORDO_OPEN_READONLY, &ledger, &err), ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "not a regular file");
}

TEST(read_only_ledgers_are_readable_and_refuse_writes)
{
    ordo_ledger *ledger = fixture_open("l.db");
    fixture_run(ledger, "r", 4, 2);
    ordo_ledger_close(ledger);
    /* A folder the reader cannot write: listing still works. */
    ASSERT(chmod(test_path(""), 0755) == 0); /* reachable for the unprivileged user */
    ASSERT(mkdir(test_path("ro"), 0755) == 0);
    size_t size = 0;
    char *bytes = test_read_file(test_path("l.db"), &size);
    test_write_file(test_path("ro/l.db"), bytes, size);
    free(bytes);
    ASSERT(chmod(test_path("ro/l.db"), 0444) == 0);
    ASSERT(chmod(test_path("ro"), 0555) == 0);
    cli_result r = run_ordo_unprivileged(A("runs", "--db", test_path("ro/l.db")));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "r ");
    cli_result_free(&r);
    r = run_ordo_unprivileged(A("migrate", "--db", test_path("ro/l.db")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "cannot be written");
    cli_result_free(&r);
    ASSERT(chmod(test_path("ro"), 0755) == 0);
}

TEST(run_ids_out_of_range_are_not_found)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 2);
    unsigned char lanes[4 * ORDO_DIGEST_SIZE];
    ordo_step step;
    fixture_step(&step, 1, 4, lanes, 1);
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, &step, 1, NULL, &err), &err);
    int64_t bogus[] = {0, -1, run + 1, ((int64_t)1 << 24) + run, INT64_MAX};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        int calls = 0;
        ASSERT_STATUS(ordo_steps_scan(ledger, bogus[i], 1, ORDO_STEP_MAX, NULL, &calls, &err),
                      ORDO_NOTFOUND, &err);
        ASSERT_STATUS(ordo_steps_record(ledger, bogus[i], &step, 1, NULL, &err), ORDO_NOTFOUND,
                      &err);
        ASSERT_STATUS(ordo_event_record(ledger, bogus[i], 1, "skip", NULL, &err), ORDO_NOTFOUND,
                      &err);
    }
    ordo_ledger_close(ledger);
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

TEST(damaged_rows_give_errors_not_crashes)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 2);
    unsigned char lanes[4 * ORDO_DIGEST_SIZE], state[8] = {1};
    ordo_step step;
    fixture_step(&step, 1, 4, lanes, 1);
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, &step, 1, NULL, &err), &err);
    ASSERT_OK(ordo_checkpoint_record(ledger, run, 1, 4, state, sizeof state, &err), &err);
    ordo_ledger_close(ledger);
    fixture_sql(test_path("l.db"), "UPDATE steps SET batch_digest = x''; "
                                   "UPDATE checkpoints SET lane_state = x''");
    ledger = fixture_open("l.db");
    ASSERT_STATUS(ordo_steps_record(ledger, run, &step, 1, NULL, &err), ORDO_NOTLEDGER, &err);
    ASSERT_CONTAINS(err.message, "step 1 of run 1 is damaged");
    ordo_checkpoint c;
    ASSERT_OK(ordo_checkpoint_get(ledger, run, 1, &c, &err), &err);
    ASSERT_EQ_INT(c.state_size, 0);
    ordo_checkpoint_free(&c);
    ordo_ledger_close(ledger);
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

TEST(long_recipe_names_stay_valid_utf8)
{
    ordo_ledger *ledger = fixture_open("l.db");
    char recipe[600];
    int n = snprintf(recipe, sizeof recipe, "{\"name\": \"");
    for (int i = 0; i < 200; i++)
        n += snprintf(recipe + n, sizeof recipe - (size_t)n, "\xc3\xa9"); /* 400 bytes of é */
    snprintf(recipe + n, sizeof recipe - (size_t)n, "\"}");
    char id[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, recipe, strlen(recipe), id, &err), &err);
    ordo_run_spec spec = {.name = "r", .recipe_id = id, .lanes = 4};
    int64_t run;
    ASSERT_OK(ordo_run_create(ledger, &spec, &run, &err), &err);
    ordo_ledger_close(ledger);
    cli_result r = run_ordo(NULL, A("runs", "--db", test_path("l.db"), "--json"));
    ASSERT_EQ_INT(r.code, 0);
    ASSERT_CONTAINS(r.out, "\"name\": \"r\"");
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
