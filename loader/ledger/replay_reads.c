/* What a resume checks against the ledger (docs/reliability.md): that the
 * checkpoint's step was recorded, and the recorded lane digests the samples
 * a resume drops must reproduce. */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define MAX_FORK_DEPTH 64

/* Where a run's steps up to `step` are recorded: the run itself, or, for a
 * fork whose first segment resumed after `step`, its baseline. */
static ordo_status owner_of_step(ordo_ledger *ledger, int64_t run_id, int64_t step, int64_t *owner,
                                 ordo_error *err)
{
    *owner = run_id;
    for (int depth = 0; depth < MAX_FORK_DEPTH; depth++) {
        int64_t parent = 0;
        ordo_status status =
            ordo__sql_row(ledger,
                          "SELECT r.baseline_id FROM runs r JOIN segments s ON s.run_id = r.id "
                          "AND s.ordinal = 0 WHERE r.id = ?1 AND s.resumed_from >= ?2 "
                          "AND r.baseline_id IS NOT NULL",
                          ORDO__BIND(ORDO__INT(*owner), ORDO__INT(step)), ordo__read_int64, &parent,
                          "finding a fork's baseline", err);
        if (status != ORDO_OK && status != ORDO_NOTFOUND)
            return status;
        if (!parent)
            return ORDO_OK;
        *owner = parent;
    }
    return ORDO_OK;
}

/* One lane digest of one recorded step: from the step's row, else from a
 * lane report of a step still pending. 1 when found. */
static ordo_status read_lane_digest(ordo_ledger *ledger, int64_t run_id, int64_t step, int lane,
                                    unsigned char out[ORDO_DIGEST_SIZE], int *found,
                                    ordo_error *err)
{
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT substr(lane_digests, ?2 * 32 + 1, 32) FROM steps WHERE key = ?1 "
        "AND length(lane_digests) >= (?2 + 1) * 32 UNION ALL "
        "SELECT digest FROM lane_reports WHERE run_id = ?3 AND step = ?4 AND lane = ?2",
        ORDO__BIND(ORDO__INT(ORDO__STEP_KEY(run_id, step)), ORDO__INT(lane), ORDO__INT(run_id),
                   ORDO__INT(step)),
        ordo__read_digest, out, "reading lane digests", err);
    *found = status == ORDO_OK;
    return status == ORDO_NOTFOUND ? ORDO_OK : status;
}

/* The recorded lane digests of steps first..last of one lane; see ledger.h. */
ordo_status ordo__replay_digests(ordo_ledger *ledger, int64_t run_id, int lane, int64_t first,
                                 int64_t last, unsigned char **digests, ordo_error *err)
{
    *digests = NULL;
    if (first < 1 || last < first)
        return ordo__error(err, ORDO_INVALID, "replay of lane %d covers no step (%lld to %lld)",
                           lane, (long long)first, (long long)last);
    unsigned char *out = malloc((size_t)(last - first + 1) * ORDO_DIGEST_SIZE);
    if (!out)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading lane digests");
    ordo_status status = ORDO_OK;
    for (int64_t step = first; step <= last && status == ORDO_OK; step++) {
        int64_t owner = run_id;
        int found = 0;
        status = owner_of_step(ledger, run_id, step, &owner, err);
        if (status == ORDO_OK)
            status = read_lane_digest(ledger, owner, step, lane,
                                      out + (size_t)(step - first) * ORDO_DIGEST_SIZE, &found, err);
        if (status == ORDO_OK && !found)
            status = ordo__error(err, ORDO_INVALID,
                                 "resume refused: step %lld of lane %d, which the checkpoint "
                                 "says was delivered, has no recorded lane digest",
                                 (long long)step, lane);
    }
    if (status != ORDO_OK) {
        free(out);
        return status;
    }
    *digests = out;
    return ORDO_OK;
}

/* The resume's step must be recorded for the run; see ledger.h. */
ordo_status ordo__replay_reached(ordo_ledger *ledger, int64_t run_id, int64_t step, ordo_error *err)
{
    int64_t owner = run_id;
    ordo_status status = owner_of_step(ledger, run_id, step, &owner, err);
    int64_t recorded[2] = {0, 0}; /* the step is recorded; the last recorded step */
    if (status == ORDO_OK)
        status = ordo__sql_row(ledger,
                               "SELECT EXISTS (SELECT 1 FROM steps WHERE key = ?1), (SELECT "
                               "max(key) - (?2 << 40) FROM steps WHERE key BETWEEN (?2 << 40) "
                               "AND (?2 << 40) + 1099511627775)",
                               ORDO__BIND(ORDO__INT(ORDO__STEP_KEY(owner, step)), ORDO__INT(owner)),
                               ordo__read_int64_pair, recorded, "reading steps", err);
    if (status == ORDO_OK && !recorded[0])
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint is of step %lld, which the run has "
                           "not recorded (its last recorded step is %lld)",
                           (long long)step, (long long)recorded[1]);
    return status == ORDO_NOTFOUND ? ordo__db_error(ledger, err, "reading steps") : status;
}
