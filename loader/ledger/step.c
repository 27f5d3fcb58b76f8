/* Recording and scanning steps: the ledger's hot path. */
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "divergence.h"
#include "sql.h"
#include "step_blocks.h"
#include "step_verify.h"

/* ?1 is the step key (ORDO__STEP_KEY); ?2 is unused. */
#define SQL_INSERT                                                                                 \
    "INSERT INTO steps (key, batch_digest, lane_digests, tokens, pad_tokens, "                     \
    "source_tokens, loss, metrics) VALUES (?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "                       \
    "ON CONFLICT (key) DO NOTHING"
/* The digests and which fields are still unknown. */
#define SQL_SELECT                                                                                 \
    "SELECT batch_digest, lane_digests, tokens IS NULL, pad_tokens IS NULL, "                      \
    "source_tokens IS NULL, loss IS NULL, metrics IS NULL FROM steps WHERE key = ?1"
#define SQL_FILL                                                                                   \
    "UPDATE steps SET lane_digests = coalesce(lane_digests, ?4), "                                 \
    "tokens = coalesce(tokens, ?5), pad_tokens = coalesce(pad_tokens, ?6), "                       \
    "source_tokens = coalesce(source_tokens, ?7), loss = coalesce(loss, ?8), "                     \
    "metrics = coalesce(metrics, ?9) WHERE key = ?1"

/* Where each segment of the run starts and how many lanes it has. */
typedef struct {
    int64_t start_step;
    int lanes, rank_bound;
} segment_bound;

typedef struct {
    segment_bound *segments;
    size_t count;
    int run_found;          /* load_segments saw the run's row */
    unsigned char *scratch; /* encoded source tokens */
    size_t scratch_size;
    char *metrics;           /* canonical metrics of the current step */
    ordo__fresh_step *fresh; /* steps inserted by this call, for their blocks */
    size_t fresh_count;
} record_state;

/* Initializes a step to "nothing known but its number". */
void ordo_step_init(ordo_step *step, int64_t number)
{
    memset(step, 0, sizeof *step);
    step->step = number;
    step->tokens = -1;
    step->pad_tokens = -1;
}

/* One row of load_segments: the run, and a segment unless it has none. */
static ordo_status read_segment_bound(sqlite3_stmt *row, void *context, ordo_error *err)
{
    record_state *state = context;
    state->run_found = 1;
    if (sqlite3_column_type(row, 0) == SQLITE_NULL)
        return ORDO_OK;
    segment_bound *grown = realloc(state->segments, (state->count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading segments");
    state->segments = grown;
    grown[state->count].start_step = sqlite3_column_int64(row, 0);
    grown[state->count].rank_bound = sqlite3_column_int(row, 2);
    grown[state->count++].lanes = sqlite3_column_int(row, 1);
    return ORDO_OK;
}

static ordo_status load_segments(ordo_ledger *ledger, int64_t run_id, record_state *state,
                                 ordo_error *err)
{
    ordo_status status = ordo__sql_each(
        ledger,
        "SELECT s.start_step, s.lanes, s.lane_binding = 'rank' FROM runs r "
        "LEFT JOIN segments s ON s.run_id = r.id "
        "WHERE r.id = ?1 ORDER BY s.ordinal",
        ORDO__BIND(ORDO__INT(run_id)), read_segment_bound, state, "reading segments", err);
    if (status == ORDO_OK && !state->run_found)
        status =
            ordo__error(err, ORDO_NOTFOUND, "run %lld is not in the ledger", (long long)run_id);
    return status;
}

/* The segment covering `step` (the latest that starts at or before it);
 * NULL when the step comes before the first segment. */
static const segment_bound *segment_at(const record_state *state, int64_t step)
{
    for (size_t i = state->count; i-- > 0;)
        if (state->segments[i].start_step <= step)
            return &state->segments[i];
    return NULL;
}

/* Lanes of the segment covering `step`; 0 when there is none. */
static int lanes_at(const record_state *state, int64_t step)
{
    const segment_bound *segment = segment_at(state, step);
    return segment ? segment->lanes : 0;
}

static ordo_status check_lanes(const ordo_step *s, int lanes, ordo_error *err)
{
    long long n = (long long)s->step;
    if (lanes == 0)
        return ordo__error(err, ORDO_INVALID, "step %lld comes before the run's first segment", n);
    if ((s->lane_digests == NULL) != (s->lane_count == 0) || s->lane_count < 0)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: lane digest count (%d) does not match the digests given", n,
                           s->lane_count);
    if (!s->lane_digests)
        return ORDO_OK;
    if (s->lane_count != lanes)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld has %d lane digests, its segment has %d lanes", n,
                           s->lane_count, lanes);
    return ORDO_OK; /* the batch digest is checked beside the inserts */
}

