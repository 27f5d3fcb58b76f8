/* Comparing two runs for display: per bucket of steps, how many matched,
 * diverged or are missing from one run, and which lanes differ. A bucket
 * holding any divergent step reports it: downsampling never hides one. */
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"

typedef struct {
    ordo_ledger *ledger;
    int64_t run[2], from, to, width;
    ordo_compare_bucket *buckets;
    size_t count;
    unsigned char *lane_map; /* count × lane_bytes */
    int lanes, lane_bytes;
    sqlite3_stmt *block_stmt, *lanes_stmt;
} bucket_state;

static ordo_compare_bucket *bucket_of(bucket_state *s, int64_t step)
{
    if (step < s->from || step > s->to)
        return NULL;
    return &s->buckets[(step - s->from) / s->width];
}

/* A run's steps of one block, in step order. */
static int block_steps(bucket_state *s, int64_t run, int64_t block, int64_t steps[],
                       unsigned char digests[][ORDO_DIGEST_SIZE])
{
    int64_t first = block * ORDO__BLOCK_STEPS + 1;
    sqlite3_bind_int64(s->block_stmt, 1, ORDO__STEP_KEY(run, first));
    sqlite3_bind_int64(s->block_stmt, 2, ORDO__STEP_KEY(run, first + ORDO__BLOCK_STEPS - 1));
    int n = 0;
    while (n < ORDO__BLOCK_STEPS && sqlite3_step(s->block_stmt) == SQLITE_ROW)
        if (sqlite3_column_bytes(s->block_stmt, 1) == ORDO_DIGEST_SIZE) {
            steps[n] = sqlite3_column_int64(s->block_stmt, 0);
            memcpy(digests[n++], sqlite3_column_blob(s->block_stmt, 1), ORDO_DIGEST_SIZE);
        }
    sqlite3_reset(s->block_stmt);
    return n;
}

/* Marks the lanes that differ at a divergent step in its bucket's map. */
static void mark_lanes(bucket_state *s, int64_t step, ordo_compare_bucket *b)
{
    sqlite3_stmt *stmt = s->lanes_stmt;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(s->run[0], step));
    sqlite3_bind_int64(stmt, 2, ORDO__STEP_KEY(s->run[1], step));
    unsigned char *lanes[2] = {NULL, NULL};
    int bytes[2] = {0, 0};
    for (int i = 0; i < 2 && sqlite3_step(stmt) == SQLITE_ROW; i++) {
        int which = sqlite3_column_int64(stmt, 0) == ORDO__STEP_KEY(s->run[0], step) ? 0 : 1;
        bytes[which] = sqlite3_column_bytes(stmt, 1);
        lanes[which] = bytes[which] ? malloc((size_t)bytes[which]) : NULL;
        if (lanes[which])
            memcpy(lanes[which], sqlite3_column_blob(stmt, 1), (size_t)bytes[which]);
    }
    sqlite3_reset(stmt);
    unsigned char *row = s->lane_map + (size_t)(b - s->buckets) * (size_t)s->lane_bytes;
    if (lanes[0] && lanes[1] && bytes[0] == bytes[1] && bytes[0] / ORDO_DIGEST_SIZE == s->lanes)
        for (int l = 0; l < s->lanes; l++)
            if (memcmp(lanes[0] + (size_t)l * ORDO_DIGEST_SIZE,
                       lanes[1] + (size_t)l * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) != 0)
                row[l / 8] |= (unsigned char)(1u << (l % 8));
    free(lanes[0]);
    free(lanes[1]);
}

/* A block both runs have: equal range digests over the same steps match
 * whole; otherwise step by step. */
