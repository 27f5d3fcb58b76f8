/* Checkpoints: the per-lane replay state after a consumed step
 * (docs/recipe.md, "Checkpoints"). */
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
        return ordo__error(err, ORDO_INVALID, "checkpoint state is %zu bytes, more than %u", size,
                           STATE_MAX);
    return ORDO_OK;
}

/* The checkpoint's lane count must be that of the segment covering its
 * step (L, or W for a rank-bound segment). The one step before the first
 * segment is the state a forked run resumed from, of its parent's shape. */
static ordo_status check_lanes(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                               ordo_error *err)
{
    int64_t found = 0;
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT * FROM (SELECT lanes FROM segments WHERE run_id = ?1 AND start_step <= ?2 "
        "ORDER BY ordinal DESC LIMIT 1) UNION ALL SELECT ?3 FROM segments "
        "WHERE run_id = ?1 AND ordinal = 0 AND start_step = ?2 + 1 LIMIT 1",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(step), ORDO__INT(lanes)), ordo__read_int64, &found,
        "reading segments", err);
    if (status == ORDO_OK && (int)found != lanes)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint at step %lld has %d lanes, its segment has %d",
                           (long long)step, lanes, (int)found);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint step %lld comes before the run's first segment",
                           (long long)step);
    return status;
}

/* SQL: 1 when step `step` of run `run` is complete (its step row is
 * recorded), or it is the step a fork started from (its steps are its
 * baseline's). */
#define STEP_COMPLETE(run, step)                                                                   \
    "(EXISTS (SELECT 1 FROM steps WHERE key = (" run " << 40) + " step ") OR EXISTS (SELECT 1 "    \
    "FROM segments s WHERE s.run_id = " run " AND s.ordinal = 0 AND s.start_step = " step          \
    " + 1 AND s.resumed_from = " step "))"

/* A report (whole step or lane) must have reached the checkpoint's step. */
static ordo_status check_reached(ordo_ledger *ledger, int64_t run_id, int64_t step, ordo_error *err)
{
    int64_t reached[2] = {0, 0}; /* the step is reached; the last recorded step */
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT " STEP_COMPLETE(
            "?1", "?2") " OR EXISTS (SELECT 1 FROM steps WHERE key BETWEEN "
                        "(?1 << 40) + ?2 AND (?1 << 40) + 1099511627775) OR EXISTS (SELECT 1 FROM "
                        "lane_reports WHERE run_id = ?1 AND step >= ?2), (SELECT max(key) - (?1 << "
                        "40) FROM "
                        "steps WHERE key BETWEEN (?1 << 40) AND (?1 << 40) + 1099511627775)",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(step)), ordo__read_int64_pair, reached,
        "reading steps", err);
    if (status == ORDO_OK && !reached[0])
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint at step %lld: no report has reached that step (the "
                           "last recorded step is %lld); report the steps first",
                           (long long)step, (long long)reached[1]);
    return status == ORDO_NOTFOUND ? ordo__db_error(ledger, err, "reading steps") : status;
}

/* 1 when the recorded checkpoint equals (lanes, state) or holds the same
 * positions (ordo_checkpoint_equivalent: then replaced by state when that
 * knows more of their records), 0 when not. */
static ordo_status same_checkpoint(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                                   const void *state, size_t size, int *same, ordo_error *err)
{
    ordo_checkpoint old;
    ordo_status status = ordo_checkpoint_get(ledger, run_id, step, &old, err);
    if (status != ORDO_OK)
        return status;
    *same = old.lanes == lanes && old.state_size == size && memcmp(old.state, state, size) == 0;
    int equivalent = 0, more = 0;
    ordo_error why;
    if (!*same && old.lanes == lanes &&
        ordo_checkpoint_equivalent(old.state, old.state_size, state, size, &equivalent, &more,
                                   &why) == ORDO_OK &&
        equivalent) { /* the same positions, some records unknown: the one knowing more is kept */
        *same = 1;
        if (more)
            status = ordo__sql_exec(
                ledger,
                "UPDATE checkpoints SET lane_state = ?3 WHERE run_id = ?1 AND "
                "step = ?2",
                ORDO__BIND(ORDO__INT(run_id), ORDO__INT(step), ORDO__BLOB(state, size)),
                "recording a checkpoint", err);
    }
    ordo_checkpoint_free(&old);
    return status;
}

/* What is recorded, and whether it met another state. */
typedef struct {
    int64_t run_id, step;
    int lanes;
    const void *state;
    size_t size;
    int conflict;
} checkpoint_record;

