/* Lane digests reported one lane at a time: kept until every lane of a
 * step is in, then composed into the step's batch digest (design §7). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The lanes of the segment covering `step`, 0 when none covers it. */
static ordo_status lanes_at(ordo_ledger *ledger, int64_t run_id, int64_t step, int *lanes,
                            ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT lanes FROM segments WHERE run_id = ?1 AND start_step <= ?2 "
        "ORDER BY start_step DESC LIMIT 1",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, step);
    int rc = sqlite3_step(stmt);
    *lanes = rc == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "finding a step's segment");
    sqlite3_finalize(stmt);
    return status;
}

/* The recorded step's lane digests (a copy, *bytes of them), or NULL with
 * *bytes 0 when the step is not recorded or was recorded without them. */
static unsigned char *recorded_lanes(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                     int *bytes)
{
    sqlite3_stmt *stmt = NULL;
    unsigned char *copy = NULL;
    *bytes = 0;
    if (ordo__prepare(ledger, "SELECT lane_digests FROM steps WHERE key = ?1", &stmt, NULL) !=
        ORDO_OK)
        return NULL;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(run_id, step));
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) > 0 &&
        (copy = malloc((size_t)sqlite3_column_bytes(stmt, 0)))) {
        *bytes = sqlite3_column_bytes(stmt, 0);
        memcpy(copy, sqlite3_column_blob(stmt, 0), (size_t)*bytes);
    }
    sqlite3_finalize(stmt);
    return copy;
}

/* A lane reported with another digest than the one that stands. */
static ordo_status lane_conflict(ordo_ledger *ledger, int64_t run_id, int64_t step, int lane,
                                 const unsigned char *standing, const unsigned char *reported,
                                 ordo_record_result *result, ordo_error *err)
{
    char detail[200], a[ORDO_DIGEST_HEX_SIZE], b[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(standing, a);
    ordo_digest_to_hex(reported, b);
    snprintf(detail, sizeof detail, "{\"lane\":%d,\"recorded\":\"%s\",\"reported\":\"%s\"}",
             lane, a, b);
    result->conflicts++;
    if (!result->first_conflict_step || step < result->first_conflict_step)
        result->first_conflict_step = step;
    return ordo__conflict(ledger, run_id, step, reported, detail, err);
}

/* The step is recorded with lane digests: this report, and any reports of
 * the step still pending from before it was recorded, are checked against
 * them (each lane that differs is a conflict); the pending ones then go. */
static ordo_status against_recorded(ordo_ledger *ledger, int64_t run_id,
                                    const ordo_lane_report *r, const unsigned char *lanes,
                                    int bytes, ordo_record_result *result, ordo_error *err)
{
    int count = bytes / ORDO_DIGEST_SIZE;
    ordo_status status = ORDO_OK;
    if (r->lane >= count)
        status = ordo__error(err, ORDO_INVALID, "lane %d is not one of the %d lanes step %lld "
                                                "was recorded with", r->lane, count,
                             (long long)r->step);
    else if (memcmp(lanes + (size_t)r->lane * ORDO_DIGEST_SIZE, r->digest, ORDO_DIGEST_SIZE))
        status = lane_conflict(ledger, run_id, r->step, r->lane,
                               lanes + (size_t)r->lane * ORDO_DIGEST_SIZE, r->digest, result, err);
    else
        result->unchanged++;
    sqlite3_stmt *stmt = NULL;
    if (status == ORDO_OK)
        status = ordo__prepare(ledger, "DELETE FROM lane_reports WHERE run_id = ?1 AND step = ?2 "
                                       "RETURNING lane, digest",
                               &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, r->step);
    int rc;
    while (status == ORDO_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int lane = sqlite3_column_int(stmt, 0);
        const unsigned char *digest = sqlite3_column_blob(stmt, 1);
        if (lane < count && sqlite3_column_bytes(stmt, 1) == ORDO_DIGEST_SIZE &&
            memcmp(lanes + (size_t)lane * ORDO_DIGEST_SIZE, digest, ORDO_DIGEST_SIZE) != 0) {
            unsigned char reported[ORDO_DIGEST_SIZE];
            memcpy(reported, digest, sizeof reported);
            status = lane_conflict(ledger, run_id, r->step, lane,
                                   lanes + (size_t)lane * ORDO_DIGEST_SIZE, reported, result, err);
        }
    }
    if (status == ORDO_OK && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "checking pending lane digests");
    sqlite3_finalize(stmt);
    return status;
}

/* Stores one report: new, the same again (no-op) or a conflict. A step
 * recorded without lane digests takes its lanes as pending ones: once all
 * are in, composing them checks its batch digest (and fills the lanes). */
static ordo_status store(ordo_ledger *ledger, int64_t run_id, const ordo_lane_report *r,
                         ordo_record_result *result, ordo_error *err)
{
    int bytes = 0;
    unsigned char *lanes = recorded_lanes(ledger, run_id, r->step, &bytes);
    if (lanes) {
        ordo_status status = against_recorded(ledger, run_id, r, lanes, bytes, result, err);
        free(lanes);
        return status;
    }
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "INSERT INTO lane_reports (run_id, step, lane, digest) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT DO UPDATE SET digest = digest RETURNING digest",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, r->step);
    sqlite3_bind_int(stmt, 3, r->lane);
    sqlite3_bind_blob(stmt, 4, r->digest, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    unsigned char before[ORDO_DIGEST_SIZE];
    int same = 0;
    if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) == ORDO_DIGEST_SIZE) {
        same = memcmp(sqlite3_column_blob(stmt, 0), r->digest, ORDO_DIGEST_SIZE) == 0;
        memcpy(before, sqlite3_column_blob(stmt, 0), ORDO_DIGEST_SIZE);
    } else {
        status = ordo__db_error(ledger, err, "storing a lane digest");
    }
    sqlite3_finalize(stmt);
    if (status != ORDO_OK || same)
        return status; /* new rows return themselves: counted when the step is composed */
    return lane_conflict(ledger, run_id, r->step, r->lane, before, r->digest, result, err);
}