static ordo_status check_counts(const ordo_step *s, ordo_error *err)
{
    long long n = (long long)s->step;
    if (s->tokens < -1 || s->pad_tokens < -1)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: token counts must be >= 0 (or -1 for unknown)", n);
    if (s->source_count < 0 || s->source_count > ORDO_SOURCES_MAX ||
        (s->source_count > 0) != (s->source_tokens != NULL))
        return ordo__error(err, ORDO_INVALID, "step %lld: source token count (%d) is invalid", n,
                           s->source_count);
    for (int i = 0; i < s->source_count; i++)
        if (s->source_tokens[i] < 0)
            return ordo__error(err, ORDO_INVALID, "step %lld: source %d has %lld tokens", n, i,
                               (long long)s->source_tokens[i]);
    if (s->has_loss && !isfinite(s->loss))
        return ordo__error(err, ORDO_INVALID, "step %lld: loss is not a finite number", n);
    return ORDO_OK;
}

/* Metrics are a JSON object of scalars (numbers, strings, booleans or
 * null): one value per name and step, as the series views read them. */
static ordo_status check_metrics(const char *text, int64_t step, ordo_error *err)
{
    char what[64];
    snprintf(what, sizeof what, "step %lld: metrics", (long long)step);
    ordo_status status = ordo__check_json_object(text, what, err);
    json_t *metrics = status == ORDO_OK ? json_loads(text, 0, NULL) : NULL;
    const char *key;
    json_t *value;
    json_object_foreach(metrics, key, value)
    {
        if (json_is_object(value) || json_is_array(value)) {
            status = ordo__error(err, ORDO_INVALID,
                                 "%s: '%.100s' is %s; a metric is a number, "
                                 "a string, a boolean or null",
                                 what, key, json_is_object(value) ? "an object" : "an array");
            break;
        }
    }
    if (status == ORDO_OK && !metrics)
        status = ordo__error(err, ORDO_NOMEM, "out of memory reading %s", what);
    json_decref(metrics);
    return status;
}

static ordo_status check_step(const ordo_step *s, const record_state *state, ordo_error *err)
{
    if (s->step < 1 || s->step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "step %lld is out of range (1 to %lld)",
                           (long long)s->step, (long long)ORDO_STEP_MAX);
    ordo_status status = check_lanes(s, lanes_at(state, s->step), err);
    if (status == ORDO_OK)
        status = check_counts(s, err);
    if (status == ORDO_OK && s->metrics)
        status = check_metrics(s->metrics, s->step, err);
    const segment_bound *segment = segment_at(state, s->step);
    if (status == ORDO_OK && segment)
        status = ordo__epoch_state_check(s, segment->lanes, segment->rank_bound, err);
    return status;
}