static ordo_status record_locked(ordo_ledger *ledger, void *context, ordo_error *err)
{
    checkpoint_record *c = context;
    ordo_status status = ordo__run_exists(ledger, c->run_id, err);
    if (status == ORDO_OK)
        status = check_lanes(ledger, c->run_id, c->step, c->lanes, err);
    if (status == ORDO_OK)
        status = check_reached(ledger, c->run_id, c->step, err);
    if (status == ORDO_OK)
        status = ordo__sql_exec(ledger,
                                "INSERT INTO checkpoints (run_id, step, lanes, lane_state) "
                                "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id, step) DO NOTHING",
                                ORDO__BIND(ORDO__INT(c->run_id), ORDO__INT(c->step),
                                           ORDO__INT(c->lanes), ORDO__BLOB(c->state, c->size)),
                                "recording a checkpoint", err);
    int same = 1;
    if (status == ORDO_OK && !sqlite3_changes(ledger->db))
        status =
            same_checkpoint(ledger, c->run_id, c->step, c->lanes, c->state, c->size, &same, err);
    if (status != ORDO_OK || same)
        return status;
    /* a different state: the conflict is kept, and the call fails */
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(c->state, c->size, digest);
    c->conflict = 1;
    return ordo__conflict(ledger, c->run_id, c->step, digest, "{\"what\":\"checkpoint\"}", err);
}

/* Records a checkpoint (idempotent); see ordo.h. */
ordo_status ordo_checkpoint_record(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                                   const void *state, size_t size, ordo_error *err)
{
    checkpoint_record c = {run_id, step, lanes, state, size, 0};
    ordo_status status = check_checkpoint(step, lanes, state, size, err);
    if (status == ORDO_OK)
        status = ordo__transaction(ledger, record_locked, &c, err);
    if (status == ORDO_OK && c.conflict)
        return ordo__error(err, ORDO_CONFLICT,
                           "checkpoint at step %lld of run %lld is recorded with a different state",
                           (long long)step, (long long)run_id);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

static ordo_status read_checkpoint(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    (void)err;
    ordo_checkpoint *c = item;
    memset(c, 0, sizeof *c);
    c->step = sqlite3_column_int64(stmt, 0);
    c->lanes = sqlite3_column_int(stmt, 1);
    c->state_size = (size_t)sqlite3_column_int64(stmt, 2);
    ordo__copy(c->created_at, sizeof c->created_at, (const char *)sqlite3_column_text(stmt, 3));
    c->held = !sqlite3_column_int(stmt, 4);
    return ORDO_OK;
}

/* A checkpoint's row with its state (column 5), unless it is held. */
static ordo_status read_with_state(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    ordo_checkpoint *c = item;
    read_checkpoint(stmt, c, err);
    if (c->held)
        return ORDO_OK;
    const void *blob = sqlite3_column_blob(stmt, 5);
    c->state = malloc(c->state_size ? c->state_size : 1);
    if (c->state && blob)
        memcpy(c->state, blob, c->state_size);
    else if (c->state)
        c->state_size = 0;
    else
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a checkpoint");
    return ORDO_OK;
}

/* Reads one checkpoint (step 0: the latest) with its state. */
ordo_status ordo_checkpoint_get(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                ordo_checkpoint *checkpoint, ordo_error *err)
{
    memset(checkpoint, 0, sizeof *checkpoint);
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT step, lanes, length(lane_state), created_at, complete, lane_state FROM ("
        "SELECT c.*, " STEP_COMPLETE(
            "c.run_id",
            "c.step") " AS complete "
                      "FROM checkpoints c WHERE c.run_id = ?1 AND (?2 = 0 OR c.step = ?2) "
                      "ORDER BY c.step DESC) WHERE complete OR ?2 <> 0 LIMIT 1",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(step)), read_with_state, checkpoint,
        "reading a checkpoint", err);
    if (status == ORDO_OK && checkpoint->held) {
        memset(checkpoint, 0, sizeof *checkpoint);
        return ordo__error(err, ORDO_INVALID,
                           "the checkpoint at step %lld of run %lld is held: step %lld still "
                           "has lanes pending",
                           (long long)step, (long long)run_id, (long long)step);
    }
    if (status == ORDO_NOTFOUND && step)
        return ordo__error(err, ORDO_NOTFOUND, "run %lld has no checkpoint at step %lld",
                           (long long)run_id, (long long)step);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND,
                           "run %lld has no checkpoints (of a complete "
                           "step)",
                           (long long)run_id);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Lists checkpoints without state into a caller-owned array. */
static ordo_status list_items(ordo_ledger *ledger, int64_t run_id, ordo_checkpoint **checkpoints,
                              size_t *count, ordo_error *err)
{
    *checkpoints = NULL;
    *count = 0;
    ordo__rows rows = {.item_size = sizeof **checkpoints,
                       .read = read_checkpoint,
                       .nomem = "out of memory listing checkpoints"};
    ordo_status status = ordo__sql_list(
        ledger,
        "SELECT step, lanes, length(lane_state), created_at, " STEP_COMPLETE(
            "c.run_id", "c.step") " FROM checkpoints c WHERE run_id = ?1 ORDER BY step",
        ORDO__BIND(ORDO__INT(run_id)), &rows, "listing checkpoints", err);
    if (status != ORDO_OK) {
        free(rows.items);
        return status;
    }
    *checkpoints = rows.items;
    *count = rows.count;
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
ordo_status ordo_checkpoints_list(ordo_ledger *ledger, int64_t run_id, ordo_checkpoint_list **list,
                                  ordo_error *err)
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