static void both(bucket_state *s, sqlite3_stmt *x, sqlite3_stmt *y, int64_t block)
{
    const unsigned char *px = sqlite3_column_blob(x, 1), *py = sqlite3_column_blob(y, 1);
    int ok = sqlite3_column_bytes(x, 1) == ORDO__BLOCK_STEPS / 8 &&
             sqlite3_column_bytes(y, 1) == ORDO__BLOCK_STEPS / 8;
    if (ok && memcmp(px, py, ORDO__BLOCK_STEPS / 8) == 0 &&
        sqlite3_column_bytes(x, 2) == ORDO_DIGEST_SIZE &&
        sqlite3_column_bytes(y, 2) == ORDO_DIGEST_SIZE &&
        memcmp(sqlite3_column_blob(x, 2), sqlite3_column_blob(y, 2), ORDO_DIGEST_SIZE) == 0) {
        for (int slot = 0; slot < ORDO__BLOCK_STEPS; slot++)
            if (px[slot / 8] >> (slot % 8) & 1) {
                ordo_compare_bucket *b = bucket_of(s, block * ORDO__BLOCK_STEPS + slot + 1);
                if (b)
                    b->matched++;
            }
        return;
    }
    int64_t sx[ORDO__BLOCK_STEPS], sy[ORDO__BLOCK_STEPS];
    unsigned char dx[ORDO__BLOCK_STEPS][ORDO_DIGEST_SIZE], dy[ORDO__BLOCK_STEPS][ORDO_DIGEST_SIZE];
    int nx = block_steps(s, s->run[0], block, sx, dx),
        ny = block_steps(s, s->run[1], block, sy, dy);
    for (int i = 0, j = 0; i < nx || j < ny;) {
        int64_t step = j >= ny || (i < nx && sx[i] < sy[j]) ? sx[i] : sy[j];
        ordo_compare_bucket *b = bucket_of(s, step);
        if (i < nx && j < ny && sx[i] == sy[j]) {
            int same = memcmp(dx[i], dy[j], ORDO_DIGEST_SIZE) == 0;
            if (b && same)
                b->matched++;
            else if (b) {
                b->diverged++;
                mark_lanes(s, step, b);
            }
            i++, j++;
        } else {
            if (b)
                b->missing++;
            if (i < nx && sx[i] == step)
                i++;
            else
                j++;
        }
    }
}

/* A block only one run has: its steps are missing from the other. */
static void one_side(bucket_state *s, sqlite3_stmt *stmt, int64_t block)
{
    const unsigned char *p = sqlite3_column_blob(stmt, 1);
    if (sqlite3_column_bytes(stmt, 1) != ORDO__BLOCK_STEPS / 8)
        return;
    for (int slot = 0; slot < ORDO__BLOCK_STEPS; slot++)
        if (p[slot / 8] >> (slot % 8) & 1) {
            ordo_compare_bucket *b = bucket_of(s, block * ORDO__BLOCK_STEPS + slot + 1);
            if (b)
                b->missing++;
        }
}

static ordo_status blocks_cursor(bucket_state *s, int64_t run, sqlite3_stmt **stmt, ordo_error *err)
{
    return ordo__prepare_bound(s->ledger, ORDO__SQL_BLOCKS,
                               ORDO__BIND(ORDO__INT(run),
                                          ORDO__INT((s->from - 1) / ORDO__BLOCK_STEPS),
                                          ORDO__INT((s->to - 1) / ORDO__BLOCK_STEPS)),
                               stmt, err);
}

static ordo_status merge(bucket_state *s, ordo_error *err)
{
    sqlite3_stmt *x = NULL, *y = NULL;
    ordo_status status = ordo__prepare(s->ledger, ORDO__SQL_STEP_DIGESTS, &s->block_stmt, err);
    if (status == ORDO_OK)
        status = ordo__prepare(s->ledger, ORDO__SQL_LANE_PAIR, &s->lanes_stmt, err);
    if (status == ORDO_OK)
        status = blocks_cursor(s, s->run[0], &x, err);
    if (status == ORDO_OK)
        status = blocks_cursor(s, s->run[1], &y, err);
    int rx = x ? sqlite3_step(x) : SQLITE_DONE, ry = y ? sqlite3_step(y) : SQLITE_DONE;
    while (status == ORDO_OK && (rx == SQLITE_ROW || ry == SQLITE_ROW)) {
        int64_t bx = rx == SQLITE_ROW ? sqlite3_column_int64(x, 0) : INT64_MAX;
        int64_t by = ry == SQLITE_ROW ? sqlite3_column_int64(y, 0) : INT64_MAX;
        if (bx == by)
            both(s, x, y, bx);
        else if (bx < by)
            one_side(s, x, bx);
        else
            one_side(s, y, by);
        if (bx <= by)
            rx = sqlite3_step(x);
        if (by <= bx)
            ry = sqlite3_step(y);
    }
    if (status == ORDO_OK &&
        ((rx != SQLITE_ROW && rx != SQLITE_DONE) || (ry != SQLITE_ROW && ry != SQLITE_DONE)))
        status = ordo__db_error(s->ledger, err, "comparing runs");
    sqlite3_finalize(x);
    sqlite3_finalize(y);
    sqlite3_finalize(s->block_stmt);
    sqlite3_finalize(s->lanes_stmt);
    return status;
}