/* When all `lanes` lanes of `step` are in: records the step, drops the rows. */
static ordo_status compose(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                           ordo_record_result *result, size_t *completed, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger, "SELECT lane, digest FROM lane_reports WHERE run_id = ?1 AND step = ?2 "
                "ORDER BY lane",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run_id);
    sqlite3_bind_int64(stmt, 2, step);
    unsigned char *digests = malloc((size_t)lanes * ORDO_DIGEST_SIZE);
    int n = 0;
    while (digests && sqlite3_step(stmt) == SQLITE_ROW && n < lanes)
        if (sqlite3_column_int(stmt, 0) == n)
            memcpy(digests + (size_t)n++ * ORDO_DIGEST_SIZE, sqlite3_column_blob(stmt, 1),
                   ORDO_DIGEST_SIZE);
    sqlite3_finalize(stmt);
    if (!digests)
        return ordo__error(err, ORDO_NOMEM, "out of memory composing a step");
    if (n == lanes) {
        ordo_step s;
        ordo_step_init(&s, step);
        s.lane_digests = digests;
        s.lane_count = lanes;
        ordo_batch_digest(digests, lanes, s.batch_digest);
        status = ordo__steps_record_locked(ledger, run_id, &s, 1, result, err);
        if (status == ORDO_OK)
            status = ordo__prepare(ledger, "DELETE FROM lane_reports WHERE run_id = ?1 AND "
                                           "step = ?2", &stmt, err);
        if (status == ORDO_OK) {
            sqlite3_bind_int64(stmt, 1, run_id);
            sqlite3_bind_int64(stmt, 2, step);
            if (sqlite3_step(stmt) != SQLITE_DONE)
                status = ordo__db_error(ledger, err, "clearing composed lanes");
            sqlite3_finalize(stmt);
        }
        if (status == ORDO_OK)
            (*completed)++;
    }
    free(digests);
    return status;
}

static ordo_status record_lanes(ordo_ledger *ledger, int64_t run_id,
                                const ordo_lane_report *reports, size_t count,
                                ordo_record_result *result, size_t *completed, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    int *lanes = malloc((count ? count : 1) * sizeof *lanes);
    if (!lanes)
        return ordo__error(err, ORDO_NOMEM, "out of memory recording lanes");
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        const ordo_lane_report *r = &reports[i];
        if (r->step < 1 || r->step > ORDO_STEP_MAX)
            status = ordo__error(err, ORDO_INVALID, "lane report %zu: step %lld is out of range "
                                                    "(1 to %lld)", i, (long long)r->step,
                                 (long long)ORDO_STEP_MAX);
        else if ((status = lanes_at(ledger, run_id, r->step, &lanes[i], err)) != ORDO_OK)
            break;
        else if (lanes[i] == 0)
            status = ordo__error(err, ORDO_INVALID, "lane report %zu: no segment of the run "
                                                    "covers step %lld", i, (long long)r->step);
        else if (r->lane < 0 || r->lane >= lanes[i])
            status = ordo__error(err, ORDO_INVALID, "lane report %zu: lane %d is not one of the "
                                                    "%d lanes of step %lld",
                                 i, r->lane, lanes[i], (long long)r->step);
    }
    for (size_t i = 0; status == ORDO_OK && i < count; i++)
        status = store(ledger, run_id, &reports[i], result, err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        int again = 0;
        for (size_t j = 0; j < i && !again; j++)
            again = reports[j].step == reports[i].step;
        if (!again)
            status = compose(ledger, run_id, reports[i].step, lanes[i], result, completed, err);
    }
    free(lanes);
    return status;
}

/* Records lane reports in one transaction; see ordo.h. */
ordo_status ordo_lanes_record(ordo_ledger *ledger, int64_t run_id,
                              const ordo_lane_report *reports, size_t count,
                              ordo_record_result *result, size_t *completed, ordo_error *err)
{
    ordo_record_result local;
    size_t done_local;
    if (!result)
        result = &local;
    if (!completed)
        completed = &done_local;
    memset(result, 0, sizeof *result);
    *completed = 0;
    ordo_status status = ordo__run_exists(ledger, run_id, err);
    if (status != ORDO_OK)
        return status;
    if (count > 0 && !reports)
        return ordo__error(err, ORDO_INVALID, "lane reports are missing");
    status = ordo__begin(ledger, err);
    if (status != ORDO_OK)
        return status;
    status = record_lanes(ledger, run_id, reports, count, result, completed, err);
    if (status == ORDO_OK)
        status = ordo__commit(ledger, err);
    else
        ordo__rollback(ledger);
    if (status != ORDO_OK) {
        memset(result, 0, sizeof *result);
        *completed = 0;
        return status;
    }
    return ordo__ok(err);
}
