/* Ledger files that are not what they should be: garbage, truncated,
 * unwritable, not regular files, read-only, damaged rows. */
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

TEST(garbage_file_is_not_a_ledger_and_is_left_alone)
{
    char garbage[8192];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (char)(i * 131 + 7);
    test_write_file(test_path("g.db"), garbage, sizeof garbage);
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_ledger_open(test_path("g.db"), 0, &ledger, &err), ORDO_NOTLEDGER, &err);
    ASSERT_CONTAINS(err.message, "g.db");
    ASSERT_CONTAINS(err.message, "not an SQLite database");
    size_t size = 0;
    char *after = test_read_file(test_path("g.db"), &size);
    ASSERT_EQ_INT(size, sizeof garbage);
    ASSERT(memcmp(after, garbage, size) == 0);
    free(after);
}

TEST(truncated_ledger_fails_cleanly)
{
    ordo_ledger *ledger = fixture_open("t.db");
    int64_t run = fixture_run(ledger, "r", 32, 4);
    ordo_step steps[200];
    static unsigned char lanes[200][32 * ORDO_DIGEST_SIZE];
    for (int i = 0; i < 200; i++)
        fixture_step(&steps[i], i + 1, 32, lanes[i], 1);
    ordo_error err;
    ASSERT_OK(ordo_steps_record(ledger, run, steps, 200, NULL, &err), &err);
    ordo_ledger_close(ledger); /* the last close checkpoints the WAL */
    struct stat st;
    ASSERT(stat(test_path("t.db"), &st) == 0);
    ASSERT(st.st_size > 100000);
    ASSERT(truncate(test_path("t.db"), st.st_size / 3) == 0);
    /* Opening may succeed (the header is intact); reading must then fail
     * with a clear error, never crash or return half the data as whole. */
    ordo_status status = ordo_ledger_open(test_path("t.db"), ORDO_OPEN_READONLY, &ledger, &err);
    if (status == ORDO_OK) {
        ordo_run_list *runs = NULL;
        status = ordo_runs_list(ledger, &runs, &err);
        ordo_run_list_free(runs);
        ordo_ledger_close(ledger);
    }
    ASSERT_EQ_INT(status, ORDO_NOTLEDGER);
    ASSERT_CONTAINS(err.message, "t.db");
    ASSERT_CONTAINS(err.message, "damaged or truncated");
}

TEST(unwritable_or_missing_paths)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_ledger_open(test_path("no/such/dir/l.db"), 0, &ledger, &err), ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "no/such/dir/l.db");
    test_write_file(test_path("file"), "x", 1);
    ASSERT_STATUS(ordo_ledger_open(test_path("file/l.db"), 0, &ledger, &err), ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "file/l.db");
    ASSERT_STATUS(ordo_ledger_open(test_path(""), 0, &ledger, &err), ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "is a directory");
    ASSERT_STATUS(ordo_ledger_open("", 0, &ledger, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(ordo_ledger_open(test_path("absent.db"), ORDO_OPEN_READONLY, &ledger, &err),
                  ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, "does not exist");
    ASSERT(access(test_path("absent.db"), F_OK) != 0); /* not created */
    ASSERT(ledger == NULL);
}

TEST(readonly_ledger_refuses_writes)
{
    ordo_ledger *ledger = fixture_open("l.db");
    int64_t run = fixture_run(ledger, "r", 4, 4);
    ordo_ledger_close(ledger);
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(test_path("l.db"), ORDO_OPEN_READONLY, &ledger, &err), &err);
    unsigned char lanes[4 * ORDO_DIGEST_SIZE];
    ordo_step step;
    fixture_step(&step, 1, 4, lanes, 1);
    ASSERT_STATUS(ordo_steps_record(ledger, run, &step, 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "read-only");
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_STATUS(ordo_recipe_put(ledger, "{}", 2, id, &err), ORDO_INVALID, &err);
    ordo_ledger_close(ledger);
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
