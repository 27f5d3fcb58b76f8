/* Lane digests reported one lane at a time: kept until every lane of a
 * step is in, then composed into the step's batch digest (docs/recipe.md,
 * "How a lane's data is decided").
 *
 * Cost: the reports are sorted by (step, lane) once and taken step by
 * step, each step reading its pending rows once, and every step a request
 * completes is recorded by one call: O(n log n) in the reports, whatever
 * their order. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

/* One segment of the run: where it starts and which rank owns each lane. */
typedef struct {
    int64_t start_step;
    int lanes;
    int *owner; /* [lanes] */
} plan;

typedef struct {
    plan *plans;
    size_t count;
} plans;

static void plans_free(plans *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->plans[i].owner);
    free(p->plans);
}

/* Parses a segment's lane plan ([[lanes of rank 0], …]) into owners. */
static int *owners_of(const char *text, int lanes)
{
    json_t *lane_plan = json_loads(text ? text : "", 0, NULL);
    int *owner = malloc((size_t)lanes * sizeof *owner);
    for (int l = 0; owner && l < lanes; l++)
        owner[l] = -1;
    size_t rank, i;
    json_t *owned, *lane;
    json_array_foreach(lane_plan, rank, owned)
    {
        json_array_foreach(owned, i, lane)
        {
            json_int_t l = json_integer_value(lane);
            if (owner && l >= 0 && l < lanes)
                owner[l] = (int)rank;
        }
    }
    json_decref(lane_plan);
    return owner;
}

