/* Blocks of batch digests, maintained as steps are recorded. */
#include <stdlib.h>
#include <string.h>

#include "step_blocks.h"

typedef struct {
    int64_t key;
    unsigned char present[ORDO__BLOCK_STEPS / 8];
    unsigned char digests[ORDO__BLOCK_STEPS * ORDO_DIGEST_SIZE];
} block;

static ordo_status load(ordo_ledger *ledger, block *b, ordo_error *err)
{
    sqlite3_stmt *stmt = ordo__stmt(ledger, ORDO_STMT_BLOCK_SELECT,
                                    "SELECT present, digests FROM step_blocks WHERE key = ?1", err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    ordo_status status = ORDO_OK;
    sqlite3_bind_int64(stmt, 1, b->key);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) == (int)sizeof b->present &&
        sqlite3_column_bytes(stmt, 1) == (int)sizeof b->digests) {
        memcpy(b->present, sqlite3_column_blob(stmt, 0), sizeof b->present);
        memcpy(b->digests, sqlite3_column_blob(stmt, 1), sizeof b->digests);
    } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
        memset(b->present, 0, sizeof b->present);
        memset(b->digests, 0, sizeof b->digests);
    } else {
        status = ordo__db_error(ledger, err, "reading a step block");
    }
    sqlite3_reset(stmt);
    return status;
}

static ordo_status save(ordo_ledger *ledger, const block *b, ordo_error *err)
{
    sqlite3_stmt *stmt = ordo__stmt(
        ledger, ORDO_STMT_BLOCK_SAVE,
        "INSERT OR REPLACE INTO step_blocks (key, present, digests) VALUES (?1, ?2, ?3)", err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    ordo_status status = ORDO_OK;
    sqlite3_bind_int64(stmt, 1, b->key);
    sqlite3_bind_blob(stmt, 2, b->present, sizeof b->present, SQLITE_STATIC);
    sqlite3_bind_blob(stmt, 3, b->digests, sizeof b->digests, SQLITE_STATIC);
    if (sqlite3_step(stmt) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "writing a step block");
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt); /* they point into the caller's block */
    return status;
}

static void put(block *b, int64_t step, const unsigned char *digest)
{
    int slot = (int)((step - 1) % ORDO__BLOCK_STEPS);
    b->present[slot / 8] |= (unsigned char)(1u << (slot % 8));
    memcpy(b->digests + (size_t)slot * ORDO_DIGEST_SIZE, digest, ORDO_DIGEST_SIZE);
}

static int by_step(const void *x, const void *y)
{
    const ordo__fresh_step *a = x, *b = y;
    return (a->step > b->step) - (a->step < b->step);
}

/* Adds steps to their blocks; see step_blocks.h. */
ordo_status ordo__step_blocks_add(ordo_ledger *ledger, int64_t run_id,
                                  const ordo__fresh_step *steps, size_t count, ordo_error *err)
{
    if (count == 0)
        return ORDO_OK;
    ordo__fresh_step *sorted = malloc(count * sizeof *sorted);
    block *b = malloc(sizeof *b);
    ordo_status status = sorted && b ? ORDO_OK
                                     : ordo__error(err, ORDO_NOMEM, "out of memory");
    int in_order = 1;
    for (size_t i = 1; i < count && in_order; i++)
        in_order = steps[i - 1].step < steps[i].step;
    if (status == ORDO_OK) {
        memcpy(sorted, steps, count * sizeof *sorted);
        if (!in_order)
            qsort(sorted, count, sizeof *sorted, by_step);
    }
    for (size_t i = 0; status == ORDO_OK && i < count;) {
        b->key = ORDO__BLOCK_KEY(run_id, (sorted[i].step - 1) / ORDO__BLOCK_STEPS);
        status = load(ledger, b, err);
        size_t j = i;
        for (; status == ORDO_OK && j < count &&
               ORDO__BLOCK_KEY(run_id, (sorted[j].step - 1) / ORDO__BLOCK_STEPS) == b->key;
             j++)
            put(b, sorted[j].step, sorted[j].digest);
        if (status == ORDO_OK)
            status = save(ledger, b, err);
        i = j;
    }
    free(sorted);
    free(b);
    return status;
}

/* Rebuilds the blocks from the steps; see step_blocks.h. */
ordo_status ordo__step_blocks_rebuild(ordo_ledger *ledger, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger, "SELECT key >> 40, key & 1099511627775, batch_digest FROM steps ORDER BY key",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    block *b = calloc(1, sizeof *b);
    if (!b) {
        sqlite3_finalize(stmt);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    b->key = -1;
    int rc;
    while (status == ORDO_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(stmt, 0), step = sqlite3_column_int64(stmt, 1);
        int64_t key = ORDO__BLOCK_KEY(run, (step - 1) / ORDO__BLOCK_STEPS);
        if (key != b->key) {
            if (b->key >= 0)
                status = save(ledger, b, err);
            memset(b, 0, sizeof *b);
            b->key = key;
        }
        if (sqlite3_column_bytes(stmt, 2) == ORDO_DIGEST_SIZE)
            put(b, step, sqlite3_column_blob(stmt, 2));
    }
    if (status == ORDO_OK && b->key >= 0)
        status = save(ledger, b, err);
    sqlite3_finalize(stmt);
    free(b);
    return status;
}
