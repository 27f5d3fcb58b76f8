/* ledger, SQL side (internal, not installed): the ledger connection, its
 * prepared statements and transactions, step keys, and the recording
 * helpers the ledger's files share. The views (views/) read the ledger
 * through it too; recipe and pipeline use ledger.h, never this. */
#ifndef ORDO_LEDGER_SQL_H
#define ORDO_LEDGER_SQL_H

#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "core/core.h"
#include "ledger.h"

/* Prepared statements a ledger keeps for its lifetime (reused, reset). */
enum ordo__stmt_id {
    ORDO_STMT_STEP_INSERT,
    ORDO_STMT_STEP_SELECT,
    ORDO_STMT_STEP_FILL,
    ORDO_STMT_EVENT_INSERT,
    ORDO_STMT_BLOCK_SELECT,
    ORDO_STMT_BLOCK_SAVE,
    ORDO_STMT_BLOCK_ROW,
    ORDO_STMT_COUNT
};

struct ordo_ledger {
    sqlite3 *db;
    char *path;
    unsigned flags;
    sqlite3_stmt *stmts[ORDO_STMT_COUNT];
    EVP_MD_CTX *digest_ctx; /* reused for the batch digest checks */
    struct ordo__block *last_block; /* the step block this connection saved last */
    int lock_timeout_ms; /* how long a write waits for another's lock */
};

/* The steps table's rowid: run id in the high bits, step in the low 40
 * (ORDO_STEP_MAX < 2^40; run ids stay below 2^23). */
#define ORDO__STEP_BITS 40
#define ORDO__STEP_KEY(run_id, step) ((int64_t)(run_id) * ((int64_t)1 << ORDO__STEP_BITS) + (step))

/* SQL for a run's whole key range, given the run id as `r`. */
#define ORDO__SQL_STEP_KEYS(r) "BETWEEN (" r " << 40) + 1 AND (" r " << 40) + 1099511627775"

/* Fills `err` from the connection's last SQLite error, prefixed by `what`,
 * and returns the matching status (BUSY, NOTLEDGER, IO, DB). */
ordo_status ordo__db_error(ordo_ledger *ledger, ordo_error *err, const char *what);

/* A read transaction, so several statements see one snapshot: begins one
 * unless one is open already (returns 1 when it did); ordo__read_end ends
 * what it began. */
int ordo__read_begin(ordo_ledger *ledger);
void ordo__read_end(ordo_ledger *ledger, int started);

/* ordo_steps_record's work inside a transaction the caller holds. */
ordo_status ordo__steps_record_locked(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                                      size_t count, ordo_record_result *result, ordo_error *err);

/* Settles the pending lane reports (ordo_lanes_record) of steps just
 * recorded whole, inside the caller's transaction: each is checked against
 * the step's lane digests (a lane that differs is a conflict event, counted
 * in result) and removed, so none waits for a lane that will never come. */
ordo_status ordo__lanes_settle(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                               size_t count, ordo_record_result *result, ordo_error *err);

/* Returns the ledger's cached statement `id`, preparing it from `sql` on
 * first use; NULL on failure with `err` filled. The caller resets it. */
sqlite3_stmt *ordo__stmt(ordo_ledger *ledger, enum ordo__stmt_id id, const char *sql,
                         ordo_error *err);

/* Prepares a one-off statement; the caller finalizes it. */
ordo_status ordo__prepare(ordo_ledger *ledger, const char *sql, sqlite3_stmt **stmt,
                          ordo_error *err);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. Rollback never fails loudly. */
ordo_status ordo__begin(ordo_ledger *ledger, ordo_error *err);
ordo_status ordo__commit(ordo_ledger *ledger, ordo_error *err);
void ordo__rollback(ordo_ledger *ledger);

/* Refuses writes on a read-only ledger. */
ordo_status ordo__writable(ordo_ledger *ledger, ordo_error *err);

/* Largest run id: run ids sit above the 40 step bits of a step key. */
#define ORDO__RUN_MAX ((int64_t)8388607)

/* Checks that run `run_id` exists (ids out of range are simply absent). */
ordo_status ordo__run_exists(ordo_ledger *ledger, int64_t run_id, ordo_error *err);

/* Records a conflict event for a run and step (deduplicated by digest). */
ordo_status ordo__conflict(ordo_ledger *ledger, int64_t run_id, int64_t step,
                           const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                           ordo_error *err);

/* Records a divergence event for a run and step (deduplicated by the
 * run's digest). */
ordo_status ordo__divergence(ordo_ledger *ledger, int64_t run_id, int64_t step,
                             const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                             ordo_error *err);

/* Step blocks: how steps are stored, read by the views too. */
#include "step_blocks.h"

#endif
