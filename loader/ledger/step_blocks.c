/* Range digests, kept as steps are recorded: per block of 120 steps, which
 * are present and the SHA-256 of their batch digests in step order. */
#include <stdlib.h>
#include <string.h>

#include "step_blocks.h"

typedef struct ordo__block {
    int64_t run_id, block;
    unsigned char present[ORDO__BLOCK_STEPS / 8];
    unsigned char digests[ORDO__BLOCK_STEPS][ORDO_DIGEST_SIZE];
    unsigned char saved[ORDO_DIGEST_SIZE]; /* the range digest written */
} block;

static void put(block *b, int64_t step, const unsigned char *digest)
{
    int slot = (int)((step - 1) % ORDO__BLOCK_STEPS);
    b->present[slot / 8] |= (unsigned char)(1u << (slot % 8));
    memcpy(b->digests[slot], digest, ORDO_DIGEST_SIZE);
}

/* The block's steps as recorded before this call. */
static ordo_status load(ordo_ledger *ledger, block *b, ordo_error *err)
{
    sqlite3_stmt *stmt = ordo__stmt(
        ledger, ORDO_STMT_BLOCK_SELECT,
        "SELECT key & 1099511627775, batch_digest FROM steps WHERE key BETWEEN ?1 AND ?2", err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    int64_t first = b->block * ORDO__BLOCK_STEPS + 1;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(b->run_id, first));
    sqlite3_bind_int64(stmt, 2, ORDO__STEP_KEY(b->run_id, first + ORDO__BLOCK_STEPS - 1));
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
        if (sqlite3_column_bytes(stmt, 1) == ORDO_DIGEST_SIZE)
            put(b, sqlite3_column_int64(stmt, 0), sqlite3_column_blob(stmt, 1));
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? ORDO_OK : ordo__db_error(ledger, err, "reading a step block");
}

/* SHA-256 over the present steps' digests in step order. */
static void block_digest(ordo_ledger *ledger, const block *b, unsigned char out[ORDO_DIGEST_SIZE])
{
    unsigned char all[ORDO__BLOCK_STEPS * ORDO_DIGEST_SIZE];
    size_t n = 0;
    for (int slot = 0; slot < ORDO__BLOCK_STEPS; slot++)
        if (b->present[slot / 8] >> (slot % 8) & 1)
            memcpy(all + ORDO_DIGEST_SIZE * n++, b->digests[slot], ORDO_DIGEST_SIZE);
    ordo__sha256_with(ledger->digest_ctx, all, n * ORDO_DIGEST_SIZE, out);
}

