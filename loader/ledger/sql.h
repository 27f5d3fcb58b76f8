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
    EVP_MD_CTX *digest_ctx;         /* reused for the batch digest checks */
    struct ordo__block *last_block; /* the step block this connection saved last */
    int lock_timeout_ms;            /* how long a write waits for another's lock */
};

/* The steps table's rowid: run id in the high bits, step in the low 40
 * (ORDO_STEP_MAX < 2^40; run ids stay below 2^23). */
#define ORDO__STEP_BITS 40
#define ORDO__STEP_KEY(run_id, step) ((int64_t)(run_id) * ((int64_t)1 << ORDO__STEP_BITS) + (step))

/* SQL for a run's whole key range, given the run id as `r`. */
#define ORDO__SQL_STEP_KEYS(r) "BETWEEN (" r " << 40) + 1 AND (" r " << 40) + 1099511627775"

/* SQL the compares share: a run's batch digests in step order between two
 * step keys (?1, ?2), and the lane digests of two step keys. */
#define ORDO__SQL_STEP_DIGESTS                                                                     \
    "SELECT key & 1099511627775, batch_digest FROM steps WHERE key BETWEEN ?1 AND ?2 ORDER BY key"
#define ORDO__SQL_LANE_PAIR "SELECT key, lane_digests FROM steps WHERE key IN (?1, ?2)"
/* ... and run ?1's step blocks ?2 to ?3 in order (step_blocks.h). */
#define ORDO__SQL_BLOCKS                                                                           \
    "SELECT " ORDO__SQL_BLOCK_OF(                                                                  \
        "?1") ", present, digest FROM step_blocks WHERE key "                                      \
              "BETWEEN " ORDO__SQL_BLOCK_KEY("?1", "?2") " AND " ORDO__SQL_BLOCK_KEY(              \
                  "?1", "?3") " ORDER BY key"

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

/* One value bound to a statement's parameter. Make them with ORDO__INT,
 * ORDO__REAL, ORDO__TEXT, ORDO__BLOB and ORDO__NULL, and list them with
 * ORDO__BIND(...): the first binds ?1, the next ?2, and so on. A NULL text
 * or blob pointer binds NULL. Text and blobs are bound SQLITE_STATIC: they
 * must live until the statement is done with. */
typedef struct {
    enum { ORDO__V_END, ORDO__V_NULL, ORDO__V_INT, ORDO__V_REAL, ORDO__V_TEXT, ORDO__V_BLOB } type;
    int64_t i;
    double real;
    const void *p;
    uint64_t size;
} ordo__value;

#define ORDO__INT(v) ((ordo__value){.type = ORDO__V_INT, .i = (int64_t)(v)})
#define ORDO__REAL(v) ((ordo__value){.type = ORDO__V_REAL, .real = (v)})
#define ORDO__TEXT(s) ((ordo__value){.type = ORDO__V_TEXT, .p = (s)})
#define ORDO__BLOB(b, n) ((ordo__value){.type = ORDO__V_BLOB, .p = (b), .size = (uint64_t)(n)})
#define ORDO__NULL ((ordo__value){.type = ORDO__V_NULL})
#define ORDO__BIND(...) ((const ordo__value[]){__VA_ARGS__, {.type = ORDO__V_END}})

/* Called for a row of a statement (its columns are valid only during the
 * call: copy what is kept). Returning other than ORDO_OK stops the
 * statement, and that status is what the query returns. */
typedef ordo_status (*ordo__row_fn)(sqlite3_stmt *row, void *context, ordo_error *err);

/* Prepares a one-off statement and binds `values` (NULL: none); the caller
 * steps and finalizes it. */
ordo_status ordo__prepare_bound(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                                sqlite3_stmt **stmt, ordo_error *err);

/* Runs `sql` with `values` to its end, calling `each` (if not NULL) for
 * every row; a failing step is an ordo__db_error naming `what`. For
 * writes, `each` is NULL; sqlite3_changes and sqlite3_last_insert_rowid
 * still tell what the statement did. */
