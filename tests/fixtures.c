/* Shared set-up for the ledger tests. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixtures.h"
#include "testing.h"

const char fixture_recipe[] =
    "{\"name\": \"fixture\", \"seed\": 7, \"seq_len\": 8, \"global_batch\": 32, \"lanes\": 32,"
    " \"sources\": [{\"name\": \"web\", \"weight\": 1.0}]}";

ordo_ledger *fixture_open(const char *name)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(test_path(name), 0, &ledger, &err), &err);
    return ledger;
}

int64_t fixture_run(ordo_ledger *ledger, const char *name, int lanes, int world)
{
    ordo_error err;
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ordo_run_spec spec = {.name = name, .recipe_id = id, .lanes = lanes};
    int64_t run = 0, segment = 0;
    ASSERT_OK(ordo_run_create(ledger, &spec, &run, &err), &err);
    int *ranks = malloc(sizeof *ranks * (size_t)lanes);
    ASSERT(ranks != NULL);
    for (int lane = 0; lane < lanes; lane++)
        ranks[lane] = lane % world;
    ordo_segment_spec seg = {
        .world_size = world, .start_step = 1, .lanes = lanes, .lane_ranks = ranks};
    ASSERT_OK(ordo_segment_add(ledger, run, &seg, &segment, &err), &err);
    free(ranks);
    return run;
}

void fixture_step(ordo_step *step, int64_t number, int lanes, unsigned char *lanes_buffer,
                  unsigned seed)
{
    ordo_step_init(step, number);
    for (int lane = 0; lane < lanes; lane++) {
        char text[64];
        int n = snprintf(text, sizeof text, "%u/%lld/%d", seed, (long long)number, lane);
        ordo_sha256(text, (size_t)n, lanes_buffer + (size_t)lane * ORDO_DIGEST_SIZE);
    }
    step->lane_digests = lanes_buffer;
    step->lane_count = lanes;
    ordo_batch_digest(lanes_buffer, lanes, step->batch_digest);
}

long long fixture_count(const char *db_path, const char *table, int64_t run_id)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id = %lld", table,
             (long long)run_id);
    return fixture_int(db_path, sql);
}

long long fixture_int(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    ASSERT(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
        test_fail(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(db));
    ASSERT(sqlite3_step(stmt) == SQLITE_ROW);
    long long count = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return count;
}

void fixture_sql(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    ASSERT(sqlite3_open(db_path, &db) == SQLITE_OK);
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK)
        test_fail(__FILE__, __LINE__, "%s: %s", sql, message ? message : "?");
    sqlite3_close(db);
}

/* The id of run `name` (which must be in the ledger). */
int64_t fixture_run_id(ordo_ledger *ledger, const char *name)
{
    ordo_run_info info;
    ordo_error err;
    ASSERT_OK(ordo_run_get(ledger, name, &info, &err), &err);
    return info.id;
}

/* Adds 1 to a lane's first packer offset in a recorded checkpoint. */
char *fixture_text(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    ASSERT(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
        test_fail(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(stmt) != SQLITE_ROW)
        test_fail(__FILE__, __LINE__, "%s: no row", sql);
    const char *text = (const char *)sqlite3_column_text(stmt, 0);
    char *copy = strdup(text ? text : "");
    ASSERT(copy != NULL);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return copy;
}

void fixture_tamper_state(const char *db_path, const char *table, int64_t run_id, int64_t step,
                          int lane)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT hex(lane_state) FROM %s WHERE run_id = %lld AND step = %lld",
             table, (long long)run_id, (long long)step);
    char *hex = fixture_text(db_path, sql);
    size_t size = strlen(hex) / 2;
    unsigned char *state = malloc(size ? size : 1);
    ASSERT(state != NULL && size > 0);
    for (size_t i = 0; i < size; i++)
        sscanf(hex + 2 * i, "%2hhx", &state[i]);
    free(hex);
    ordo__state st;
    ordo_error err;
    ASSERT_OK(ordo__state_decode(state, size, &st, &err), &err);
    free(state);
    ASSERT(lane >= 0 && (uint64_t)lane < st.lane_count);
    st.lanes[lane].positions[0].offset += 1;
    unsigned char *data = NULL;
    ASSERT_OK(ordo__state_encode(&st, &data, &size, &err), &err);
    ordo__state_free(&st);
    char *update = malloc(2 * size + 160);
    ASSERT(update != NULL);
    int n = sprintf(update, "UPDATE %s SET lane_state = X'", table);
    for (size_t i = 0; i < size; i++)
        n += sprintf(update + n, "%02x", data[i]);
    sprintf(update + n, "' WHERE run_id = %lld AND step = %lld", (long long)run_id,
            (long long)step);
    fixture_sql(db_path, update);
    free(update);
    free(data);
}
