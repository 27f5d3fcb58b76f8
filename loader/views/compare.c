/* Comparing two runs step by step (shared by the CLI and the service). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"

typedef struct {
    ordo_compare_result *r;
    int64_t run_a, run_b;
    sqlite3_stmt *lanes_stmt; /* lane digests of a step in both runs */
    sqlite3_stmt *block_stmt; /* batch digests of a block's steps */
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

/* Which lanes differ at a divergent step: its two rows' lane digests. */
static ordo_status diverged_lanes(compare_state *c, int64_t step, ordo_error *err)
{
    sqlite3_stmt *stmt = c->lanes_stmt;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(c->run_a, step));
    sqlite3_bind_int64(stmt, 2, ORDO__STEP_KEY(c->run_b, step));
    const void *lanes[2] = {NULL, NULL};
    int bytes[2] = {0, 0};
    void *copy[2] = {NULL, NULL};
    for (int i = 0; i < 2 && sqlite3_step(stmt) == SQLITE_ROW; i++) {
        int which = sqlite3_column_int64(stmt, 0) == ORDO__STEP_KEY(c->run_a, step) ? 0 : 1;
        bytes[which] = sqlite3_column_bytes(stmt, 1);
        copy[which] = bytes[which] ? malloc((size_t)bytes[which]) : NULL;
        if (copy[which])
            memcpy(copy[which], sqlite3_column_blob(stmt, 1), (size_t)bytes[which]);
        lanes[which] = copy[which];
    }
    sqlite3_reset(stmt);
    ordo_status status = note_lanes(c, lanes[0], bytes[0], lanes[1], bytes[1], err);
    free(copy[0]);
    free(copy[1]);
    return status;
}

/* One step both runs recorded, with its two batch digests. */
static ordo_status one_step(compare_state *c, const unsigned char *x, const unsigned char *y,
                            int64_t step, ordo_error *err)
{
    ordo_compare_result *r = c->r;
    r->steps_compared++;
    if (memcmp(x, y, ORDO_DIGEST_SIZE) == 0) {
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
    return diverged_lanes(c, step, err);
}

static int popcount(const unsigned char *bits, size_t n)
{
    int count = 0;
    for (size_t i = 0; i < n; i++)
        count += __builtin_popcount(bits[i]);
    return count;
}

/* The block's recorded steps of one run: numbers and batch digests. */
static int block_steps(compare_state *c, int64_t run, int64_t block, int64_t steps[],
                       unsigned char digests[][ORDO_DIGEST_SIZE])
{
    sqlite3_stmt *stmt = c->block_stmt;
    int64_t first = block * ORDO__BLOCK_STEPS + 1;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(run, first));
    sqlite3_bind_int64(stmt, 2, ORDO__STEP_KEY(run, first + ORDO__BLOCK_STEPS - 1));
    int n = 0;
    while (n < ORDO__BLOCK_STEPS && sqlite3_step(stmt) == SQLITE_ROW)
        if (sqlite3_column_bytes(stmt, 1) == ORDO_DIGEST_SIZE) {
            steps[n] = sqlite3_column_int64(stmt, 0);
            memcpy(digests[n++], sqlite3_column_blob(stmt, 1), ORDO_DIGEST_SIZE);
        }
    sqlite3_reset(stmt);
    return n;
}

/* Two runs' blocks of the same steps: equal range digests over the same
 * steps match whole; otherwise their steps are compared one by one. */