static ordo_status save(ordo_ledger *ledger, block *b, ordo_error *err)
{
    unsigned char *digest = b->saved;
    block_digest(ledger, b, digest);
    sqlite3_stmt *stmt = ordo__stmt(
        ledger, ORDO_STMT_BLOCK_SAVE,
        "INSERT INTO step_blocks (key, present, digest) VALUES (?1, ?2, ?3) ON CONFLICT (key) "
        "DO UPDATE SET present = excluded.present, digest = excluded.digest",
        err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    ordo_status status = ORDO_OK;
    sqlite3_bind_int64(stmt, 1, ORDO__BLOCK_KEY(b->run_id, b->block));
    sqlite3_bind_blob(stmt, 2, b->present, sizeof b->present, SQLITE_TRANSIENT);
    sqlite3_bind_blob(stmt, 3, digest, ORDO_DIGEST_SIZE, SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "writing a step block");
    sqlite3_reset(stmt);
    return status;
}

/* A block this connection saved last is reused when its stored row is
 * still what was saved (no other connection added steps to it since):
 * steps reported in order then never read their block back. */
static ordo_status reuse_or_load(ordo_ledger *ledger, block *b, ordo_error *err)
{
    const block *last = ledger->last_block;
    if (!last || last->run_id != b->run_id || last->block != b->block)
        return load(ledger, b, err);
    sqlite3_stmt *stmt = ordo__stmt(ledger, ORDO_STMT_BLOCK_ROW,
                                    "SELECT present, digest FROM step_blocks WHERE key = ?1", err);
    if (!stmt)
        return err ? err->status : ORDO_DB;
    sqlite3_bind_int64(stmt, 1, ORDO__BLOCK_KEY(b->run_id, b->block));
    int same = sqlite3_step(stmt) == SQLITE_ROW &&
               sqlite3_column_bytes(stmt, 0) == (int)sizeof last->present &&
               sqlite3_column_bytes(stmt, 1) == ORDO_DIGEST_SIZE &&
               memcmp(sqlite3_column_blob(stmt, 0), last->present, sizeof last->present) == 0 &&
               memcmp(sqlite3_column_blob(stmt, 1), last->saved, ORDO_DIGEST_SIZE) == 0;
    sqlite3_reset(stmt);
    if (!same)
        return load(ledger, b, err);
    memcpy(b, last, sizeof *b);
    return ORDO_OK;
}

static int by_step(const void *x, const void *y)
{
    const ordo__fresh_step *a = x, *b = y;
    return (a->step > b->step) - (a->step < b->step);
}

/* Updates the blocks of new steps; see step_blocks.h. The steps are in the
 * steps table already, so each touched block is read back from it: a block
 * that this call filled entirely costs no more than its own new steps. */
ordo_status ordo__step_blocks_add(ordo_ledger *ledger, int64_t run_id,
                                  const ordo__fresh_step *steps, size_t count, ordo_error *err)
{
    if (count == 0)
        return ORDO_OK;
    ordo__fresh_step *sorted = NULL;
    int in_order = 1;
    for (size_t i = 1; i < count && in_order; i++)
        in_order = steps[i - 1].step < steps[i].step;
    if (!in_order) {
        sorted = malloc(count * sizeof *sorted);
        if (!sorted)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        memcpy(sorted, steps, count * sizeof *sorted);
        qsort(sorted, count, sizeof *sorted, by_step);
        steps = sorted;
    }
    block *b = malloc(sizeof *b);
    ordo_status status = b ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory");
    for (size_t i = 0; status == ORDO_OK && i < count;) {
        int64_t index = (steps[i].step - 1) / ORDO__BLOCK_STEPS;
        size_t j = i;
        while (j < count && (steps[j].step - 1) / ORDO__BLOCK_STEPS == index)
            j++;
        memset(b, 0, sizeof *b);
        b->run_id = run_id;
        b->block = index;
        if (j - i < ORDO__BLOCK_STEPS) /* others of the block may be recorded already */
            status = reuse_or_load(ledger, b, err);
        for (size_t k = i; status == ORDO_OK && k < j; k++)
            put(b, steps[k].step, steps[k].digest);
        if (status == ORDO_OK)
            status = save(ledger, b, err);
        i = j;
    }
    /* Remember the last block; on failure forget it (the transaction is
     * rolled back). */
    free(ledger->last_block);
    ledger->last_block = status == ORDO_OK ? b : NULL;
    if (status != ORDO_OK)
        free(b);
    free(sorted);
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
    b->run_id = -1;
    int rc;
    while (status == ORDO_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(stmt, 0), step = sqlite3_column_int64(stmt, 1);
        int64_t index = (step - 1) / ORDO__BLOCK_STEPS;
        if (run != b->run_id || index != b->block) {
            if (b->run_id >= 0)
                status = save(ledger, b, err);
            memset(b, 0, sizeof *b);
            b->run_id = run;
            b->block = index;
        }
        if (sqlite3_column_bytes(stmt, 2) == ORDO_DIGEST_SIZE)
            put(b, step, sqlite3_column_blob(stmt, 2));
    }
    if (status == ORDO_OK && b->run_id >= 0)
        status = save(ledger, b, err);
    sqlite3_finalize(stmt);
    free(b);
    return status;
}
