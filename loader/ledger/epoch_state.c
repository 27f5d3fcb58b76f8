/* Epoch states: every lane's state at the start of a flush epoch, given
 * with a step of that epoch (ordo_step.lane_state), so a step's batch is
 * regenerated with at most one epoch of replay (views/batch.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define EPOCH_STATE_MAX (16u << 20) /* tens of bytes a lane, as a checkpoint */

/* Checks a step's lane state; see sql.h. */
ordo_status ordo__epoch_state_check(const ordo_step *s, int lanes, int rank_bound, ordo_error *err)
{
    long long n = (long long)s->step;
    if (!s->lane_state && !s->lane_state_size)
        return ORDO_OK;
    if (!s->lane_state || !s->lane_state_size || s->lane_state_size > EPOCH_STATE_MAX)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: its lane state has %zu bytes (1 to %u, with the bytes)", n,
                           s->lane_state_size, EPOCH_STATE_MAX);
    if (rank_bound)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: a lane state is kept for logical lanes only, and its "
                           "segment's lanes are rank-bound",
                           n);
    int state_lanes = 0;
    int64_t state_step = 0;
    ordo_error why;
    if (ordo_checkpoint_describe(s->lane_state, s->lane_state_size, &state_lanes, &state_step,
                                 &why) != ORDO_OK)
        return ordo__error(err, ORDO_INVALID, "step %lld: its lane state is not a checkpoint: %s",
                           n, why.message);
    if (state_step != s->step)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: its lane state was taken after step %lld, not this one", n,
                           (long long)state_step);
    if (state_lanes != lanes)
        return ordo__error(err, ORDO_INVALID,
                           "step %lld: its lane state holds %d lanes, its segment has %d (a "
                           "lane state is every lane's, joined with ordo_checkpoint_merge)",
                           n, state_lanes, lanes);
    return ORDO_OK;
}

/* Whether the state recorded for the step puts the lanes where s's does
 * (ordo_checkpoint_equivalent; a stored one that no longer decodes does
 * not), and whether s's knows records it does not. */
static ordo_status same_place(ordo_ledger *ledger, int64_t run_id, const ordo_step *s, int *same,
                              int *more, ordo_error *err)
{
    ordo_checkpoint old;
    ordo_status status = ordo__epoch_state_find(ledger, run_id, s->step, s->step, &old, err);
    ordo_error why;
    *same = *more = 0;
    if (status == ORDO_OK &&
        ordo_checkpoint_equivalent(old.state, old.state_size, s->lane_state, s->lane_state_size,
                                   same, more, &why) != ORDO_OK)
        *same = *more = 0;
    ordo_checkpoint_free(&old);
    return status;
}

/* Records a step's lane state (the first one stands, or the same positions
 * with more of their records known); see sql.h. */
ordo_status ordo__epoch_state_put(ordo_ledger *ledger, int64_t run_id, const ordo_step *s,
                                  int *conflict, ordo_error *err)
{
    *conflict = 0;
    if (!s->lane_state)
        return ORDO_OK;
    ordo_status status =
        ordo__sql_exec(ledger,
                       "INSERT INTO epoch_states (run_id, step, lane_state) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (run_id, step) DO NOTHING",
                       ORDO__BIND(ORDO__INT(run_id), ORDO__INT(s->step),
                                  ORDO__BLOB(s->lane_state, s->lane_state_size)),
                       "recording a lane state", err);
    if (status == ORDO_OK && sqlite3_changes(ledger->db))
        return ordo__sql_exec(ledger, "UPDATE runs SET lane_states = lane_states + 1 WHERE id = ?1",
                              ORDO__BIND(ORDO__INT(run_id)), "counting lane states", err);
    if (status != ORDO_OK)
        return status;
    int64_t same = 0;
    status = ordo__sql_row(ledger,
                           "SELECT lane_state = ?3 FROM epoch_states WHERE run_id = ?1 AND "
                           "step = ?2",
                           ORDO__BIND(ORDO__INT(run_id), ORDO__INT(s->step),
                                      ORDO__BLOB(s->lane_state, s->lane_state_size)),
                           ordo__read_int64, &same, "reading a lane state", err);
    if (status != ORDO_OK || same)
        return status;
    int place = 0, more = 0;
    if ((status = same_place(ledger, run_id, s, &place, &more, err)) != ORDO_OK)
        return status;
    if (place) /* the same positions, some records unknown: the one knowing more is kept */
        return more ? ordo__sql_exec(ledger,
                                     "UPDATE epoch_states SET lane_state = ?3 WHERE run_id = ?1 "
                                     "AND step = ?2",
                                     ORDO__BIND(ORDO__INT(run_id), ORDO__INT(s->step),
                                                ORDO__BLOB(s->lane_state, s->lane_state_size)),
                                     "recording a lane state", err)
                    : ORDO_OK;
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(s->lane_state, s->lane_state_size, digest);
    *conflict = 1;
    return ordo__conflict(ledger, run_id, s->step, digest, "{\"what\":\"lane_state\"}", err);
}

static ordo_status read_state(sqlite3_stmt *row, void *context, ordo_error *err)
{
    ordo_checkpoint *c = context;
    c->step = sqlite3_column_int64(row, 0);
    c->state_size = (size_t)sqlite3_column_bytes(row, 1);
    c->state = malloc(c->state_size ? c->state_size : 1);
    if (!c->state)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a lane state");
    memcpy(c->state, sqlite3_column_blob(row, 1), c->state_size);
    return ORDO_OK;
}

/* The first lane state recorded for a step from `first` to `last`; see sql.h. */
ordo_status ordo__epoch_state_find(ordo_ledger *ledger, int64_t run_id, int64_t first, int64_t last,
                                   ordo_checkpoint *out, ordo_error *err)
{
    memset(out, 0, sizeof *out);
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT step, lane_state FROM epoch_states WHERE run_id = ?1 AND step BETWEEN ?2 AND ?3 "
        "ORDER BY step LIMIT 1",
        ORDO__BIND(ORDO__INT(run_id), ORDO__INT(first), ORDO__INT(last)), read_state, out,
        "reading lane states", err);
    if (status != ORDO_OK)
        ordo_checkpoint_free(out);
    return status;
}
