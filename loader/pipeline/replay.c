/* Self-verifying resume (docs/reliability.md): what a checkpoint may claim
 * of a lane, replayed from the recipe. */
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "schedule.h"

/* Replays the lane's work source from its start for as many picks as the
 * record's epoch says were taken, and compares (taken, estimated). */
static ordo_status check_schedule(const ordo_recipe *recipe, uint64_t stride,
                                  const ordo__stream *streams, const ordo__lane_record *rec,
                                  uint64_t picks, int64_t step, ordo_error *err)
{
    ordo__schedule s;
    ordo_status status = ordo__schedule_init(&s, recipe, rec->lane, stride, streams, err);
    for (uint64_t i = 0; status == ORDO_OK && i < picks; i++) {
        ordo__pick pick;
        status = ordo__schedule_next(&s, &pick, err);
    }
    for (uint32_t i = 0; status == ORDO_OK && i < recipe->source_count; i++)
        if (s.state.taken[i] != rec->taken[i] || s.state.estimated[i] != rec->estimated[i])
            status = ordo__error(
                err, ORDO_INVALID,
                "resume refused: the checkpoint at step %lld gives lane %llu of "
                "source '%s' %llu chunks (%llu tokens estimated); at the start of "
                "flush epoch %llu its work source has %llu (%llu)",
                (long long)step, (unsigned long long)rec->lane, recipe->sources[i].name,
                (unsigned long long)rec->taken[i], (unsigned long long)rec->estimated[i],
                (unsigned long long)rec->epoch, (unsigned long long)s.state.taken[i],
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
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint before any step "
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
    unsigned __int128 tokens = (unsigned __int128)samples * (uint64_t)recipe->sample_len;
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

/* Bounds a logical lane record; see replay.h. */
ordo_status ordo__replay_check_positions(const ordo_recipe *r, uint64_t per_lane, int64_t step,
                                         const ordo__lane_record *rec, ordo_error *err)
{
    uint64_t flush = (uint64_t)r->flush_every;
    uint64_t epoch = step > 0 ? ((uint64_t)step - 1) / flush : 0;
    unsigned __int128 tokens =
        (unsigned __int128)(epoch * flush) * per_lane * (uint64_t)r->sample_len;
    for (uint32_t s = 0; s < r->source_count; s++) {
        const ordo__pos *p = &rec->positions[s];
        if (p->unit > tokens || (tokens == 0 && (p->doc || p->offset)) || p->doc > UINT32_MAX ||
            p->offset > ((uint64_t)1 << 40) || p->record > UINT32_MAX ||
            (p->record && !p->doc && !p->offset))
            return ordo__error(err, ORDO_INVALID,
                               "resume refused: the checkpoint at step %lld puts lane %llu of "
                               "source '%s' at unit %llu, document %llu, token %llu (record "
                               "%llu); by the start of its flush epoch %llu the lane had "
                               "delivered %llu tokens",
                               (long long)step, (unsigned long long)rec->lane, r->sources[s].name,
                               (unsigned long long)p->unit, (unsigned long long)p->doc,
                               (unsigned long long)p->offset, (unsigned long long)p->record,
                               (unsigned long long)epoch, (unsigned long long)tokens);
    }
    return ORDO_OK;
}
