/* Internal declarations shared by libordo's files; not installed. */
#ifndef ORDO_INTERNAL_H
#define ORDO_INTERNAL_H

#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "ordo.h"

#if defined(__GNUC__)
#define ORDO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ORDO_PRINTF(f, a)
#endif

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

/* SHA-256 through a reused context (falls back to ordo_sha256). */
void ordo__sha256_with(EVP_MD_CTX *ctx, const void *data, size_t len,
                       unsigned char out[ORDO_DIGEST_SIZE]);

/* The steps table's rowid: run id in the high bits, step in the low 40
 * (ORDO_STEP_MAX < 2^40; run ids stay below 2^23). */
#define ORDO__STEP_BITS 40
#define ORDO__STEP_KEY(run_id, step) ((int64_t)(run_id) * ((int64_t)1 << ORDO__STEP_BITS) + (step))

/* SQL for a run's whole key range, given the run id as `r`. */
#define ORDO__SQL_STEP_KEYS(r) "BETWEEN (" r " << 40) + 1 AND (" r " << 40) + 1099511627775"

/* Fills `err` (when not NULL) and returns `status`. */
ordo_status ordo__error(ordo_error *err, ordo_status status, const char *fmt, ...)
    ORDO_PRINTF(3, 4);

/* Fills `err` from the connection's last SQLite error, prefixed by `what`,
 * and returns the matching status (BUSY, NOTLEDGER, IO, DB). */
ordo_status ordo__db_error(ordo_ledger *ledger, ordo_error *err, const char *what);

/* Describes an errno value in `buf` (thread-safe, unlike strerror);
 * returns buf. */
#define ORDO__ERRNO_TEXT_SIZE 128
const char *ordo__errno_text(int errnum, char buf[ORDO__ERRNO_TEXT_SIZE]);

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

/* Clears `err` to ORDO_OK and returns ORDO_OK. */
ordo_status ordo__ok(ordo_error *err);

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

/* Checks a run name or group tag: 1..255 bytes, valid UTF-8, no control
 * characters. `what` names the field in the message. */
ordo_status ordo__check_name(const char *name, const char *what, ordo_error *err);

/* Checks that `text` is a JSON object; `what` names it in the message. */
ordo_status ordo__check_json_object(const char *text, const char *what, ordo_error *err);

/* Records a conflict event for a run and step (deduplicated by digest). */
ordo_status ordo__conflict(ordo_ledger *ledger, int64_t run_id, int64_t step,
                           const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                           ordo_error *err);

/* Records a divergence event for a run and step (deduplicated by the
 * run's digest). */
ordo_status ordo__divergence(ordo_ledger *ledger, int64_t run_id, int64_t step,
                             const unsigned char digest[ORDO_DIGEST_SIZE], const char *detail,
                             ordo_error *err);

/* Copies `src` into the fixed buffer `dst` of `size` bytes (NULL → ""). */
void ordo__copy(char *dst, size_t size, const char *src);

/* strdup that returns NULL for NULL. */
char *ordo__strdup(const char *s);

#endif