ordo_status ordo__sql_each(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                           ordo__row_fn each, void *context, const char *what, ordo_error *err);

/* Writes: ordo__sql_each without rows. */
#define ordo__sql_exec(ledger, sql, values, what, err)                                             \
    ordo__sql_each(ledger, sql, values, NULL, NULL, what, err)

/* Runs `sql` with `values` for its first row only: calls `read` (if not
 * NULL) on it and returns read's status; ORDO_NOTFOUND when there is no
 * row, leaving `err` untouched (the caller names what is missing); an
 * ordo__db_error naming `what` when the step fails. */
ordo_status ordo__sql_row(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                          ordo__row_fn read, void *context, const char *what, ordo_error *err);

/* A row function: column 0 into the int64_t `context` points to. */
ordo_status ordo__read_int64(sqlite3_stmt *row, void *context, ordo_error *err);

/* A row function: columns 0 and 1 into the int64_t[2] `context` is. */
ordo_status ordo__read_int64_pair(sqlite3_stmt *row, void *context, ordo_error *err);

/* A row function: column 0 into the ORDO_DIGEST_SIZE bytes `context`
 * points to when it is a digest; ORDO_NOTFOUND (err untouched) when not. */
ordo_status ordo__read_digest(sqlite3_stmt *row, void *context, ordo_error *err);

/* A row function: a copy of column 0's text into the char * `context`
 * points to (the caller frees it; NULL when out of memory). */
ordo_status ordo__read_text(sqlite3_stmt *row, void *context, ordo_error *err);

/* Rows read into a growing array by ordo__sql_list. The caller sets the
 * first three fields; items and count are the result, which the caller
 * frees (with what each item owns) whatever the status. */
typedef struct {
    size_t item_size;
    ordo__row_fn read; /* fills one item, given as its context */
    const char *nomem; /* the message when the array cannot grow */
    void *items;
    size_t count, capacity;
} ordo__rows;

/* Runs `sql` with `values`, reading every row into rows->items with
 * rows->read; a failing step is an ordo__db_error naming `what`. */
ordo_status ordo__sql_list(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                           ordo__rows *rows, const char *what, ordo_error *err);

/* Work done inside a write transaction. */
typedef ordo_status (*ordo__work_fn)(ordo_ledger *ledger, void *context, ordo_error *err);

/* Runs `work` inside BEGIN IMMEDIATE: commits when it returns ORDO_OK,
 * rolls back otherwise. Returns the first failure of begin, work or
 * commit (err filled by it), else ORDO_OK without touching err. */
ordo_status ordo__transaction(ordo_ledger *ledger, ordo__work_fn work, void *context,
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

/* Checks the lane state a step carries (none is fine): a checkpoint taken
 * after that very step, of the `lanes` lanes of its segment, which must be
 * logical. Errors name the step. */
ordo_status ordo__epoch_state_check(const ordo_step *s, int lanes, int rank_bound, ordo_error *err);

/* Records the lane state a step carries, inside the caller's transaction.
 * The first state recorded for a step stands: the same one again is a
 * no-op; a different one is a conflict event and *conflict = 1. */
ordo_status ordo__epoch_state_put(ordo_ledger *ledger, int64_t run_id, const ordo_step *s,
                                  int *conflict, ordo_error *err);

/* The lane state of run `run_id` recorded with the earliest step from
 * `first` to `last` into *out (step and state, the caller's:
 * ordo_checkpoint_free); ORDO_NOTFOUND, err untouched, when none is. */
ordo_status ordo__epoch_state_find(ordo_ledger *ledger, int64_t run_id, int64_t first, int64_t last,
                                   ordo_checkpoint *out, ordo_error *err);

/* Step blocks: how steps are stored, read by the views too. */
#include "step_blocks.h"

#endif
