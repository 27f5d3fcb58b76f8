/* Segments: a run's stretches at one world size, with their lane plans. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

typedef struct {
    int64_t id;
    int ordinal;
    int world_size;
    int64_t start_step;
    int run_lanes; /* the run's */
} previous_segment;

/* The plan against the run: under logical binding its lanes are the run's
 * (the plan itself was checked by ordo_lane_plan_check). */
static ordo_status check_plan(const ordo_segment_spec *spec, int run_lanes, const char *binding,
                              ordo_error *err)
{
    if (strcmp(binding, "logical") == 0 && spec->lanes != run_lanes)
        return ordo__error(err, ORDO_INVALID, "lane plan has %d lanes but the run has %d",
                           spec->lanes, run_lanes);
    return ORDO_OK;
}

/* The plan as JSON: for each rank, its lanes in ascending order. */
static char *plan_json(const ordo_segment_spec *spec)
{
    json_t *plan = json_array();
    for (int rank = 0; plan && rank < spec->world_size; rank++) {
        json_t *lanes = json_array();
        for (int lane = 0; lanes && lane < spec->lanes; lane++)
            if (spec->lane_ranks[lane] == rank)
                json_array_append_new(lanes, json_integer(lane));
        json_array_append_new(plan, lanes);
    }
    char *text = plan ? json_dumps(plan, JSON_COMPACT) : NULL;
    json_decref(plan);
    return text;
}

static ordo_status read_previous_row(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    previous_segment *prev = context;
    prev->run_lanes = sqlite3_column_int(row, 0);
    if (sqlite3_column_type(row, 1) != SQLITE_NULL) {
        prev->id = sqlite3_column_int64(row, 1);
        prev->ordinal = sqlite3_column_int(row, 2);
        prev->world_size = sqlite3_column_int(row, 3);
        prev->start_step = sqlite3_column_int64(row, 4);
    }
    return ORDO_OK;
}

static ordo_status read_previous(ordo_ledger *ledger, int64_t run_id, previous_segment *prev,
                                 int *run_lanes, ordo_error *err)
{
    memset(prev, 0, sizeof *prev);
    prev->ordinal = -1;
    prev->run_lanes = *run_lanes;
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT r.lanes, s.id, s.ordinal, s.world_size, s.start_step FROM runs r "
        "LEFT JOIN segments s ON s.run_id = r.id WHERE r.id = ?1 "
        "ORDER BY s.ordinal DESC LIMIT 1",
        ORDO__BIND(ORDO__INT(run_id)), read_previous_row, prev, "reading segments", err);
    *run_lanes = prev->run_lanes;
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "run %lld is not in the ledger", (long long)run_id);
    return status;
}

static ordo_status check_steps(const ordo_segment_spec *spec, const previous_segment *prev,
                               ordo_error *err)
{
    if (spec->start_step < 1 || spec->start_step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "segment start step (%lld) must be 1 to %lld",
                           (long long)spec->start_step, (long long)ORDO_STEP_MAX);
    if (prev->ordinal >= 0 && spec->start_step <= prev->start_step)
        return ordo__error(err, ORDO_INVALID,
                           "segment start step (%lld) must be after the previous segment's (%lld)",
                           (long long)spec->start_step, (long long)prev->start_step);
    if (spec->resumed_from < 0 || (spec->resumed_from && spec->resumed_from >= spec->start_step))
        return ordo__error(err, ORDO_INVALID,
                           "resumed-from step (%lld) must be before the start step (%lld)",
                           (long long)spec->resumed_from, (long long)spec->start_step);
    ordo_status status = ORDO_OK;
    if (spec->workers)
        status = ordo__check_json_object(spec->workers, "worker settings", err);
    if (status == ORDO_OK && spec->host)
        status = ordo__check_name(spec->host, "host", err);
    return status;
}

static ordo_status run_sql(ordo_ledger *ledger, const char *sql, int64_t a, int64_t b,
                           ordo_error *err)
{
    return ordo__sql_exec(ledger, sql, ORDO__BIND(ORDO__INT(a), ORDO__INT(b)), "updating segments",
                          err);
}

static ordo_status insert_segment(ordo_ledger *ledger, int64_t run_id,
                                  const ordo_segment_spec *spec, const char *binding,
                                  const char *plan, int ordinal, int64_t *segment_id,
                                  ordo_error *err)
{
    ordo_status status = ordo__sql_exec(
        ledger,
        "INSERT INTO segments (run_id, ordinal, world_size, lanes, lane_binding, start_step, "
        "resumed_from, lane_plan, workers, host) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(ordinal), ORDO__INT(spec->world_size),
                   ORDO__INT(spec->lanes), ORDO__TEXT(binding), ORDO__INT(spec->start_step),
                   spec->resumed_from ? ORDO__INT(spec->resumed_from) : ORDO__NULL,
                   ORDO__TEXT(plan), ORDO__TEXT(spec->workers), ORDO__TEXT(spec->host)),
        "adding segment", err);
    if (status == ORDO_OK)
        *segment_id = sqlite3_last_insert_rowid(ledger->db);
    return status;
}

