/* Reading steps back in step order. */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

typedef struct {
    int64_t *sources;
    int capacity;
} scan_buffers;

static ordo_status decode_sources(sqlite3_stmt *stmt, int column, scan_buffers *buffers,
                                  ordo_step *s)
{
    const unsigned char *blob = sqlite3_column_blob(stmt, column);
    int count = sqlite3_column_bytes(stmt, column) / 8;
    if (!blob || count == 0)
        return ORDO_OK;
    if (count > buffers->capacity) {
        int64_t *grown = realloc(buffers->sources, (size_t)count * sizeof *grown);
        if (!grown)
            return ORDO_NOMEM;
        buffers->sources = grown;
        buffers->capacity = count;
    }
    for (int i = 0; i < count; i++) {
        uint64_t value = 0;
        for (int b = 7; b >= 0; b--)
            value = value << 8 | blob[8 * i + b];
        buffers->sources[i] = (int64_t)value;
    }
    s->source_tokens = buffers->sources;
    s->source_count = count;
    return ORDO_OK;
}

static ordo_status read_step(sqlite3_stmt *stmt, scan_buffers *buffers, ordo_step *s)
{
    ordo_step_init(s, sqlite3_column_int64(stmt, 0));
    const void *batch = sqlite3_column_blob(stmt, 1);
    if (!batch || sqlite3_column_bytes(stmt, 1) != ORDO_DIGEST_SIZE)
        return ORDO_NOTLEDGER;
    memcpy(s->batch_digest, batch, ORDO_DIGEST_SIZE);
    s->lane_digests = sqlite3_column_blob(stmt, 2);
    s->lane_count = s->lane_digests ? sqlite3_column_bytes(stmt, 2) / ORDO_DIGEST_SIZE : 0;
    if (sqlite3_column_type(stmt, 3) != SQLITE_NULL)
        s->tokens = sqlite3_column_int64(stmt, 3);
    if (sqlite3_column_type(stmt, 4) != SQLITE_NULL)
        s->pad_tokens = sqlite3_column_int64(stmt, 4);
    if (sqlite3_column_type(stmt, 6) != SQLITE_NULL) {
        s->has_loss = 1;
        s->loss = sqlite3_column_double(stmt, 6);
    }
    s->metrics = (const char *)sqlite3_column_text(stmt, 7);
    return decode_sources(stmt, 5, buffers, s);
}

/* Calls `fn` for each step of a run in [from, to], in step order. */
ordo_status ordo_steps_scan(ordo_ledger *ledger, int64_t run_id, int64_t from, int64_t to,
                            ordo_step_fn fn, void *context, ordo_error *err)
{
    if (from > to)
        return ordo__error(err, ORDO_INVALID, "step range %lld..%lld is empty (from > to)",
                           (long long)from, (long long)to);
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__run_exists(ledger, run_id, err);
    if (status != ORDO_OK)
        return status;
    status = ordo__prepare(
        ledger,
        "SELECT step, batch_digest, lane_digests, tokens, pad_tokens, source_tokens, loss, "
        "metrics FROM steps WHERE key BETWEEN ?1 AND ?2 ORDER BY key",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    if (from < 1)
        from = 1;
    if (to > ORDO_STEP_MAX)
        to = ORDO_STEP_MAX;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(run_id, from));
    sqlite3_bind_int64(stmt, 2, ORDO__STEP_KEY(run_id, to));
    scan_buffers buffers = {0};
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        ordo_step s;
        status = read_step(stmt, &buffers, &s);
        if (status == ORDO_NOMEM) {
            status = ordo__error(err, status, "out of memory reading steps");
            break;
        }
        if (status != ORDO_OK) {
            status = ordo__error(err, status, "ledger '%s': step %lld of run %lld is damaged",
                                 ledger->path, (long long)s.step, (long long)run_id);
            break;
        }
        if (fn(&s, context) != 0)
            break;
    }
    if (status == ORDO_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "reading steps");
    free(buffers.sources);
    sqlite3_finalize(stmt);
    return status == ORDO_OK ? ordo__ok(err) : status;
}
