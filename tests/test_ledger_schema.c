/* Migrations and schema/schema.sql; ledger identity and versions; released
 * migrations frozen; the settings of every connection. */
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "testing.h"

/* Every object of a database as "type|name|tbl_name|sql" lines, sorted,
 * followed by its user_version and application_id. */
static char *describe(sqlite3 *db)
{
    sqlite3_stmt *stmt = NULL;
    ASSERT(sqlite3_prepare_v2(db,
                              "SELECT group_concat(line, char(10)) FROM (SELECT type || '|' || "
                              "name || '|' || tbl_name || '|' || coalesce(sql, '') AS line "
                              "FROM sqlite_schema ORDER BY type, name) UNION ALL "
                              "SELECT 'user_version=' || (SELECT user_version FROM "
                              "pragma_user_version) || ' application_id=' || "
                              "(SELECT application_id FROM pragma_application_id)",
                              -1, &stmt, NULL) == SQLITE_OK);
    size_t size = 1;
    char *text = calloc(1, 1);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const char *part = (const char *)sqlite3_column_text(stmt, 0);
        size += strlen(part ? part : "") + 1;
        text = realloc(text, size);
        strcat(strcat(text, part ? part : ""), "\n");
    }
    sqlite3_finalize(stmt);
    return text;
}

TEST(migrations_produce_schema_sql)
{
    ordo_ledger *ledger = fixture_open("migrated.db");
    ASSERT_EQ_INT(ordo_ledger_schema_version(ledger), ordo_schema_version_latest());
    ordo_ledger_close(ledger);

    sqlite3 *migrated = NULL, *declared = NULL;
    ASSERT(sqlite3_open(test_path("migrated.db"), &migrated) == SQLITE_OK);
    ASSERT(sqlite3_open(":memory:", &declared) == SQLITE_OK);
    char *schema = test_read_file("schema/schema.sql", NULL);
    ASSERT(schema != NULL);
    char *message = NULL;
    if (sqlite3_exec(declared, schema, NULL, NULL, &message) != SQLITE_OK)
        test_fail(__FILE__, __LINE__, "schema/schema.sql: %s", message);
    char *a = describe(migrated), *b = describe(declared);
    ASSERT_EQ_STR(a, b);
    ASSERT_CONTAINS(a, "table|steps|steps|");
    free(a), free(b), free(schema);
    sqlite3_close(migrated);
    sqlite3_close(declared);
}

TEST(migrate_is_idempotent_and_reports_versions)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(test_path("l.db"), ORDO_OPEN_NO_MIGRATE, &ledger, &err), &err);
    ASSERT_EQ_INT(ordo_ledger_schema_version(ledger), 0);
    int from = -1, to = -1;
    ASSERT_OK(ordo_ledger_migrate(ledger, &from, &to, &err), &err);
    ASSERT_EQ_INT(from, 0);
    ASSERT_EQ_INT(to, ordo_schema_version_latest());
    ASSERT_OK(ordo_ledger_migrate(ledger, &from, &to, &err), &err);
    ASSERT_EQ_INT(from, to);
    ordo_ledger_close(ledger);
}

