/* Checkpoints: the per-lane replay state after a consumed step (design §6). */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define STATE_MAX (16u << 20) /* a checkpoint is tens of bytes per lane */

static ordo_status check_checkpoint(int64_t step, int lanes, const void *state, size_t size,
                                    ordo_error *err)
{
    if (step < 1 || step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "checkpoint step %lld is out of range (1 to %lld)",
                           (long long)step, (long long)ORDO_STEP_MAX);
    if (lanes < 1)
        return ordo__error(err, ORDO_INVALID, "checkpoint lanes (%d) must be >= 1", lanes);
    if (size == 0 || !state)
        return ordo__error(err, ORDO_INVALID, "checkpoint at step %lld has no state",
                           (long long)step);
    if (size > STATE_MAX)
        return ordo__error(err, ORDO_INVALID, "checkpoint state is %zu bytes, more than %u",
                           size, STATE_MAX);
    return ORDO_OK;
}

/* The checkpoint's lane count must be that of the segment covering its
 * step (L, or W for a rank-bound segment). The one step before the first
 * segment is the state a forked run resumed from, of its parent's shape. */
static ordo_status check_lanes(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                               ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT * FROM (SELECT lanes FROM segments WHERE run_id = ?1 AND start_step <= ?2 "
        "ORDER BY ordinal DESC LIMIT 1) UNION ALL SELECT ?3 FROM segments "
        "WHERE run_id = ?1 AND ordinal = 0 AND start_step = ?2 + 1 LIMIT 1",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, step);
    sqlite3_bind_int(stmt, 3, lanes);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_int(stmt, 0) != lanes)
        status = ordo__error(err, ORDO_INVALID,
                             "checkpoint at step %lld has %d lanes, its segment has %d",
                             (long long)step, lanes, sqlite3_column_int(stmt, 0));
    else if (rc == SQLITE_DONE)
        status = ordo__error(err, ORDO_INVALID,
                             "checkpoint step %lld comes before the run's first segment",
                             (long long)step);
    else if (rc != SQLITE_ROW)
        status = ordo__db_error(ledger, err, "reading segments");
    sqlite3_finalize(stmt);
    return status;
}

/* SQL: 1 when step ?2 of run ?1 is complete (its step row is recorded),
 * or it is the step a fork started from (its steps are its baseline's). */
#define STEP_COMPLETE                                                                          \
    "(EXISTS (SELECT 1 FROM steps WHERE key = (?1 << 40) + ?2) OR EXISTS (SELECT 1 FROM "     \
    "segments WHERE run_id = ?1 AND ordinal = 0 AND start_step = ?2 + 1 AND resumed_from = ?2))"

/* A report (whole step or lane) must have reached the checkpoint's step. */
static ordo_status check_reached(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                 ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT " STEP_COMPLETE " OR EXISTS (SELECT 1 FROM steps WHERE key BETWEEN "
        "(?1 << 40) + ?2 AND (?1 << 40) + 1099511627775) OR EXISTS (SELECT 1 FROM "
        "lane_reports WHERE run_id = ?1 AND step >= ?2), (SELECT max(key) - (?1 << 40) FROM "
        "steps WHERE key BETWEEN (?1 << 40) AND (?1 << 40) + 1099511627775)",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, step);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && !sqlite3_column_int(stmt, 0))
        status = ordo__error(err, ORDO_INVALID,
                             "checkpoint at step %lld: no report has reached that step (the "
                             "last recorded step is %lld); report the steps first",
                             (long long)step, (long long)sqlite3_column_int64(stmt, 1));
    else if (rc != SQLITE_ROW)
        status = ordo__db_error(ledger, err, "reading steps");
    sqlite3_finalize(stmt);
    return status;
}