static ordo_status one_block(compare_state *c, sqlite3_stmt *x, sqlite3_stmt *y, int64_t block,
                             ordo_error *err)
{
    const unsigned char *px = sqlite3_column_blob(x, 1), *py = sqlite3_column_blob(y, 1);
    size_t bits = ORDO__BLOCK_STEPS / 8;
    if (sqlite3_column_bytes(x, 1) != (int)bits || sqlite3_column_bytes(y, 1) != (int)bits ||
        sqlite3_column_bytes(x, 2) != ORDO_DIGEST_SIZE ||
        sqlite3_column_bytes(y, 2) != ORDO_DIGEST_SIZE)
        return ordo__error(err, ORDO_NOTLEDGER, "ledger: a step block is damaged");
    if (memcmp(px, py, bits) == 0 &&
        memcmp(sqlite3_column_blob(x, 2), sqlite3_column_blob(y, 2), ORDO_DIGEST_SIZE) == 0) {
        int n = popcount(px, bits);
        c->r->steps_compared += n;
        c->r->matched += n;
        return n ? close_range(c, err) : ORDO_OK;
    }
    int64_t sx[ORDO__BLOCK_STEPS], sy[ORDO__BLOCK_STEPS];
    unsigned char dx[ORDO__BLOCK_STEPS][ORDO_DIGEST_SIZE], dy[ORDO__BLOCK_STEPS][ORDO_DIGEST_SIZE];
    int nx = block_steps(c, c->run_a, block, sx, dx), ny = block_steps(c, c->run_b, block, sy, dy);
    ordo_status status = ORDO_OK;
    for (int i = 0, j = 0; status == ORDO_OK && i < nx && j < ny;) {
        if (sx[i] == sy[j]) {
            status = one_step(c, dx[i], dy[j], sx[i], err);
            i++, j++;
        } else if (sx[i] < sy[j])
            i++;
        else
            j++;
    }
    return status;
}

static ordo_status run_cursor(ordo_ledger *ledger, int64_t run, sqlite3_stmt **stmt,
                              ordo_error *err)
{
    return ordo__prepare_bound(
        ledger, ORDO__SQL_BLOCKS,
        ORDO__BIND(ORDO__INT(run), ORDO__INT(0), ORDO__INT(INT64_C(1099511627775))), stmt, err);
}

/* A merge join over both runs' blocks, in step order: 32 bytes a step are
 * read, and equal blocks compare at once. */
static ordo_status scan(ordo_ledger *ledger, int64_t a, int64_t b, compare_state *c,
                        ordo_error *err)
{
    sqlite3_stmt *x = NULL, *y = NULL;
    c->run_a = a;
    c->run_b = b;
    ordo_status status = ordo__prepare(ledger, ORDO__SQL_LANE_PAIR, &c->lanes_stmt, err);
    if (status == ORDO_OK)
        status = ordo__prepare(ledger, ORDO__SQL_STEP_DIGESTS, &c->block_stmt, err);
    if (status == ORDO_OK)
        status = run_cursor(ledger, a, &x, err);
    if (status == ORDO_OK)
        status = run_cursor(ledger, b, &y, err);
    int rx = x ? sqlite3_step(x) : SQLITE_DONE, ry = y ? sqlite3_step(y) : SQLITE_DONE;
    while (status == ORDO_OK && rx == SQLITE_ROW && ry == SQLITE_ROW) {
        int64_t bx = sqlite3_column_int64(x, 0), by = sqlite3_column_int64(y, 0);
        if (bx == by)
            status = one_block(c, x, y, bx, err);
        if (bx <= by)
            rx = sqlite3_step(x);
        if (by <= bx)
            ry = sqlite3_step(y);
    }
    if (status == ORDO_OK &&
        ((rx != SQLITE_ROW && rx != SQLITE_DONE) || (ry != SQLITE_ROW && ry != SQLITE_DONE)))
        status = ordo__db_error(ledger, err, "comparing runs");
    sqlite3_finalize(x);
    sqlite3_finalize(y);
    sqlite3_finalize(c->lanes_stmt);
    sqlite3_finalize(c->block_stmt);
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
static ordo_status count_conflicts(ordo_ledger *ledger, int64_t run, int64_t *count, int64_t *first,
                                   ordo_error *err)
{
    int64_t found[2] = {0, 0}; /* steps with a conflict; the first of them */
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT COUNT(DISTINCT step), MIN(step) FROM events "
        "WHERE run_id = ?1 AND kind = 'conflict' AND step IS NOT NULL",
        ORDO__BIND(ORDO__INT(run)), ordo__read_int64_pair, found, "counting conflicts", err);
    if (status == ORDO_NOTFOUND)
        return ordo__db_error(ledger, err, "counting conflicts");
    if (status != ORDO_OK)
        return status;
    *count = found[0];
    if (*count && (!*first || found[1] < *first))
        *first = found[1];
    return ORDO_OK;
}