static ordo_status buckets_in_snapshot(ordo_ledger *ledger, int64_t a, int64_t b, int64_t from,
                                       int64_t to, int buckets, ordo_compare_buckets_result *out,
                                       ordo_error *err)
{
    ordo_run_info ra, rb;
    ordo_status status = ordo__run_get_id(ledger, a, &ra, err);
    if (status == ORDO_OK)
        status = ordo__run_get_id(ledger, b, &rb, err);
    if (status != ORDO_OK)
        return status;
    if (buckets < 1 || buckets > 100000)
        return ordo__error(err, ORDO_INVALID, "buckets (%d) must be 1 to 100000", buckets);
    if (from <= 0)
        from = 1;
    if (to <= 0)
        to = ra.last_step > rb.last_step ? ra.last_step : rb.last_step;
    if (to < from)
        to = from;
    if (to - from + 1 < buckets) /* never more buckets than steps */
        buckets = (int)(to - from + 1);
    if (to > ORDO_STEP_MAX || from > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "steps %lld to %lld are out of range",
                           (long long)from, (long long)to);
    bucket_state s = {.ledger = ledger, .run = {ra.id, rb.id}, .from = from, .to = to};
    s.width = (to - from + buckets) / buckets; /* ceil((to - from + 1) / buckets) */
    s.count = (size_t)((to - from + s.width) / s.width);
    s.lanes = ra.lanes == rb.lanes ? ra.lanes : 0;
    s.lane_bytes = (s.lanes + 7) / 8;
    s.buckets = calloc(s.count, sizeof *s.buckets);
    s.lane_map = calloc(s.count * (size_t)(s.lane_bytes ? s.lane_bytes : 1), 1);
    if (!s.buckets || !s.lane_map) {
        free(s.buckets);
        free(s.lane_map);
        return ordo__error(err, ORDO_NOMEM, "out of memory comparing runs");
    }
    for (size_t i = 0; i < s.count; i++) {
        s.buckets[i].from = from + (int64_t)i * s.width;
        s.buckets[i].to =
            s.buckets[i].from + s.width - 1 < to ? s.buckets[i].from + s.width - 1 : to;
    }
    status = strcmp(ra.digest_kind, rb.digest_kind) == 0 ? merge(&s, err) : ORDO_OK;
    if (status != ORDO_OK) {
        free(s.buckets);
        free(s.lane_map);
        return status;
    }
    *out = (ordo_compare_buckets_result){s.buckets, s.count, s.width, s.lanes, s.lane_map};
    return ordo__ok(err);
}

/* Buckets of a comparison, in one snapshot; see ordo.h. */
ordo_status ordo_compare_buckets(ordo_ledger *ledger, int64_t a, int64_t b, int64_t from,
                                 int64_t to, int buckets, ordo_compare_buckets_result *out,
                                 ordo_error *err)
{
    memset(out, 0, sizeof *out);
    int started = ordo__read_begin(ledger);
    ordo_status status = buckets_in_snapshot(ledger, a, b, from, to, buckets, out, err);
    ordo__read_end(ledger, started);
    return status;
}

/* Frees what ordo_compare_buckets returned. */
void ordo_compare_buckets_result_free(ordo_compare_buckets_result *result)
{
    if (!result)
        return;
    free(result->buckets);
    free(result->lane_map);
    memset(result, 0, sizeof *result);
}