TEST(concurrent_first_opens_migrate_once)
{
    /* Four processes race to create the same ledger; each must succeed. */
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            ordo_ledger *ledger = NULL;
            ordo_error err;
            int ok = ordo_ledger_open(test_path("race.db"), 0, &ledger, &err) == ORDO_OK;
            if (!ok)
                fprintf(stderr, "  open: %s\n", err.message);
            ordo_ledger_close(ledger);
            _exit(ok ? 0 : 1);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        ASSERT(waitpid(pids[i], &status, 0) == pids[i]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ordo_ledger *ledger = fixture_open("race.db");
    ASSERT_EQ_INT(ordo_ledger_schema_version(ledger), ordo_schema_version_latest());
    ordo_ledger_close(ledger);
}

TEST(connection_settings)
{
    ordo_ledger *ledger = fixture_open("s.db");
    ordo_ledger_close(ledger);
    sqlite3 *db = NULL;
    ASSERT(sqlite3_open(test_path("s.db"), &db) == SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    ASSERT(sqlite3_prepare_v2(db,
                              "SELECT (SELECT journal_mode FROM pragma_journal_mode), "
                              "(SELECT page_size FROM pragma_page_size)",
                              -1, &stmt, NULL) == SQLITE_OK);
    ASSERT(sqlite3_step(stmt) == SQLITE_ROW);
    ASSERT_EQ_STR((const char *)sqlite3_column_text(stmt, 0), "wal");
    ASSERT_EQ_INT(sqlite3_column_int(stmt, 1), 16384);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
}

TEST(newer_schema_is_refused_naming_both_versions)
{
    ordo_ledger *ledger = fixture_open("new.db");
    ordo_ledger_close(ledger);
    fixture_sql(test_path("new.db"), "PRAGMA user_version = 99");
    size_t before_size = 0, after_size = 0;
    char *before = test_read_file(test_path("new.db"), &before_size);
    ordo_error err;
    ASSERT_STATUS(ordo_ledger_open(test_path("new.db"), 0, &ledger, &err), ORDO_VERSION, &err);
    ASSERT(ledger == NULL);
    ASSERT_CONTAINS(err.message, "schema version 99");
    char latest[64];
    snprintf(latest, sizeof latest, "this ordo's %d", ordo_schema_version_latest());
    ASSERT_CONTAINS(err.message, latest);
    /* Left untouched. */
    ASSERT_STATUS(ordo_ledger_open(test_path("new.db"), ORDO_OPEN_READONLY, &ledger, &err),
                  ORDO_VERSION, &err);
    char *after = test_read_file(test_path("new.db"), &after_size);
    ASSERT_EQ_INT(after_size, before_size);
    ASSERT(memcmp(before, after, before_size) == 0);
    ASSERT_EQ_INT(fixture_int(test_path("new.db"), "PRAGMA user_version"), 99);
    free(before);
    free(after);
}

TEST(older_schema_readonly_asks_for_migrate)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(test_path("old.db"), ORDO_OPEN_NO_MIGRATE, &ledger, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_STATUS(ordo_ledger_open(test_path("old.db"), ORDO_OPEN_READONLY, &ledger, &err),
                  ORDO_VERSION, &err);
    ASSERT_CONTAINS(err.message, "ordo migrate");
}

TEST(foreign_sqlite_database_is_refused)
{
    fixture_sql(test_path("other.db"), "CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_ledger_open(test_path("other.db"), 0, &ledger, &err), ORDO_NOTLEDGER, &err);
    ASSERT_CONTAINS(err.message, "not an ordo ledger");
    /* Nothing was added to it. */
    ASSERT_EQ_INT(fixture_int(test_path("other.db"), "SELECT count(*) FROM sqlite_schema"), 1);
    ASSERT_EQ_INT(fixture_int(test_path("other.db"), "PRAGMA user_version"), 0);
}

/* Released migrations never change: a ledger made by an earlier ordo has
 * already applied them under their version number. A new schema change is
 * a new migration file. */
static const struct {
    const char *file, *sha256;
} released[] = {
    {"migrations/0001_initial.sql",
     "945774845675dd0d4dcad79c80d88f4151e5a1e4a32205a4cfdf8bfb44a6a155"},
    {"migrations/0002_lane_reports.sql",
     "97e2fb59f79f2b4869e7eb779ea2436e1e4b8f523af2b17741d9516c20f94095"},
    {"migrations/0003_step_blocks.sql",
     "1f3ef37f919821a02b0db6e132f3aa9d1055785629a0451d5e1714618b80fb00"},
    {"migrations/0004_chunk_digests.sql",
     "31a9d54794f676853fb7bd552555e096dddf81334216ad6d24c17ce9f3b4e1b1"},
    {"migrations/0005_shard_files_chunk_events.sql",
     "fda4233c40d6a2dfa6b83c9daa1e09c2b974a4a40a341d38b7d96900c6614478"},
    {"migrations/0006_shard_filters_locators.sql",
     "88fb10468a86eda2c3cc51e35c982a822d9246591dd622b86df397d09762c254"},
    {"migrations/0007_epoch_states.sql",
     "3b62d69648db505de5265b9a3b9666ec690a7258da156ac02a61bd04da193054"},
    {"migrations/0008_lane_state_count.sql",
     "111bbfb5a577ce043f370da5e1fa355514a16a854ecd3ac64c2633cff445644f"},
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
            test_fail(__FILE__, __LINE__,
                      "%s was edited after release (SHA-256 %s); add a new "
                      "migration instead",
                      released[i].file, hex);
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