/* 1 when the recorded checkpoint equals (lanes, state), 0 when not. */
static ordo_status same_checkpoint(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                                   const void *state, size_t size, int *same, ordo_error *err)
{
    ordo_checkpoint old;
    ordo_status status = ordo_checkpoint_get(ledger, run_id, step, &old, err);
    if (status != ORDO_OK)
        return status;
    *same = old.lanes == lanes && old.state_size == size && memcmp(old.state, state, size) == 0;
    ordo_checkpoint_free(&old);
    return ORDO_OK;
}

static ordo_status record_conflict(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                   const void *state, size_t size, ordo_error *err)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(state, size, digest);
    ordo_status status = ordo__conflict(ledger, run_id, step, digest,
                                        "{\"what\":\"checkpoint\"}", err);
    if (status == ORDO_OK)
        status = ordo__commit(ledger, err);
    else
        ordo__rollback(ledger);
    if (status != ORDO_OK)
        return status;
    return ordo__error(err, ORDO_CONFLICT,
                       "checkpoint at step %lld of run %lld is recorded with a different state",
                       (long long)step, (long long)run_id);
}

/* Records a checkpoint (idempotent); see ordo.h. */
ordo_status ordo_checkpoint_record(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                                   const void *state, size_t size, ordo_error *err)
{
    ordo_status status = check_checkpoint(step, lanes, state, size, err);
    if (status == ORDO_OK)
        status = ordo__begin(ledger, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_stmt *stmt = NULL;
    if ((status = ordo__run_exists(ledger, run_id, err)) == ORDO_OK &&
        (status = check_lanes(ledger, run_id, step, lanes, err)) == ORDO_OK &&
        (status = check_reached(ledger, run_id, step, err)) == ORDO_OK)
        status = ordo__prepare(ledger,
                               "INSERT INTO checkpoints (run_id, step, lanes, lane_state) "
                               "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id, step) DO NOTHING",
                               &stmt, err);
    int changed = 0;
    if (status == ORDO_OK) {
        sqlite3_bind_int64(stmt, 1, run_id);
        sqlite3_bind_int64(stmt, 2, step);
        sqlite3_bind_int(stmt, 3, lanes);
        sqlite3_bind_blob(stmt, 4, state, (int)size, SQLITE_STATIC);
        if (sqlite3_step(stmt) != SQLITE_DONE)
            status = ordo__db_error(ledger, err, "recording a checkpoint");
        changed = sqlite3_changes(ledger->db);
    }
    sqlite3_finalize(stmt);
    int same = 1;
    if (status == ORDO_OK && !changed)
        status = same_checkpoint(ledger, run_id, step, lanes, state, size, &same, err);
    if (status == ORDO_OK && !same)
        return record_conflict(ledger, run_id, step, state, size, err);
    if (status != ORDO_OK) {
        ordo__rollback(ledger);
        return status;
    }
    status = ordo__commit(ledger, err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

static void read_checkpoint(sqlite3_stmt *stmt, ordo_checkpoint *c)
{
    memset(c, 0, sizeof *c);
    c->step = sqlite3_column_int64(stmt, 0);
    c->lanes = sqlite3_column_int(stmt, 1);
    c->state_size = (size_t)sqlite3_column_int64(stmt, 2);
    ordo__copy(c->created_at, sizeof c->created_at, (const char *)sqlite3_column_text(stmt, 3));
    c->held = !sqlite3_column_int(stmt, 4);
}

/* Reads one checkpoint (step 0: the latest) with its state. */
ordo_status ordo_checkpoint_get(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                ordo_checkpoint *checkpoint, ordo_error *err)
{
    memset(checkpoint, 0, sizeof *checkpoint);
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT step, lanes, length(lane_state), created_at, complete, lane_state FROM ("
        "SELECT c.*, (EXISTS (SELECT 1 FROM steps WHERE key = (c.run_id << 40) + c.step) OR "
        "EXISTS (SELECT 1 FROM segments s WHERE s.run_id = c.run_id AND s.ordinal = 0 AND "
        "s.start_step = c.step + 1 AND s.resumed_from = c.step)) AS complete "
        "FROM checkpoints c WHERE c.run_id = ?1 AND (?2 = 0 OR c.step = ?2) "
        "ORDER BY c.step DESC) WHERE complete OR ?2 <> 0 LIMIT 1",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, step);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && !sqlite3_column_int(stmt, 4)) {
        status = ordo__error(err, ORDO_INVALID,
                             "the checkpoint at step %lld of run %lld is held: step %lld still "
                             "has lanes pending", (long long)step, (long long)run_id,
                             (long long)step);
    } else if (rc == SQLITE_ROW) {
        read_checkpoint(stmt, checkpoint);
        const void *blob = sqlite3_column_blob(stmt, 5);
        checkpoint->state = malloc(checkpoint->state_size ? checkpoint->state_size : 1);
        if (checkpoint->state && blob)
            memcpy(checkpoint->state, blob, checkpoint->state_size);
        else if (checkpoint->state)
            checkpoint->state_size = 0;
        else
            status = ordo__error(err, ORDO_NOMEM, "out of memory reading a checkpoint");
    } else if (rc == SQLITE_DONE && step) {
        status = ordo__error(err, ORDO_NOTFOUND, "run %lld has no checkpoint at step %lld",
                             (long long)run_id, (long long)step);
    } else if (rc == SQLITE_DONE) {
        status = ordo__error(err, ORDO_NOTFOUND, "run %lld has no checkpoints (of a complete "
                                                 "step)", (long long)run_id);
    } else {
        status = ordo__db_error(ledger, err, "reading a checkpoint");
    }
    sqlite3_finalize(stmt);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Lists checkpoints without state into a caller-owned array. */
static ordo_status list_items(ordo_ledger *ledger, int64_t run_id,
                              ordo_checkpoint **checkpoints, size_t *count, ordo_error *err)
{
    *checkpoints = NULL;
    *count = 0;
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT step, lanes, length(lane_state), created_at, EXISTS (SELECT 1 FROM steps "
        "WHERE key = (c.run_id << 40) + c.step) OR EXISTS (SELECT 1 FROM segments s WHERE "
        "s.run_id = c.run_id AND s.ordinal = 0 AND s.start_step = c.step + 1 AND "
        "s.resumed_from = c.step) FROM checkpoints c WHERE run_id = ?1 ORDER BY step",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    size_t capacity = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (*count == capacity) {
            capacity = capacity ? 2 * capacity : 16;
            ordo_checkpoint *grown = realloc(*checkpoints, capacity * sizeof *grown);
            if (!grown) {
                status = ordo__error(err, ORDO_NOMEM, "out of memory listing checkpoints");
                break;
            }
            *checkpoints = grown;
        }
        read_checkpoint(stmt, &(*checkpoints)[(*count)++]);
    }
    if (status == ORDO_OK && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "listing checkpoints");
    sqlite3_finalize(stmt);
    if (status != ORDO_OK) {
        free(*checkpoints);
        *checkpoints = NULL;
        *count = 0;
        return status;
    }
    return ordo__ok(err);
}

/* Frees the state a checkpoint owns. */
void ordo_checkpoint_free(ordo_checkpoint *checkpoint)
{
    if (!checkpoint)
        return;
    free(checkpoint->state);
    checkpoint->state = NULL;
}

/* A run's checkpoints: see ordo.h. *list is the caller's (ordo_checkpoint_list_free). */
ordo_status ordo_checkpoints_list(ordo_ledger *ledger, int64_t run_id,
                                  ordo_checkpoint_list **list, ordo_error *err)
{
    *list = calloc(1, sizeof **list);
    if (!*list)
        return ordo__error(err, ORDO_NOMEM, "out of memory listing checkpoints");
    ordo_status status = list_items(ledger, run_id, &(*list)->items, &(*list)->count, err);
    if (status != ORDO_OK) {
        free(*list);
        *list = NULL;
    }
    return status;
}

/* Frees a list and what its items own (NULL is fine). */
void ordo_checkpoint_list_free(ordo_checkpoint_list *list)
{
    if (!list)
        return;
    free(list->items);
    free(list);
}
