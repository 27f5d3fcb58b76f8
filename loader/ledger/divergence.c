/* Divergence as it happens (docs/api.md, "POST /api/runs/{run}/steps";
 * docs/reliability.md, "The write path: bodies, divergences, lane
 * reports"): each new step of a run that names
 * a baseline is compared with the baseline's digest of the same step, in
 * the transaction that records it, so no divergence can be recorded
 * without its event or lost to a concurrent writer. */
#include <stdio.h>
#include <string.h>

#include "divergence.h"

/* The run's baseline id when it has one of the same digest kind, else 0. */
static ordo_status baseline_of(ordo_ledger *ledger, int64_t run_id, int64_t *baseline,
                               ordo_error *err)
{
    *baseline = 0;
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT b.id FROM runs r JOIN runs b ON b.id = r.baseline_id "
        "WHERE r.id = ?1 AND b.digest_kind = r.digest_kind",
        ORDO__BIND(ORDO__INT(run_id)), ordo__read_int64, baseline, "reading a run's baseline", err);
    return status == ORDO_NOTFOUND ? ORDO_OK : status;
}

static ordo_status diverged(ordo_ledger *ledger, int64_t run_id, const ordo__fresh_step *f,
                            const unsigned char *theirs, ordo_record_result *result,
                            ordo_error *err)
{
    char ours_hex[ORDO_DIGEST_HEX_SIZE], theirs_hex[ORDO_DIGEST_HEX_SIZE], detail[200];
    ordo_digest_to_hex(f->digest, ours_hex);
    ordo_digest_to_hex(theirs, theirs_hex);
    snprintf(detail, sizeof detail, "{\"digest\":\"%s\",\"baseline_digest\":\"%s\"}", ours_hex,
             theirs_hex);
    ordo_status status = ordo__divergence(ledger, run_id, f->step, f->digest, detail, err);
    if (status != ORDO_OK)
        return status;
    if (result->listed < ORDO_DIVERGENCES_LISTED) {
        ordo_divergence *d = &result->divergences[result->listed++];
        d->step = f->step;
        memcpy(d->digest, f->digest, ORDO_DIGEST_SIZE);
        memcpy(d->baseline_digest, theirs, ORDO_DIGEST_SIZE);
    }
    result->diverged++;
    return ORDO_OK;
}

/* Checks new steps against the baseline; see divergence.h. */
ordo_status ordo__divergences_check(ordo_ledger *ledger, int64_t run_id,
                                    const ordo__fresh_step *fresh, size_t count,
                                    ordo_record_result *result, ordo_error *err)
{
    int64_t baseline = 0;
    ordo_status status = count ? baseline_of(ledger, run_id, &baseline, err) : ORDO_OK;
    if (status != ORDO_OK || !baseline)
        return status;
    sqlite3_stmt *stmt = NULL;
    status = ordo__prepare(ledger, "SELECT batch_digest FROM steps WHERE key = ?1", &stmt, err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(baseline, fresh[i].step));
        int rc = sqlite3_step(stmt);
        if (rc == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) == ORDO_DIGEST_SIZE &&
            memcmp(sqlite3_column_blob(stmt, 0), fresh[i].digest, ORDO_DIGEST_SIZE) != 0) {
            unsigned char theirs[ORDO_DIGEST_SIZE];
            memcpy(theirs, sqlite3_column_blob(stmt, 0), ORDO_DIGEST_SIZE);
            sqlite3_reset(stmt);
            status = diverged(ledger, run_id, &fresh[i], theirs, result, err);
        } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            status = ordo__db_error(ledger, err, "reading the baseline's step");
        }
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return status;
}