/* Binds ?1 and ?3..?9 of an insert or fill statement for one step. */
static ordo_status bind_step(sqlite3_stmt *stmt, int64_t run_id, const ordo_step *s,
                             record_state *state, ordo_error *err)
{
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(run_id, s->step));
    sqlite3_bind_blob(stmt, 3, s->batch_digest, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    if (s->lane_digests)
        sqlite3_bind_blob(stmt, 4, s->lane_digests, s->lane_count * ORDO_DIGEST_SIZE,
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(stmt, 4);
    if (s->tokens >= 0)
        sqlite3_bind_int64(stmt, 5, s->tokens);
    else
        sqlite3_bind_null(stmt, 5);
    if (s->pad_tokens >= 0)
        sqlite3_bind_int64(stmt, 6, s->pad_tokens);
    else
        sqlite3_bind_null(stmt, 6);
    if (s->source_count > 0) {
        size_t size = (size_t)s->source_count * 8;
        if (size > state->scratch_size) {
            unsigned char *grown = realloc(state->scratch, size);
            if (!grown)
                return ordo__error(err, ORDO_NOMEM, "out of memory recording steps");
            state->scratch = grown;
            state->scratch_size = size;
        }
        for (int i = 0; i < s->source_count; i++)
            for (int b = 0; b < 8; b++)
                state->scratch[8 * i + b] =
                    (unsigned char)((uint64_t)s->source_tokens[i] >> (8 * b));
        sqlite3_bind_blob(stmt, 7, state->scratch, (int)size, SQLITE_STATIC);
    } else {
        sqlite3_bind_null(stmt, 7);
    }
    if (s->has_loss)
        sqlite3_bind_double(stmt, 8, s->loss);
    else
        sqlite3_bind_null(stmt, 8);
    free(state->metrics);
    state->metrics = NULL;
    if (s->metrics) {
        json_t *object = json_loads(s->metrics, 0, NULL);
        state->metrics = object ? json_dumps(object, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(object);
        if (!state->metrics)
            return ordo__error(err, ORDO_NOMEM, "out of memory recording steps");
    }
    sqlite3_bind_text(stmt, 9, state->metrics, -1, SQLITE_STATIC);
    return ORDO_OK;
}

static char *conflict_detail(const unsigned char *recorded, const unsigned char *recorded_lanes,
                             int recorded_lane_count, const ordo_step *s)
{
    char old_hex[ORDO_DIGEST_HEX_SIZE], new_hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(recorded, old_hex);
    ordo_digest_to_hex(s->batch_digest, new_hex);
    json_t *detail = json_pack("{s:s, s:s}", "recorded", old_hex, "reported", new_hex);
    if (detail && recorded_lanes && s->lane_digests && recorded_lane_count == s->lane_count) {
        json_t *lanes = json_array();
        for (int lane = 0; lane < s->lane_count; lane++)
            if (memcmp(recorded_lanes + lane * ORDO_DIGEST_SIZE,
                       s->lane_digests + lane * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) != 0)
                json_array_append_new(lanes, json_integer(lane));
        json_object_set_new(detail, "lanes", lanes);
    }
    char *text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
    json_decref(detail);
    return text;
}

/* The step is recorded already: a matching report fills unknown fields, a
 * different one becomes a conflict event. *conflict tells which. */
static ordo_status handle_duplicate(ordo_ledger *ledger, int64_t run_id, const ordo_step *s,
                                    record_state *state, int *conflict, ordo_error *err)
{
    sqlite3_stmt *select = ordo__stmt(ledger, ORDO_STMT_STEP_SELECT, SQL_SELECT, err);
    if (!select)
        return err ? err->status : ORDO_DB;
    sqlite3_bind_int64(select, 1, ORDO__STEP_KEY(run_id, s->step));
    if (sqlite3_step(select) != SQLITE_ROW) {
        ordo_status status = ordo__db_error(ledger, err, "reading a recorded step");
        sqlite3_reset(select);
        return status;
    }
    const unsigned char *recorded = sqlite3_column_blob(select, 0);
    const unsigned char *lanes = sqlite3_column_blob(select, 1);
    int lane_count = sqlite3_column_bytes(select, 1) / ORDO_DIGEST_SIZE;
    if (!recorded || sqlite3_column_bytes(select, 0) != ORDO_DIGEST_SIZE ||
        sqlite3_column_bytes(select, 1) % ORDO_DIGEST_SIZE != 0) {
        sqlite3_reset(select);
        return ordo__error(err, ORDO_NOTLEDGER, "ledger '%s': step %lld of run %lld is damaged",
                           ledger->path, (long long)s->step, (long long)run_id);
    }
    int fills = (!lanes && s->lane_digests) || (sqlite3_column_int(select, 2) && s->tokens >= 0) ||
                (sqlite3_column_int(select, 3) && s->pad_tokens >= 0) ||
                (sqlite3_column_int(select, 4) && s->source_count > 0) ||
                (sqlite3_column_int(select, 5) && s->has_loss) ||
                (sqlite3_column_int(select, 6) && s->metrics);
    *conflict = memcmp(recorded, s->batch_digest, ORDO_DIGEST_SIZE) != 0 ||
                (lanes && s->lane_digests &&
                 (lane_count != s->lane_count ||
                  memcmp(lanes, s->lane_digests, (size_t)lane_count * ORDO_DIGEST_SIZE) != 0));
    char *detail = *conflict ? conflict_detail(recorded, lanes, lane_count, s) : NULL;
    sqlite3_reset(select);
    if (*conflict) {
        ordo_status status =
            detail ? ordo__conflict(ledger, run_id, s->step, s->batch_digest, detail, err)
                   : ordo__error(err, ORDO_NOMEM, "out of memory");
        free(detail);
        return status;
    }
    if (!fills) /* nothing new: a true no-op */
        return ORDO_OK;
    sqlite3_stmt *fill = ordo__stmt(ledger, ORDO_STMT_STEP_FILL, SQL_FILL, err);
    if (!fill)
        return err ? err->status : ORDO_DB;
    ordo_status status = bind_step(fill, run_id, s, state, err);
    if (status == ORDO_OK && sqlite3_step(fill) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "filling a recorded step");
    sqlite3_reset(fill);
    sqlite3_clear_bindings(fill);
    return status;
}

static void count_conflict(ordo_record_result *result, int64_t step)
{
    result->conflicts++;
    if (!result->first_conflict_step || step < result->first_conflict_step)
        result->first_conflict_step = step;
}

static ordo_status record_one(ordo_ledger *ledger, int64_t run_id, const ordo_step *s,
                              record_state *state, ordo_record_result *result, ordo_error *err)
{
    sqlite3_stmt *insert = ordo__stmt(ledger, ORDO_STMT_STEP_INSERT, SQL_INSERT, err);
    if (!insert)
        return err ? err->status : ORDO_DB;
    ordo_status status = bind_step(insert, run_id, s, state, err);
    int rc = status == ORDO_OK ? sqlite3_step(insert) : SQLITE_DONE;
    if (status == ORDO_OK && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "recording a step");
    int inserted = status == ORDO_OK && sqlite3_changes(ledger->db) == 1;
    sqlite3_reset(insert);
    if (status != ORDO_OK)
        return status;
    int conflict = 0;
    if (inserted) {
        result->inserted++;
        ordo__fresh_step *f = &state->fresh[state->fresh_count++];
        f->step = s->step;
        memcpy(f->digest, s->batch_digest, ORDO_DIGEST_SIZE);
    } else {
        status = handle_duplicate(ledger, run_id, s, state, &conflict, err);
    }
    if (status != ORDO_OK)
        return status;
    if (conflict) { /* the first report stands, its lane state too */
        count_conflict(result, s->step);
        return ORDO_OK;
    }
    status = ordo__epoch_state_put(ledger, run_id, s, &conflict, err);
    if (status == ORDO_OK && conflict)
        count_conflict(result, s->step);
    else if (status == ORDO_OK)
        result->unchanged += !inserted;
    return status;
}

static ordo_status add_step_count(ordo_ledger *ledger, int64_t run_id, int64_t inserted,
                                  ordo_error *err)
{
    return ordo__sql_exec(ledger, "UPDATE runs SET step_count = step_count + ?2 WHERE id = ?1",
                          ORDO__BIND(ORDO__INT(run_id), ORDO__INT(inserted)), "counting steps",
                          err);
}

static ordo_status record_locked(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                                 size_t count, record_state *state, ordo_record_result *result,
                                 ordo_error *err)
{
    ordo_status status = load_segments(ledger, run_id, state, err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++)
        status = check_step(&steps[i], state, err);
    if (status != ORDO_OK)
        return status;
    state->fresh = malloc((count ? count : 1) * sizeof *state->fresh);
    if (!state->fresh)
        return ordo__error(err, ORDO_NOMEM, "out of memory recording steps");
    ordo__digest_check check;
    ordo__digest_check_start(&check, steps, count);
    for (size_t i = 0; status == ORDO_OK && i < count; i++)
        status = record_one(ledger, run_id, &steps[i], state, result, err);
    size_t bad = ordo__digest_check_finish(&check, ledger->digest_ctx);
    if (status == ORDO_OK && bad < count)
        status = ordo__error(err, ORDO_INVALID,
                             "step %lld: batch digest is not the digest of its %d lane digests",
                             (long long)steps[bad].step, steps[bad].lane_count);
    /* this call's inserts (result may carry counts of earlier calls) */
    if (status == ORDO_OK && state->fresh_count > 0)
        status = add_step_count(ledger, run_id, (int64_t)state->fresh_count, err);
    if (status == ORDO_OK)
        status = ordo__step_blocks_add(ledger, run_id, state->fresh, state->fresh_count, err);
    if (status == ORDO_OK)
        status =
            ordo__divergences_check(ledger, run_id, state->fresh, state->fresh_count, result, err);
    return status;
}

/* Records steps inside the caller's transaction; see sql.h. */
ordo_status ordo__steps_record_locked(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                                      size_t count, ordo_record_result *result, ordo_error *err)
{
    record_state state = {0};
    ordo_status status = record_locked(ledger, run_id, steps, count, &state, result, err);
    sqlite3_stmt *insert = ledger->stmts[ORDO_STMT_STEP_INSERT];
    if (insert)
        sqlite3_clear_bindings(insert); /* they point into this call's memory */
    free(state.segments);
    free(state.scratch);
    free(state.metrics);
    free(state.fresh);
    return status;
}

/* What ordo_steps_record records. */
typedef struct {
    int64_t run_id;
    const ordo_step *steps;
    size_t count;
    ordo_record_result *result;
} steps_recording;

static ordo_status steps_locked(ordo_ledger *ledger, void *context, ordo_error *err)
{
    const steps_recording *r = context;
    ordo_status status =
        ordo__steps_record_locked(ledger, r->run_id, r->steps, r->count, r->result, err);
    if (status == ORDO_OK)
        status = ordo__lanes_settle(ledger, r->run_id, r->steps, r->count, r->result, err);
    return status;
}

/* Records a batch of steps in one transaction; see ordo.h. */
ordo_status ordo_steps_record(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                              size_t count, ordo_record_result *result, ordo_error *err)
{
    ordo_record_result local;
    if (!result)
        result = &local;
    memset(result, 0, sizeof *result);
    if (count > 0 && !steps)
        return ordo__error(err, ORDO_INVALID, "steps are missing");
    ordo_status status = ordo__transaction(ledger, steps_locked,
                                           &(steps_recording){run_id, steps, count, result}, err);
    if (status != ORDO_OK) {
        memset(result, 0, sizeof *result);
        return status;
    }
    if (result->conflicts)
        return ordo__error(err, ORDO_CONFLICT,
                           "%zu reported steps differ from what run %lld recorded (first: step "
                           "%lld); the first reports stand, the differences are kept as "
                           "conflict events, the rest of the batch was recorded",
                           result->conflicts, (long long)run_id,
                           (long long)result->first_conflict_step);
    return ordo__ok(err);
}
