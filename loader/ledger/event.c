/* Events: conflicts, resumes, divergences, replay mismatches, skips. */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

static ordo_status insert_event(ordo_ledger *ledger, int64_t run_id, int64_t step, const char *kind,
                                const unsigned char *digest, const char *detail, ordo_error *err)
{
    sqlite3_stmt *stmt =
        ordo__stmt(ledger, ORDO_STMT_EVENT_INSERT,
                   "INSERT OR IGNORE INTO events (run_id, step, kind, digest, detail) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)",
                   err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    sqlite3_bind_int64(stmt, 1, run_id);
    if (step > 0)
        sqlite3_bind_int64(stmt, 2, step);
    else
        sqlite3_bind_null(stmt, 2);
    sqlite3_bind_text(stmt, 3, kind, -1, SQLITE_STATIC);
    if (digest)
        sqlite3_bind_blob(stmt, 4, digest, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    else
        sqlite3_bind_null(stmt, 4);
    sqlite3_bind_text(stmt, 5, detail ? detail : "{}", -1, SQLITE_STATIC);
    ordo_status status = ORDO_OK;
    if (sqlite3_step(stmt) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "recording an event");
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return status;
}

/* Records a conflict; a retried identical report adds no second event. */
ordo_status ordo__conflict(ordo_ledger *ledger, int64_t run_id, int64_t step,
                           const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                           ordo_error *err)
{
    return insert_event(ledger, run_id, step, "conflict", digest, detail, err);
}

/* Records a divergence from the baseline; written with the steps. */
ordo_status ordo__divergence(ordo_ledger *ledger, int64_t run_id, int64_t step,
                             const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                             ordo_error *err)
{
    return insert_event(ledger, run_id, step, "divergence", digest, detail, err);
}

/* Records an event of a public kind; see ordo.h. */
ordo_status ordo_event_record(ordo_ledger *ledger, int64_t run_id, int64_t step,
                              ordo_event_kind kind_value, const char *detail, ordo_error *err)
{
    const char *kind = ordo_event_kind_name(kind_value); /* the stored text */
    if (!kind)
        return ordo__error(err, ORDO_INVALID,
                           "event kind %d must be resume, divergence, replay_mismatch, skip "
                           "or chunk_mismatch",
                           (int)kind_value);
    if (kind_value == ORDO_EVENT_CONFLICT)
        return ordo__error(err, ORDO_INVALID,
                           "event kind '%s' must be resume, divergence, replay_mismatch, skip "
                           "or chunk_mismatch",
                           kind);
    if (step < 0 || step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "event step %lld is out of range", (long long)step);
    ordo_status status = ordo__writable(ledger, err);
    if (status == ORDO_OK)
        status = ordo__run_exists(ledger, run_id, err);
    if (status == ORDO_OK && detail)
        status = ordo__check_json_object(detail, "event detail", err);
    if (status == ORDO_OK)
        status = insert_event(ledger, run_id, step, kind, NULL, detail, err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Frees events and their details. */
static void free_events(ordo_event *events, size_t count)
{
    for (size_t i = 0; events && i < count; i++)
        free(events[i].detail);
    free(events);
}

static ordo_status read_event(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    ordo_event *e = item;
    e->id = sqlite3_column_int64(stmt, 0);
    e->step = sqlite3_column_int64(stmt, 1);
    if (ordo_event_kind_parse((const char *)sqlite3_column_text(stmt, 2), &e->kind, NULL) !=
        ORDO_OK)
        e->kind = ORDO_EVENT_CONFLICT; /* the schema allows no other text */
    e->detail = ordo__strdup((const char *)sqlite3_column_text(stmt, 3));
    ordo__copy(e->created_at, sizeof e->created_at, (const char *)sqlite3_column_text(stmt, 4));
    return e->detail ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory listing events");
}

/* Lists a run's events (optionally of one kind) into a caller-owned array. */
static ordo_status list_items(ordo_ledger *ledger, int64_t run_id, const char *kind,
                              ordo_event **events, size_t *count, ordo_error *err)
{
    *events = NULL;
    *count = 0;
    ordo__rows rows = {
        .item_size = sizeof **events, .read = read_event, .nomem = "out of memory listing events"};
    ordo_status status = ordo__sql_list(
        ledger,
        "SELECT id, coalesce(step, 0), kind, detail, created_at FROM events "
        "WHERE run_id = ?1 AND (?2 IS NULL OR kind = ?2) ORDER BY id",
        ORDO__BIND(ORDO__INT(run_id), ORDO__TEXT(kind)), &rows, "listing events", err);
    if (status != ORDO_OK) {
        free_events(rows.items, rows.count);
        return status;
    }
    *events = rows.items;
    *count = rows.count;
    return ordo__ok(err);
}

/* A run's events: see ordo.h. *list is the caller's (ordo_event_list_free). */
ordo_status ordo_events_list(ordo_ledger *ledger, int64_t run_id, ordo_event_kind kind_value,
                             ordo_event_list **list, ordo_error *err)
{
    *list = NULL;
    const char *kind = ordo_event_kind_name(kind_value); /* NULL: every kind */
    if (!kind && kind_value != ORDO_EVENT_ANY)
        return ordo__error(err, ORDO_INVALID, "event kind %d is not one", (int)kind_value);
    *list = calloc(1, sizeof **list);
    if (!*list)
        return ordo__error(err, ORDO_NOMEM, "out of memory listing events");
    ordo_status status = list_items(ledger, run_id, kind, &(*list)->items, &(*list)->count, err);
    if (status != ORDO_OK) {
        free(*list);
        *list = NULL;
    }
    return status;
}

/* Frees a list and what its items own (NULL is fine). */
void ordo_event_list_free(ordo_event_list *list)
{
    if (!list)
        return;
    free_events(list->items, list->count);
    free(list);
}