/* The runs' recipe ids and how the recipes differ. */
static ordo_status diff_recipes(ordo_ledger *ledger, const ordo_run_info *a, const ordo_run_info *b,
                                ordo_compare_result *result, ordo_error *err)
{
    ordo__copy(result->recipe_a, sizeof result->recipe_a, a->recipe_id);
    ordo__copy(result->recipe_b, sizeof result->recipe_b, b->recipe_id);
    if (strcmp(a->recipe_id, b->recipe_id) == 0) {
        result->recipe_diff = ordo__strdup("[]");
        return result->recipe_diff ? ORDO_OK
                                   : ordo__error(err, ORDO_NOMEM, "out of memory comparing runs");
    }
    char *ta = NULL, *tb = NULL;
    ordo_status status = ordo_recipe_get(ledger, a->recipe_id, &ta, err);
    if (status == ORDO_OK)
        status = ordo_recipe_get(ledger, b->recipe_id, &tb, err);
    char what[96]; /* a recipe the ledger holds that is not an object is named */
    snprintf(what, sizeof what, "ledger: recipe %s", a->recipe_id);
    if (status == ORDO_OK)
        status = ordo__check_json_object(ta, what, err);
    snprintf(what, sizeof what, "ledger: recipe %s", b->recipe_id);
    if (status == ORDO_OK)
        status = ordo__check_json_object(tb, what, err);
    if (status == ORDO_OK)
        status = ordo_recipe_diff(ta, tb, &result->recipe_diff, err);
    ordo_free(ta);
    ordo_free(tb);
    return status;
}

static ordo_status compare_in_snapshot(ordo_ledger *ledger, int64_t a, int64_t b,
                                       ordo_compare_result *result, ordo_error *err)
{
    ordo_run_info run_a, run_b;
    ordo_status status = ordo__run_get_id(ledger, a, &run_a, err);
    if (status == ORDO_OK)
        status = ordo__run_get_id(ledger, b, &run_b, err);
    if (status != ORDO_OK)
        return status;
    result->comparable = strcmp(run_a.digest_kind, run_b.digest_kind) == 0;
    compare_state c = {.r = result};
    if (result->comparable)
        status = scan(ledger, run_a.id, run_b.id, &c, err);
    if (status == ORDO_OK)
        status = collect_lanes(&c, err);
    if (status == ORDO_OK)
        status = diff_recipes(ledger, &run_a, &run_b, result, err);
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

/* Compares two runs in one snapshot (the counts and the steps agree even
 * while others write); see ordo.h. */
ordo_status ordo_compare_runs(ordo_ledger *ledger, int64_t a, int64_t b,
                              ordo_compare_result *result, ordo_error *err)
{
    memset(result, 0, sizeof *result);
    int started = ordo__read_begin(ledger);
    ordo_status status = compare_in_snapshot(ledger, a, b, result, err);
    ordo__read_end(ledger, started);
    return status;
}

/* Frees ranges, lanes and the recipe diff. */
void ordo_compare_result_free(ordo_compare_result *result)
{
    if (!result)
        return;
    free(result->ranges);
    free(result->lanes);
    ordo_free(result->recipe_diff);
    result->ranges = NULL;
    result->lanes = NULL;
    result->recipe_diff = NULL;
    result->range_count = result->lane_count = 0;
}