static ordo_status record_resume(ordo_ledger *ledger, int64_t run_id, const ordo_segment_spec *spec,
                                 const previous_segment *prev, int replaced, ordo_error *err)
{
    json_t *detail =
        json_pack("{s:i, s:i, s:I}", "from_world_size", prev->world_size, "to_world_size",
                  spec->world_size, "start_step", (json_int_t)spec->start_step);
    if (detail && spec->resumed_from)
        json_object_set_new(detail, "resumed_from", json_integer(spec->resumed_from));
    if (detail && replaced) /* segments that crashed before their first checkpoint */
        json_object_set_new(detail, "replaced_segments", json_integer(replaced));
    char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
    json_decref(detail);
    if (!text)
        return ordo__error(err, ORDO_NOMEM, "out of memory recording a resume");
    ordo_status status =
        ordo_event_record(ledger, run_id, spec->start_step, ORDO_EVENT_RESUME, text, err);
    free(text);
    return status;
}

/* A resume after a crash: the segments from start_step on never took a
 * checkpoint, so nothing resumes from them; they are replaced (their
 * recorded steps stay, and the new segment's must agree with them). */
static ordo_status replace_crashed(ordo_ledger *ledger, int64_t run_id,
                                   const ordo_segment_spec *spec, int *replaced, ordo_error *err)
{
    *replaced = 0;
    int64_t found[2] = {0, 0}; /* segments from start_step on; their first checkpoint or 0 */
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT (SELECT count(*) FROM segments WHERE run_id = ?1 AND start_step >= ?2), "
        "coalesce((SELECT min(step) FROM checkpoints WHERE run_id = ?1 AND step >= ?2), 0)",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(spec->start_step)), ordo__read_int64_pair, found,
        "reading segments", err);
    if (status == ORDO_NOTFOUND)
        return ordo__db_error(ledger, err, "reading segments");
    int count = (int)found[0];
    int64_t checkpoint = found[1];
    if (status != ORDO_OK || count == 0)
        return status;
    if (checkpoint)
        return ordo__error(err, ORDO_INVALID,
                           "the run has a checkpoint at step %lld, after the resume's start "
                           "step %lld: resume from it, or fork",
                           (long long)checkpoint, (long long)spec->start_step);
    *replaced = count;
    return run_sql(ledger, "DELETE FROM segments WHERE run_id = ?1 AND start_step >= ?2", run_id,
                   spec->start_step, err);
}

/* What ordo_segment_add adds. */
typedef struct {
    int64_t run_id;
    const ordo_segment_spec *spec;
    const char *binding;
    int64_t *segment_id;
} segment_addition;

static ordo_status add_locked(ordo_ledger *ledger, void *context, ordo_error *err)
{
    const segment_addition *a = context;
    int64_t run_id = a->run_id, *segment_id = a->segment_id;
    const ordo_segment_spec *spec = a->spec;
    const char *binding = a->binding;
    previous_segment prev;
    int run_lanes = 0, replaced = 0;
    char *plan = NULL;
    ordo_status status =
        spec->replace_crashed ? replace_crashed(ledger, run_id, spec, &replaced, err) : ORDO_OK;
    if (status == ORDO_OK)
        status = read_previous(ledger, run_id, &prev, &run_lanes, err);
    if (status == ORDO_OK)
        status = check_plan(spec, run_lanes, binding, err);
    if (status == ORDO_OK)
        status = check_steps(spec, &prev, err);
    if (status == ORDO_OK && !(plan = plan_json(spec)))
        status = ordo__error(err, ORDO_NOMEM, "out of memory writing a lane plan");
    if (status == ORDO_OK && prev.ordinal >= 0)
        status = run_sql(ledger, "UPDATE segments SET end_step = ?2 - 1 WHERE id = ?1", prev.id,
                         spec->start_step, err);
    if (status == ORDO_OK)
        status =
            insert_segment(ledger, run_id, spec, binding, plan, prev.ordinal + 1, segment_id, err);
    /* lane reports of steps the new segment replays were of an attempt
     * that ended: the resume reports those steps again, under its plan */
    if (status == ORDO_OK && (prev.ordinal >= 0 || replaced))
        status = run_sql(ledger, "DELETE FROM lane_reports WHERE run_id = ?1 AND step >= ?2",
                         run_id, spec->start_step, err);
    if (status == ORDO_OK && (prev.ordinal >= 0 || replaced))
        status = record_resume(ledger, run_id, spec, &prev, replaced, err);
    free(plan);
    return status;
}

