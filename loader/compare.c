/* Comparing two runs step by step (shared by the CLI and the service). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct {
    ordo_compare_result *r;
    int64_t range_from, range_to;
    unsigned char *lane_seen; /* which lanes differed */
    size_t lane_seen_size;
    size_t range_capacity;
} compare_state;

static ordo_status close_range(compare_state *c, ordo_error *err)
{
    if (!c->range_from)
        return ORDO_OK;
    ordo_compare_result *r = c->r;
    if (r->range_count == c->range_capacity) {
        size_t cap = c->range_capacity ? 2 * c->range_capacity : 8;
        int64_t(*grown)[2] = realloc(r->ranges, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory comparing runs");
        r->ranges = grown;
        c->range_capacity = cap;
    }
    r->ranges[r->range_count][0] = c->range_from;
    r->ranges[r->range_count][1] = c->range_to;
    r->range_count++;
    c->range_from = 0;
    return ORDO_OK;
}

static ordo_status note_lanes(compare_state *c, const unsigned char *a, int a_bytes,
                              const unsigned char *b, int b_bytes, ordo_error *err)
{
    if (!a || !b || a_bytes != b_bytes)
        return ORDO_OK;
    size_t lanes = (size_t)a_bytes / ORDO_DIGEST_SIZE;
    if (lanes > c->lane_seen_size) {
        unsigned char *grown = realloc(c->lane_seen, lanes);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory comparing runs");
        memset(grown + c->lane_seen_size, 0, lanes - c->lane_seen_size);
        c->lane_seen = grown;
        c->lane_seen_size = lanes;
    }
    for (size_t l = 0; l < lanes; l++)
        if (memcmp(a + l * ORDO_DIGEST_SIZE, b + l * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) != 0)
            c->lane_seen[l] = 1;
    return ORDO_OK;
}

static ordo_status one_step(compare_state *c, sqlite3_stmt *stmt, ordo_error *err)
{
    ordo_compare_result *r = c->r;
    int64_t step = sqlite3_column_int64(stmt, 0);
    int same = sqlite3_column_bytes(stmt, 1) == ORDO_DIGEST_SIZE &&
               sqlite3_column_bytes(stmt, 2) == ORDO_DIGEST_SIZE &&
               memcmp(sqlite3_column_blob(stmt, 1), sqlite3_column_blob(stmt, 2),
                      ORDO_DIGEST_SIZE) == 0;
    r->steps_compared++;
    if (same) {
        r->matched++;
        return close_range(c, err);
    }
    r->diverged++;
    if (!r->first_divergent_step)
        r->first_divergent_step = step;
    if (c->range_from && step == c->range_to + 1) {
        c->range_to = step;
    } else {
        ordo_status status = close_range(c, err);
        if (status != ORDO_OK)
            return status;
        c->range_from = c->range_to = step;
    }
    return note_lanes(c, sqlite3_column_blob(stmt, 3), sqlite3_column_bytes(stmt, 3),
                      sqlite3_column_blob(stmt, 4), sqlite3_column_bytes(stmt, 4), err);
}

static ordo_status scan(ordo_ledger *ledger, int64_t a, int64_t b, compare_state *c,
                        ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT x.step, x.batch_digest, y.batch_digest, x.lane_digests, y.lane_digests "
        "FROM steps x JOIN steps y ON y.key = (?2 << 40) + (x.key & 1099511627775) "
        "WHERE x.key " ORDO__SQL_STEP_KEYS("?1") " ORDER BY x.key",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, a);
    sqlite3_bind_int64(stmt, 2, b);
    int rc;
    while (status == ORDO_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
        status = one_step(c, stmt, err);
    if (status == ORDO_OK && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "comparing runs");
    sqlite3_finalize(stmt);
    if (status == ORDO_OK)
        status = close_range(c, err);
    return status;
}

static ordo_status collect_lanes(compare_state *c, ordo_error *err)
{
    ordo_compare_result *r = c->r;
    for (size_t l = 0; l < c->lane_seen_size; l++)
        r->lane_count += c->lane_seen[l];
    if (!r->lane_count)
        return ORDO_OK;
    r->lanes = malloc(r->lane_count * sizeof *r->lanes);
    if (!r->lanes)
        return ordo__error(err, ORDO_NOMEM, "out of memory comparing runs");
    size_t n = 0;
    for (size_t l = 0; l < c->lane_seen_size; l++)
        if (c->lane_seen[l])
            r->lanes[n++] = (int)l;
    return ORDO_OK;
}

/* Distinct steps of a run with a conflict event, and the first of them. */
static ordo_status count_conflicts(ordo_ledger *ledger, int64_t run, int64_t *count,
                                   int64_t *first, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT COUNT(DISTINCT step), MIN(step) FROM events "
        "WHERE run_id = ?1 AND kind = 'conflict' AND step IS NOT NULL",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, run);
    if (sqlite3_step(stmt) == SQLITE_ROW) {
        *count = sqlite3_column_int64(stmt, 0);
        int64_t step = sqlite3_column_int64(stmt, 1);
        if (*count && (!*first || step < *first))
            *first = step;
    } else {
        status = ordo__db_error(ledger, err, "counting conflicts");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* Compares two runs; see ordo.h. */
ordo_status ordo_compare_runs(ordo_ledger *ledger, const char *a, const char *b,
                              ordo_compare_result *result, ordo_error *err)
{
    memset(result, 0, sizeof *result);
    ordo_run_info run_a, run_b;
    ordo_status status = ordo_run_get(ledger, a, &run_a, err);
    if (status == ORDO_OK)
        status = ordo_run_get(ledger, b, &run_b, err);
    if (status != ORDO_OK)
        return status;
    result->comparable = strcmp(run_a.digest_kind, run_b.digest_kind) == 0;
    compare_state c = {result, 0, 0, NULL, 0, 0};
    if (result->comparable)
        status = scan(ledger, run_a.id, run_b.id, &c, err);
    if (status == ORDO_OK)
        status = collect_lanes(&c, err);
    if (status == ORDO_OK)
        status = count_conflicts(ledger, run_a.id, &result->conflicts_a,
                                 &result->first_conflict_step, err);
    if (status == ORDO_OK)
        status = count_conflicts(ledger, run_b.id, &result->conflicts_b,
                                 &result->first_conflict_step, err);
    free(c.lane_seen);
    if (status != ORDO_OK) {
        ordo_compare_result_free(result);
        return status;
    }
    result->only_a = run_a.steps - result->steps_compared;
    result->only_b = run_b.steps - result->steps_compared;
    return ordo__ok(err);
}

/* Frees ranges and lanes. */
void ordo_compare_result_free(ordo_compare_result *result)
{
    free(result->ranges);
    free(result->lanes);
    result->ranges = NULL;
    result->lanes = NULL;
    result->range_count = result->lane_count = 0;
}