static ordo_status read_plan(sqlite3_stmt *row, void *context, ordo_error *err)
{
    plans *out = context;
    plan *grown = realloc(out->plans, (out->count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading lane plans");
    out->plans = grown;
    plan *p = &grown[out->count];
    p->start_step = sqlite3_column_int64(row, 0);
    p->lanes = sqlite3_column_int(row, 1);
    p->owner = p->lanes > 0 ? owners_of((const char *)sqlite3_column_text(row, 2), p->lanes) : NULL;
    if (!p->owner)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading lane plans");
    out->count++;
    return ORDO_OK;
}

static ordo_status load_plans(ordo_ledger *ledger, int64_t run_id, plans *out, ordo_error *err)
{
    return ordo__sql_each(ledger,
                          "SELECT start_step, lanes, lane_plan FROM segments WHERE run_id = ?1 "
                          "ORDER BY start_step",
                          ORDO__BIND(ORDO__INT(run_id)), read_plan, out, "reading lane plans", err);
}

/* The segment covering `step` (the latest starting at or before it). */
static const plan *plan_at(const plans *p, int64_t step)
{
    size_t lo = 0, hi = p->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->plans[mid].start_step <= step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &p->plans[lo - 1] : NULL;
}

/* A report is refused before anything is written when no segment covers
 * its step, its lane is not one of the segment's, or another rank owns it. */
static ordo_status check_report(const plans *p, const ordo_lane_report *r, size_t i,
                                ordo_error *err)
{
    const plan *segment = r->step >= 1 && r->step <= ORDO_STEP_MAX ? plan_at(p, r->step) : NULL;
    if (r->step < 1 || r->step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID,
                           "lane report %zu: step %lld is out of range (1 "
                           "to %lld)",
                           i, (long long)r->step, (long long)ORDO_STEP_MAX);
    if (!segment)
        return ordo__error(err, ORDO_INVALID,
                           "lane report %zu: no segment of the run covers "
                           "step %lld",
                           i, (long long)r->step);
    if (r->lane < 0 || r->lane >= segment->lanes)
        return ordo__error(err, ORDO_INVALID,
                           "lane report %zu: lane %d is not one of the %d "
                           "lanes of step %lld",
                           i, r->lane, segment->lanes, (long long)r->step);
    if (segment->owner[r->lane] != r->rank)
        return ordo__error(err, ORDO_INVALID,
                           "lane report %zu: lane %d of step %lld belongs to "
                           "rank %d under the segment's lane plan, not to "
                           "rank %d",
                           i, r->lane, (long long)r->step, segment->owner[r->lane], r->rank);
    return ORDO_OK;
}

/* The positions 0..count-1, to be sorted. */
static size_t *positions(size_t count)
{
    size_t *order = malloc((count ? count : 1) * sizeof *order);
    for (size_t i = 0; order && i < count; i++)
        order[i] = i;
    return order;
}

/* (step, lane, position) order: stable, and a merge sort needs no global
 * context (qsort's comparator has none in C11). */
static int before(const ordo_lane_report *reports, size_t a, size_t b)
{
    const ordo_lane_report *x = &reports[a], *y = &reports[b];
    return x->step != y->step ? x->step < y->step : x->lane != y->lane ? x->lane < y->lane : a < b;
}

static void merge_sort(const ordo_lane_report *reports, size_t *order, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t half = n / 2;
    merge_sort(reports, order, tmp, half);
    merge_sort(reports, order + half, tmp, n - half);
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = before(reports, order[j], order[i]) ? order[j++] : order[i++];
    while (i < half)
        tmp[k++] = order[i++];
    while (j < n)
        tmp[k++] = order[j++];
    memcpy(order, tmp, n * sizeof *order);
}

/* A lane reported with another digest than the one that stands. */
static ordo_status lane_conflict(ordo_ledger *ledger, int64_t run_id, int64_t step, int lane,
                                 const unsigned char *standing, const unsigned char *reported,
                                 ordo_record_result *result, ordo_error *err)
{
    char detail[200], a[ORDO_DIGEST_HEX_SIZE], b[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(standing, a);
    ordo_digest_to_hex(reported, b);
    snprintf(detail, sizeof detail, "{\"lane\":%d,\"recorded\":\"%s\",\"reported\":\"%s\"}", lane,
             a, b);
    result->conflicts++;
    if (!result->first_conflict_step || step < result->first_conflict_step)
        result->first_conflict_step = step;
    return ordo__conflict(ledger, run_id, step, reported, detail, err);
}

/* What one call works with: statements, the step being taken, the steps
 * completed so far. */
typedef struct {
    ordo_ledger *ledger;
    int64_t run_id;
    sqlite3_stmt *recorded, *pending, *insert, *clear;
    unsigned char *lanes; /* [L × 32] the step's lanes as known */
    unsigned char *known; /* [L] 1: pending before, 2: new in this call */
    int lanes_cap;
    ordo_step *done;           /* steps completed */
    unsigned char *done_lanes; /* their lane digests, back to back */
    size_t done_count, done_lane_bytes, done_lane_cap;
    size_t pending_added;
} taking;

static ordo_status prepare_all(taking *t, ordo_error *err)
{
    ordo_status status = ordo__prepare(t->ledger, "SELECT lane_digests FROM steps WHERE key = ?1",
                                       &t->recorded, err);
    if (status == ORDO_OK)
        status = ordo__prepare(t->ledger,
                               "SELECT lane, digest FROM lane_reports WHERE run_id = "
                               "?1 AND step = ?2",
                               &t->pending, err);
    if (status == ORDO_OK)
        status = ordo__prepare(t->ledger,
                               "INSERT INTO lane_reports (run_id, step, lane, digest) "
                               "VALUES (?1, ?2, ?3, ?4)",
                               &t->insert, err);
    if (status == ORDO_OK)
        status = ordo__prepare(t->ledger,
                               "DELETE FROM lane_reports WHERE run_id = ?1 AND step = "
                               "?2",
                               &t->clear, err);
    return status;
}

static void finalize_all(taking *t)
{
    sqlite3_finalize(t->recorded);
    sqlite3_finalize(t->pending);
    sqlite3_finalize(t->insert);
    sqlite3_finalize(t->clear);
    free(t->lanes);
    free(t->known);
    free(t->done);
    free(t->done_lanes);
}

/* Drops the pending rows of a step. */
static ordo_status clear_pending(taking *t, int64_t step, ordo_error *err)
{
    sqlite3_bind_int64(t->clear, 1, t->run_id);
    sqlite3_bind_int64(t->clear, 2, step);
    int rc = sqlite3_step(t->clear);
    sqlite3_reset(t->clear);
    return rc == SQLITE_DONE ? ORDO_OK : ordo__db_error(t->ledger, err, "clearing lane reports");
}

/* The step is recorded with `count` lane digests: each report and each
 * pending row is checked against them (a lane that differs is a
 * conflict), and the pending rows go. */
static ordo_status against_recorded(taking *t, const ordo_lane_report *reports, const size_t *group,
                                    size_t n, const unsigned char *recorded, int count,
                                    ordo_record_result *result, ordo_error *err)
{
    int64_t step = reports[group[0]].step;
    ordo_status status = ORDO_OK;
    for (size_t k = 0; status == ORDO_OK && k < n; k++) {
        const ordo_lane_report *r = &reports[group[k]];
        if (r->lane >= count)
            status = ordo__error(err, ORDO_INVALID,
                                 "lane %d is not one of the %d lanes step "
                                 "%lld was recorded with",
                                 r->lane, count, (long long)step);
        else if (memcmp(recorded + (size_t)r->lane * ORDO_DIGEST_SIZE, r->digest,
                        ORDO_DIGEST_SIZE) != 0)
            status = lane_conflict(t->ledger, t->run_id, step, r->lane,
                                   recorded + (size_t)r->lane * ORDO_DIGEST_SIZE, r->digest, result,
                                   err);
        else
            result->unchanged++;
    }
    for (int lane = 0; status == ORDO_OK && lane < t->lanes_cap; lane++)
        if (t->known[lane] == 1 && lane < count &&
            memcmp(recorded + (size_t)lane * ORDO_DIGEST_SIZE,
                   t->lanes + (size_t)lane * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) != 0)
            status = lane_conflict(t->ledger, t->run_id, step, lane,
                                   recorded + (size_t)lane * ORDO_DIGEST_SIZE,
                                   t->lanes + (size_t)lane * ORDO_DIGEST_SIZE, result, err);
    return status == ORDO_OK ? clear_pending(t, step, err) : status;
}

/* Reads the step's pending rows into t->lanes / t->known (known = 1). */
static ordo_status read_pending(taking *t, int64_t step, int lanes, int *pending, ordo_error *err)
{
    memset(t->known, 0, (size_t)lanes);
    *pending = 0;
    sqlite3_bind_int64(t->pending, 1, t->run_id);
    sqlite3_bind_int64(t->pending, 2, step);
    int rc;
    while ((rc = sqlite3_step(t->pending)) == SQLITE_ROW) {
        int lane = sqlite3_column_int(t->pending, 0);
        if (lane < 0 || lane >= lanes || sqlite3_column_bytes(t->pending, 1) != ORDO_DIGEST_SIZE)
            continue; /* of another segment's shape: never composes */
        memcpy(t->lanes + (size_t)lane * ORDO_DIGEST_SIZE, sqlite3_column_blob(t->pending, 1),
               ORDO_DIGEST_SIZE);
        t->known[lane] = 1;
        (*pending)++;
    }
    sqlite3_reset(t->pending);
    return rc == SQLITE_DONE ? ORDO_OK : ordo__db_error(t->ledger, err, "reading lane reports");
}

/* Keeps a completed step (its lanes copied) for the one recording call. */
static ordo_status complete(taking *t, int64_t step, int lanes, ordo_error *err)
{
    size_t bytes = (size_t)lanes * ORDO_DIGEST_SIZE;
    if (t->done_lane_bytes + bytes > t->done_lane_cap) {
        size_t cap = t->done_lane_cap ? t->done_lane_cap : 4096;
        while (cap < t->done_lane_bytes + bytes)
            cap *= 2;
        unsigned char *grown = realloc(t->done_lanes, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory composing steps");
        t->done_lanes = grown;
        t->done_lane_cap = cap;
    }
    memcpy(t->done_lanes + t->done_lane_bytes, t->lanes, bytes);
    ordo_step *s = &t->done[t->done_count++];
    ordo_step_init(s, step);
    s->lane_digests = (const unsigned char *)(uintptr_t)t->done_lane_bytes; /* offset for now */
    s->lane_count = lanes;
    t->done_lane_bytes += bytes;
    return ORDO_OK;
}

/* New lanes of a step that is not complete wait as pending rows. */
static ordo_status add_pending(taking *t, int64_t step, int lanes, ordo_error *err)
{
    for (int lane = 0; lane < lanes; lane++) {
        if (t->known[lane] != 2)
            continue;
        sqlite3_bind_int64(t->insert, 1, t->run_id);
        sqlite3_bind_int64(t->insert, 2, step);
        sqlite3_bind_int(t->insert, 3, lane);
        sqlite3_bind_blob(t->insert, 4, t->lanes + (size_t)lane * ORDO_DIGEST_SIZE,
                          ORDO_DIGEST_SIZE, SQLITE_STATIC);
        int rc = sqlite3_step(t->insert);
        sqlite3_reset(t->insert);
        if (rc != SQLITE_DONE)
            return ordo__db_error(t->ledger, err, "storing a lane digest");
        t->pending_added++;
    }
    return ORDO_OK;
}

/* The recorded step's lane digests (a copy, *count of them) or NULL with
 * *count 0 when it is not recorded or was recorded without them. */
static unsigned char *recorded_lanes(taking *t, int64_t step, int *count, ordo_error *err,
                                     ordo_status *status)
{
    unsigned char *copy = NULL;
    *count = 0;
    sqlite3_bind_int64(t->recorded, 1, ORDO__STEP_KEY(t->run_id, step));
    int rc = sqlite3_step(t->recorded);
    int bytes = rc == SQLITE_ROW ? sqlite3_column_bytes(t->recorded, 0) : 0;
    if (bytes > 0 && bytes % ORDO_DIGEST_SIZE == 0 && (copy = malloc((size_t)bytes))) {
        memcpy(copy, sqlite3_column_blob(t->recorded, 0), (size_t)bytes);
        *count = bytes / ORDO_DIGEST_SIZE;
    } else if (bytes > 0) {
        *status = ordo__error(err, ORDO_NOMEM, "out of memory reading a step");
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        *status = ordo__db_error(t->ledger, err, "reading a recorded step");
    }
    sqlite3_reset(t->recorded);
    return copy;
}

/* Takes the reports of one step (group[0..n), sorted by lane): against
 * the recorded step, or with its pending rows, completing it when every
 * lane is in. A step recorded without lane digests takes its lanes as
 * pending ones: composing them then checks its batch digest. */
static ordo_status take_step(taking *t, const ordo_lane_report *reports, const size_t *group,
                             size_t n, int lanes, ordo_record_result *result, ordo_error *err)
{
    int64_t step = reports[group[0]].step;
    int pending = 0, count = 0;
    ordo_status status = read_pending(t, step, lanes, &pending, err);
    unsigned char *recorded =
        status == ORDO_OK ? recorded_lanes(t, step, &count, err, &status) : NULL;
    if (recorded || status != ORDO_OK) {
        if (status == ORDO_OK)
            status = against_recorded(t, reports, group, n, recorded, count, result, err);
        free(recorded);
        return status;
    }
    int known = pending;
    for (size_t k = 0; status == ORDO_OK && k < n; k++) {
        const ordo_lane_report *r = &reports[group[k]];
        unsigned char *slot = t->lanes + (size_t)r->lane * ORDO_DIGEST_SIZE;
        if (!t->known[r->lane]) {
            memcpy(slot, r->digest, ORDO_DIGEST_SIZE);
            t->known[r->lane] = 2;
            known++;
        } else if (memcmp(slot, r->digest, ORDO_DIGEST_SIZE) != 0) {
            status =
                lane_conflict(t->ledger, t->run_id, step, r->lane, slot, r->digest, result, err);
        }
    }
    if (status != ORDO_OK)
        return status;
    if (known < lanes)
        return add_pending(t, step, lanes, err);
    status = complete(t, step, lanes, err);
    return status == ORDO_OK && pending ? clear_pending(t, step, err) : status;
}

/* Refuses a call that would leave the run with more pending reports than
 * the library keeps. */
static ordo_status check_pending_bound(taking *t, ordo_error *err)
{
    if (!t->pending_added)
        return ORDO_OK;
    int64_t held = 0;
    ordo_status status = ordo__sql_row(
        t->ledger, "SELECT count(*) FROM lane_reports WHERE run_id = ?1",
        ORDO__BIND(ORDO__INT(t->run_id)), ordo__read_int64, &held, "counting lane reports", err);
    if (status == ORDO_NOTFOUND)
        return ordo__db_error(t->ledger, err, "counting lane reports");
    if (status != ORDO_OK)
        return status;
    /* BUSY, not INVALID: the reports are good, the lanes they wait for are
     * late; a client tries again once those have come in */
    if (held > ORDO_LANE_REPORTS_PENDING_MAX)
        return ordo__error(err, ORDO_BUSY,
                           "run %lld would hold %lld lane reports of incomplete steps; at most "
                           "%d are kept (the ranks owning the missing lanes must report them, "
                           "or a resume drops those of the steps it replays)",
                           (long long)t->run_id, (long long)held, ORDO_LANE_REPORTS_PENDING_MAX);
    return ORDO_OK;
}

/* Takes every step's group in order, then records the completed steps. */
static ordo_status take_all(taking *t, const plans *p, const ordo_lane_report *reports,
                            const size_t *order, size_t count, ordo_record_result *result,
                            size_t *completed, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    for (size_t i = 0; status == ORDO_OK && i < count;) {
        size_t j = i;
        while (j < count && reports[order[j]].step == reports[order[i]].step)
            j++;
        int lanes = plan_at(p, reports[order[i]].step)->lanes;
        status = take_step(t, reports, order + i, j - i, lanes, result, err);
        i = j;
    }
    for (size_t k = 0; k < t->done_count; k++) /* offsets become pointers */
        t->done[k].lane_digests = t->done_lanes + (uintptr_t)t->done[k].lane_digests;
    for (size_t k = 0; k < t->done_count; k++)
        ordo_batch_digest(t->done[k].lane_digests, t->done[k].lane_count, t->done[k].batch_digest);
    if (status == ORDO_OK && t->done_count)
        status =
            ordo__steps_record_locked(t->ledger, t->run_id, t->done, t->done_count, result, err);
    if (status == ORDO_OK)
        *completed = t->done_count;
    return status == ORDO_OK ? check_pending_bound(t, err) : status;
}

static int widest(const plans *p)
{
    int lanes = 1;
    for (size_t i = 0; i < p->count; i++)
        lanes = p->plans[i].lanes > lanes ? p->plans[i].lanes : lanes;
    return lanes;
}

static ordo_status record_lanes(ordo_ledger *ledger, int64_t run_id,
                                const ordo_lane_report *reports, size_t count,
                                ordo_record_result *result, size_t *completed, ordo_error *err)
{
    plans p = {0};
    taking t = {.ledger = ledger, .run_id = run_id};
    size_t *order = NULL, *tmp = NULL;
    ordo_status status = load_plans(ledger, run_id, &p, err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++)
        status = check_report(&p, &reports[i], i, err);
    if (status == ORDO_OK) {
        t.lanes_cap = widest(&p);
        order = positions(count);
        tmp = malloc((count ? count : 1) * sizeof *tmp);
        t.lanes = malloc((size_t)t.lanes_cap * ORDO_DIGEST_SIZE);
        t.known = malloc((size_t)t.lanes_cap);
        t.done = malloc((count ? count : 1) * sizeof *t.done);
        if (!order || !tmp || !t.lanes || !t.known || !t.done)
            status =
                ordo__error(err, ORDO_NOMEM, "out of memory recording %zu lane reports", count);
    }
    if (status == ORDO_OK) {
        merge_sort(reports, order, tmp, count);
        status = prepare_all(&t, err);
    }
    if (status == ORDO_OK)
        status = take_all(&t, &p, reports, order, count, result, completed, err);
    finalize_all(&t);
    free(order);
    free(tmp);
    plans_free(&p);
    return status;
}

/* What ordo_lanes_record records. */
typedef struct {
    int64_t run_id;
    const ordo_lane_report *reports;
    size_t count;
    ordo_record_result *result;
    size_t *completed;
} lanes_recording;

static ordo_status lanes_locked(ordo_ledger *ledger, void *context, ordo_error *err)
{
    const lanes_recording *r = context;
    return record_lanes(ledger, r->run_id, r->reports, r->count, r->result, r->completed, err);
}

/* Records lane reports in one transaction; see ordo.h. */
ordo_status ordo_lanes_record(ordo_ledger *ledger, int64_t run_id, const ordo_lane_report *reports,
                              size_t count, ordo_record_result *result, size_t *completed,
                              ordo_error *err)
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
    status = ordo__transaction(ledger, lanes_locked,
                               &(lanes_recording){run_id, reports, count, result, completed}, err);
    if (status != ORDO_OK) {
        memset(result, 0, sizeof *result);
        *completed = 0;
        return status;
    }
    return ordo__ok(err);
}

/* A step recorded whole and where it is in the caller's array. */
typedef struct {
    int64_t step;
    size_t index;
} step_at;

static int by_step(const void *a, const void *b)
{
    int64_t x = ((const step_at *)a)->step, y = ((const step_at *)b)->step;
    return (x > y) - (x < y);
}

/* The index in the caller's steps of step `step`, or -1. */
static long find_step(const step_at *sorted, size_t count, int64_t step)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid].step == step)
            return (long)sorted[mid].index;
        if (sorted[mid].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Checks one pending row against the step recorded whole. */
static ordo_status settle_row(ordo_ledger *ledger, int64_t run_id, const ordo_step *s, int lane,
                              const unsigned char *digest, ordo_record_result *result,
                              ordo_error *err)
{
    if (!s->lane_digests || lane >= s->lane_count)
        return ORDO_OK;
    const unsigned char *standing = s->lane_digests + (size_t)lane * ORDO_DIGEST_SIZE;
    if (memcmp(standing, digest, ORDO_DIGEST_SIZE) == 0)
        return ORDO_OK;
    return lane_conflict(ledger, run_id, s->step, lane, standing, digest, result, err);
}

/* Settles pending lane reports of steps recorded whole; see sql.h. */
ordo_status ordo__lanes_settle(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                               size_t count, ordo_record_result *result, ordo_error *err)
{
    if (count == 0)
        return ORDO_OK;
    step_at *sorted = malloc(count * sizeof *sorted);
    if (!sorted)
        return ordo__error(err, ORDO_NOMEM, "out of memory settling lane reports");
    for (size_t i = 0; i < count; i++)
        sorted[i] = (step_at){steps[i].step, i};
    qsort(sorted, count, sizeof *sorted, by_step);
    sqlite3_stmt *rows = NULL, *clear = NULL;
    ordo_status status = ordo__prepare(ledger,
                                       "SELECT step, lane, digest FROM lane_reports "
                                       "WHERE run_id = ?1 AND step BETWEEN ?2 AND ?3",
                                       &rows, err);
    int64_t first = sorted[0].step, last = sorted[count - 1].step;
    int rc = SQLITE_DONE, found = 0;
    if (status == ORDO_OK) {
        sqlite3_bind_int64(rows, 1, run_id);
        sqlite3_bind_int64(rows, 2, first);
        sqlite3_bind_int64(rows, 3, last);
        while (status == ORDO_OK && (rc = sqlite3_step(rows)) == SQLITE_ROW) {
            long i = find_step(sorted, count, sqlite3_column_int64(rows, 0));
            if (i < 0 || sqlite3_column_bytes(rows, 2) != ORDO_DIGEST_SIZE)
                continue;
            found = 1;
            status = settle_row(ledger, run_id, &steps[i], sqlite3_column_int(rows, 1),
                                sqlite3_column_blob(rows, 2), result, err);
        }
        if (status == ORDO_OK && rc != SQLITE_DONE)
            status = ordo__db_error(ledger, err, "reading pending lane reports");
    }
    sqlite3_finalize(rows);
    /* the common case (no step of the call had pending reports) costs one
     * index lookup; the delete is prepared only when there are some */
    if (status == ORDO_OK && found)
        status = ordo__prepare(ledger,
                               "DELETE FROM lane_reports WHERE run_id = ?1 AND step "
                               "BETWEEN ?2 AND ?3",
                               &clear, err);
    /* steps of the range this call did not record keep their rows */
    for (size_t k = 0; status == ORDO_OK && found && k < count; k++) {
        int64_t step = sorted[k].step;
        sqlite3_bind_int64(clear, 1, run_id);
        sqlite3_bind_int64(clear, 2, step);
        sqlite3_bind_int64(clear, 3, step);
        if (sqlite3_step(clear) != SQLITE_DONE)
            status = ordo__db_error(ledger, err, "clearing lane reports");
        sqlite3_reset(clear);
    }
    sqlite3_finalize(clear);
    free(sorted);
    return status;
}