/* Adds a segment after validating its plan; see ordo.h. */
ordo_status ordo_segment_add(ordo_ledger *ledger, int64_t run_id, const ordo_segment_spec *spec,
                             int64_t *segment_id, ordo_error *err)
{
    const char *binding = ordo_lane_binding_name(spec->lane_binding); /* the stored text */
    if (!binding)
        return ordo__error(err, ORDO_INVALID,
                           "lane binding %d must be ORDO_BINDING_LOGICAL or "
                           "ORDO_BINDING_RANK",
                           (int)spec->lane_binding);
    ordo_status checked = ordo_lane_plan_check(spec->lanes, spec->world_size, spec->lane_binding,
                                               spec->lane_ranks, err);
    if (checked != ORDO_OK) /* refused before the ledger is locked */
        return checked;
    ordo_status status = ordo__transaction(
        ledger, add_locked, &(segment_addition){run_id, spec, binding, segment_id}, err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

static ordo_status read_segment(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    ordo_segment_info *info = item;
    memset(info, 0, sizeof *info);
    info->id = sqlite3_column_int64(stmt, 0);
    info->ordinal = sqlite3_column_int(stmt, 1);
    info->world_size = sqlite3_column_int(stmt, 2);
    info->lanes = sqlite3_column_int(stmt, 3);
    if (ordo_lane_binding_parse((const char *)sqlite3_column_text(stmt, 4), &info->lane_binding,
                                NULL) != ORDO_OK)
        info->lane_binding = ORDO_BINDING_LOGICAL; /* the schema allows no other text */
    info->start_step = sqlite3_column_int64(stmt, 5);
    info->open = sqlite3_column_type(stmt, 6) == SQLITE_NULL;
    info->end_step = info->open ? sqlite3_column_int64(stmt, 7) : sqlite3_column_int64(stmt, 6);
    info->resumed_from = sqlite3_column_int64(stmt, 8);
    info->lane_plan = ordo__strdup((const char *)sqlite3_column_text(stmt, 9));
    info->workers = ordo__strdup((const char *)sqlite3_column_text(stmt, 10));
    info->host = ordo__strdup((const char *)sqlite3_column_text(stmt, 11));
    ordo__copy(info->created_at, sizeof info->created_at,
               (const char *)sqlite3_column_text(stmt, 12));
    int lost = !info->lane_plan ||
               (sqlite3_column_type(stmt, 10) != SQLITE_NULL && !info->workers) ||
               (sqlite3_column_type(stmt, 11) != SQLITE_NULL && !info->host);
    return lost ? ordo__error(err, ORDO_NOMEM, "out of memory listing segments") : ORDO_OK;
}

/* Frees segments and the strings they own. */
static void free_segments(ordo_segment_info *segments, size_t count)
{
    for (size_t i = 0; segments && i < count; i++) {
        free(segments[i].lane_plan);
        free(segments[i].workers);
        free(segments[i].host);
    }
    free(segments);
}

/* Reads a run's segments in order into a caller-owned array. */
static ordo_status list_items(ordo_ledger *ledger, int64_t run_id, ordo_segment_info **segments,
                              size_t *count, ordo_error *err)
{
    *segments = NULL;
    *count = 0;
    ordo__rows rows = {.item_size = sizeof **segments,
                       .read = read_segment,
                       .nomem = "out of memory listing segments"};
    ordo_status status = ordo__sql_list(
        ledger,
        "SELECT id, ordinal, world_size, lanes, lane_binding, start_step, end_step, "
        "coalesce((SELECT max(key) FROM steps t WHERE t.key BETWEEN (s.run_id << 40) + "
        "s.start_step AND (s.run_id << 40) + 1099511627775) - (s.run_id << 40), "
        "s.start_step - 1), "
        "coalesce(resumed_from, 0), lane_plan, workers, host, created_at "
        "FROM segments s WHERE run_id = ?1 ORDER BY ordinal",
        ORDO__BIND(ORDO__INT(run_id)), &rows, "listing segments", err);
    if (status != ORDO_OK) {
        free_segments(rows.items, rows.count);
        return status;
    }
    *segments = rows.items;
    *count = rows.count;
    return ordo__ok(err);
}

/* A run's segments: see ordo.h. *list is the caller's (ordo_segment_list_free). */
ordo_status ordo_segments_list(ordo_ledger *ledger, int64_t run_id, ordo_segment_list **list,
                               ordo_error *err)
{
    *list = calloc(1, sizeof **list);
    if (!*list)
        return ordo__error(err, ORDO_NOMEM, "out of memory listing segments");
    ordo_status status = list_items(ledger, run_id, &(*list)->items, &(*list)->count, err);
    if (status != ORDO_OK) {
        free(*list);
        *list = NULL;
    }
    return status;
}

/* Frees a list and what its items own (NULL is fine). */
void ordo_segment_list_free(ordo_segment_list *list)
{
    if (!list)
        return;
    free_segments(list->items, list->count);
    free(list);
}
