/* Self-verifying resume (design §6): what a checkpoint may claim, and the
 * recorded lane digests the samples a resume drops must reproduce. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "replay.h"
#include "schedule.h"

#define MAX_FORK_DEPTH 64

/* Where a run's steps up to `step` are recorded: the run itself, or, for a
 * fork whose first segment resumed after `step`, its baseline. */
static ordo_status owner_of_step(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                 int64_t *owner, ordo_error *err)
{
    *owner = run_id;
    for (int depth = 0; depth < MAX_FORK_DEPTH; depth++) {
        sqlite3_stmt *stmt = NULL;
        ordo_status status = ordo__prepare(
            ledger,
            "SELECT r.baseline_id FROM runs r JOIN segments s ON s.run_id = r.id "
            "AND s.ordinal = 0 WHERE r.id = ?1 AND s.resumed_from >= ?2 "
            "AND r.baseline_id IS NOT NULL",
            &stmt, err);
        if (status != ORDO_OK)
            return status;
        sqlite3_bind_int64(stmt, 1, *owner);
        sqlite3_bind_int64(stmt, 2, step);
        int rc = sqlite3_step(stmt);
        int64_t parent = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
        sqlite3_finalize(stmt);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return ordo__db_error(ledger, err, "finding a fork's baseline");
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
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT substr(lane_digests, ?2 * 32 + 1, 32) FROM steps WHERE key = ?1 "
        "AND length(lane_digests) >= (?2 + 1) * 32 UNION ALL "
        "SELECT digest FROM lane_reports WHERE run_id = ?3 AND step = ?4 AND lane = ?2",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(run_id, step));
    sqlite3_bind_int(stmt, 2, lane);
    sqlite3_bind_int64(stmt, 3, run_id);
    sqlite3_bind_int64(stmt, 4, step);
    int rc = sqlite3_step(stmt);
    *found = rc == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) == ORDO_DIGEST_SIZE;
    if (*found)
        memcpy(out, sqlite3_column_blob(stmt, 0), ORDO_DIGEST_SIZE);
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "reading lane digests");
    sqlite3_finalize(stmt);
    return status;
}

/* The recorded lane digests of steps first..last of one lane; see replay.h. */
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
                                      out + (size_t)(step - first) * ORDO_DIGEST_SIZE, &found,
                                      err);
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

/* The resume's step must be recorded for the run; see replay.h. */
ordo_status ordo__replay_reached(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                 ordo_error *err)
{
    int64_t owner = run_id;
    ordo_status status = owner_of_step(ledger, run_id, step, &owner, err);
    sqlite3_stmt *stmt = NULL;
    if (status == ORDO_OK)
        status = ordo__prepare(ledger,
                               "SELECT EXISTS (SELECT 1 FROM steps WHERE key = ?1), (SELECT "
                               "max(key) - (?2 << 40) FROM steps WHERE key BETWEEN (?2 << 40) "
                               "AND (?2 << 40) + 1099511627775)",
                               &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_int64(stmt, 1, ORDO__STEP_KEY(owner, step));
    sqlite3_bind_int64(stmt, 2, owner);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && !sqlite3_column_int(stmt, 0))
        status = ordo__error(err, ORDO_INVALID,
                             "resume refused: the checkpoint is of step %lld, which the run has "
                             "not recorded (its last recorded step is %lld)",
                             (long long)step, (long long)sqlite3_column_int64(stmt, 1));
    else if (rc != SQLITE_ROW)
        status = ordo__db_error(ledger, err, "reading steps");
    sqlite3_finalize(stmt);
    return status;
}

/* Replays the lane's work source from its start for as many picks as the
 * record's epoch says were taken, and compares (taken, estimated). */
static ordo_status check_schedule(const ordo_recipe *recipe, uint64_t stride,
                                  const ordo__stream *streams,
                                  const ordo__lane_record *rec, uint64_t picks, int64_t step,
                                  ordo_error *err)
{
    ordo__schedule s;
    ordo_status status = ordo__schedule_init(&s, recipe, rec->lane, stride, streams, err);
    for (uint64_t i = 0; status == ORDO_OK && i < picks; i++) {
        ordo__pick pick;
        status = ordo__schedule_next(&s, &pick, err);
    }
    for (uint32_t i = 0; status == ORDO_OK && i < recipe->source_count; i++)
        if (s.state.taken[i] != rec->taken[i] || s.state.estimated[i] != rec->estimated[i])
            status = ordo__error(err, ORDO_INVALID,
                                 "resume refused: the checkpoint at step %lld gives lane %llu of "
                                 "source '%s' %llu chunks (%llu tokens estimated); at the start of "
                                 "flush epoch %llu its work source has %llu (%llu)",
                                 (long long)step, (unsigned long long)rec->lane,
                                 recipe->sources[i].name, (unsigned long long)rec->taken[i],
                                 (unsigned long long)rec->estimated[i],
                                 (unsigned long long)rec->epoch,
                                 (unsigned long long)s.state.taken[i],
                                 (unsigned long long)s.state.estimated[i]);
    if (s.recipe)
        ordo__schedule_free(&s);
    return status;
}

/* Bounds one lane record by what the recipe allows; see replay.h. */
ordo_status ordo__replay_check_record(const ordo_recipe *recipe, uint64_t stride,
                                      const ordo__stream *streams, int per_lane, int64_t step,
                                      const ordo__lane_record *rec, ordo_error *err)
{
    uint64_t flush_every = (uint64_t)recipe->flush_every, lane = rec->lane;
    uint64_t samples = (uint64_t)step * (uint64_t)per_lane; /* step <= ORDO_STEP_MAX */
    if (step == 0 && (rec->delivered != 0 || rec->epoch != 0))
        return ordo__error(err, ORDO_INVALID, "resume refused: the checkpoint before any step "
                                              "gives lane %llu flush epoch %llu and %llu samples",
                           (unsigned long long)lane, (unsigned long long)rec->epoch,
                           (unsigned long long)rec->delivered);
    if (step > 0 && (rec->delivered < (uint64_t)per_lane || rec->delivered > samples))
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint at step %lld says lane %llu delivered "
                           "%llu samples of its flush epoch; it must be %d to %llu",
                           (long long)step, (unsigned long long)lane,
                           (unsigned long long)rec->delivered, per_lane,
                           (unsigned long long)samples);
    /* Every chunk yields at least one token (its documents' end-of-text),
     * so a lane cannot have read more chunks than it delivered tokens. */
    unsigned __int128 tokens = (unsigned __int128)samples * (uint64_t)recipe->seq_len;
    uint64_t most = (uint64_t)(tokens / flush_every) + 1;
    if (rec->epoch > most)
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint at step %lld puts lane %llu at flush "
                           "epoch %llu; by step %lld it can be at most %llu",
                           (long long)step, (unsigned long long)lane,
                           (unsigned long long)rec->epoch, (long long)step,
                           (unsigned long long)most);
    unsigned __int128 taken = 0;
    for (uint32_t i = 0; i < recipe->source_count; i++)
        taken += rec->taken[i];
    if (taken != (unsigned __int128)rec->epoch * flush_every)
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint at step %lld gives lane %llu %llu "
                           "chunks taken at the start of flush epoch %llu, which starts after %llu",
                           (long long)step, (unsigned long long)lane,
                           (unsigned long long)(uint64_t)taken, (unsigned long long)rec->epoch,
                           (unsigned long long)(rec->epoch * flush_every));
    return check_schedule(recipe, stride, streams, rec, (uint64_t)taken, step, err);
}
