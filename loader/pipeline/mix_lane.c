/* A logical lane: the slot plan says which source fills each of its slots,
 * one packer per source fills them, a flush epoch (flush_every steps) at a
 * time; with "shuffle" the samples of each source are permuted among that
 * source's slots of the epoch (docs/recipe.md, "How a lane's data is
 * decided"). */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pipeline.h"

static uint64_t epoch_samples(const ordo_loader *l)
{
    return (uint64_t)l->recipe->flush_every * (uint64_t)l->per_lane;
}

/* An observing loader's packers' wants (ordo__packer.want) before the lane
 * makes its first epoch, whose units are read before it is planned: the
 * epoch's samples at each source's share of its first step, one more. */
static ordo_status estimate_wants(ordo__mlane *lane, ordo_error *err)
{
    const ordo_loader *l = lane->loader;
    uint64_t *shares = malloc(l->recipe->source_count * sizeof *shares);
    if (!shares)
        return ordo__error(err, ORDO_NOMEM, "out of memory setting up lane %d", lane->index);
    uint64_t flush = (uint64_t)l->recipe->flush_every;
    ordo__step_shares(l->recipe, (int64_t)((uint64_t)lane->plan.step / flush * flush + 1), shares);
    for (uint32_t s = 0; s < l->recipe->source_count; s++) {
        unsigned __int128 samples =
            (unsigned __int128)epoch_samples(l) * shares[s] / ORDO__SHARE_ONE + 1;
        lane->packers[s].want = (uint64_t)samples * (uint64_t)l->recipe->sample_len;
    }
    free(shares);
    return ORDO_OK;
}

/* Sets a logical lane up; see pipeline.h. */
ordo_status ordo__mlane_init(ordo__mlane *lane, ordo_loader *l, int index, ordo__unit_list *units,
                             const ordo__pos *positions, const ordo__plan *plan, uint64_t epoch,
                             uint64_t discard, ordo_error *err)
{
    memset(lane, 0, sizeof *lane);
    const ordo_recipe *r = l->recipe;
    uint32_t n = r->source_count;
    lane->loader = l;
    lane->index = index;
    lane->epoch = UINT64_MAX;
    lane->discard = discard;
    lane->check.position = epoch * epoch_samples(l);
    ordo_status status = ordo__plan_init(&lane->plan, r, err);
    if (status != ORDO_OK)
        return status;
    ordo__plan_copy(&lane->plan, plan);
    lane->packers = calloc(n, sizeof *lane->packers);
    lane->start = calloc(n, sizeof *lane->start);
    lane->samples = calloc(epoch_samples(l), sizeof *lane->samples);
    lane->sources = calloc(epoch_samples(l), sizeof *lane->sources);
    if (!lane->packers || !lane->start || !lane->samples || !lane->sources)
        return ordo__error(err, ORDO_NOMEM, "out of memory setting up lane %d", index);
    lane->next = epoch_samples(l); /* nothing held */
    for (uint32_t s = 0; s < n; s++) {
        ordo__pos pos = positions ? positions[s] : (ordo__pos){0, 0, 0, 0};
        status = ordo__packer_init(&lane->packers[s], l, index, s, units[s], pos, err);
        units[s] = (ordo__unit_list){0}; /* the packer owns them, even when it failed */
        if (status != ORDO_OK)
            return status;
        lane->start[s] = pos;
    }
    return l->observe ? estimate_wants(lane, err) : ORDO_OK;
}

/* Frees what the lane holds (its packers' units must not be in flight). */
void ordo__mlane_free(ordo__mlane *lane)
{
    const ordo_loader *l = lane->loader;
    if (!l)
        return;
    for (uint32_t s = 0; lane->packers && s < l->recipe->source_count; s++)
        if (lane->packers[s].loader)
            ordo__packer_free(&lane->packers[s]);
    for (uint64_t i = 0; lane->samples && i < epoch_samples(l); i++)
        ordo__sample_free(lane->samples[i]);
    free(lane->packers);
    free(lane->start);
    free(lane->samples);
    free(lane->sources);
    ordo__check_free(&lane->check);
    if (lane->plan.recipe)
        ordo__plan_free(&lane->plan);
    memset(lane, 0, sizeof *lane);
}

/* Issues every packer's next units; see pipeline.h. */
void ordo__mlane_issue(ordo__mlane *lane, int depth, ordo__work **chain)
{
    for (uint32_t s = 0; s < lane->loader->recipe->source_count; s++)
        ordo__packer_issue(&lane->packers[s], depth, chain);
}

/* The lane's slots of the next flush epoch's steps, from the slot plan. */
static void plan_epoch(ordo__mlane *lane, uint64_t epoch)
{
    const ordo_loader *l = lane->loader;
    uint64_t per_lane = (uint64_t)l->per_lane, flush = (uint64_t)l->recipe->flush_every;
    for (uint64_t k = 0; k < flush; k++) {
        int64_t step = (int64_t)(epoch * flush + k + 1);
        ordo__plan_next(&lane->plan, lane->plan.counts);
        ordo__slot_sources(l->recipe, &lane->loader->slot_cache, step, lane->plan.counts,
                           (uint64_t)lane->index * per_lane, per_lane,
                           lane->sources + k * per_lane);
    }
}

/* Source s's samples of the epoch, packed in order and placed on its
 * slots: in slot order, or permuted by (seed, lane, source, epoch). */
static ordo_status fill_source(ordo__mlane *lane, uint32_t s, uint64_t epoch, ordo_error *err)
{
    const ordo_loader *l = lane->loader;
    uint64_t total = epoch_samples(l), count = 0;
    for (uint64_t i = 0; i < total; i++)
        count += lane->sources[i] == s;
    if (count == 0)
        return ORDO_OK;
    ordo__permutation perm = {0};
    if (l->recipe->shuffle) /* else slot order */
        ordo__permutation_init(&perm, count, l->recipe->seed, "shuffle",
                               (uint64_t)lane->index << 32 | s, epoch);
    ordo__sample **mine = calloc(count, sizeof *mine);
    if (!mine)
        return ordo__error(err, ORDO_NOMEM, "out of memory packing lane %d", lane->index);
    ordo_status status = ORDO_OK;
    for (uint64_t i = 0; i < count && status == ORDO_OK; i++) {
        if (!(mine[i] = ordo__sample_new(l->recipe, epoch))) {
            status = ordo__error(err, ORDO_NOMEM, "out of memory packing lane %d", lane->index);
            break;
        }
        mine[i]->source = (int32_t)s;
        mine[i]->source_tokens[s] = (uint32_t)l->recipe->sample_len;
        if (l->observe && !(mine[i]->pieces = calloc(1, sizeof *mine[i]->pieces))) {
            status = ordo__error(err, ORDO_NOMEM, "out of memory packing lane %d", lane->index);
            break;
        }
        status = ordo__packer_fill(&lane->packers[s], mine[i]->tokens, mine[i]->doc_start,
                                   mine[i]->pieces, err);
    }
    for (uint64_t i = 0, j = 0; status == ORDO_OK && i < total; i++)
        if (lane->sources[i] == s) {
            uint64_t from = l->recipe->shuffle ? ordo__permutation_at(&perm, j) : j;
            lane->samples[i] = mine[from];
            mine[from] = NULL;
            j++;
        }
    for (uint64_t i = 0; i < count; i++)
        ordo__sample_free(mine[i]);
    free(mine);
    return status;
}

/* Makes the next flush epoch's samples. */
static ordo_status produce(ordo__mlane *lane, ordo_error *err)
{
    const ordo_loader *l = lane->loader;
    uint32_t n = l->recipe->source_count;
    uint64_t epoch = lane->epoch == UINT64_MAX
                         ? (uint64_t)lane->plan.step / (uint64_t)l->recipe->flush_every
                         : lane->epoch + 1;
    for (uint32_t s = 0; s < n; s++)
        lane->start[s] = lane->packers[s].pos;
    plan_epoch(lane, epoch);
    for (uint32_t s = 0; l->observe && s < n; s++) /* what each packer packs of the epoch */
        lane->packers[s].want = 0;
    for (uint64_t i = 0; l->observe && i < epoch_samples(l); i++)
        lane->packers[lane->sources[i]].want += (uint64_t)l->recipe->sample_len;
    ordo__work *chain = NULL;
    ordo__mlane_issue(lane, l->prefetch, &chain);
    ordo__pool_submit(lane->loader, chain);
    ordo_status status = ORDO_OK;
    for (uint32_t s = 0; s < n && status == ORDO_OK; s++)
        status = fill_source(lane, s, epoch, err);
    lane->epoch = epoch;
    lane->next = 0;
    return status;
}

/* The next sample of the epoch, making the epoch when it is used up. */
static ordo_status next_sample(ordo__mlane *lane, ordo__sample **sample, ordo_error *err)
{
    if (lane->next == epoch_samples(lane->loader)) {
        ordo_status status = produce(lane, err);
        if (status != ORDO_OK)
            return status;
    }
    *sample = lane->samples[lane->next];
    lane->samples[lane->next++] = NULL;
    return ORDO_OK;
}

/* Drops what a resume regenerated, checking it; see pipeline.h. */
ordo_status ordo__mlane_drop(ordo__mlane *lane, ordo_error *err)
{
    while (lane->discard > 0) {
        ordo__sample *s = NULL;
        ordo_status status = next_sample(lane, &s, err);
        if (status == ORDO_OK)
            status = ordo__check_sample(lane->loader, lane->index, &lane->check, s->tokens, err);
        ordo__sample_free(s);
        if (status != ORDO_OK)
            return status;
        lane->discard--;
    }
    lane->check.ledger = NULL; /* every dropped step checked */
    return ORDO_OK;
}

/* The next sample to deliver; see pipeline.h. */
ordo_status ordo__mlane_take(ordo__mlane *lane, ordo__sample **sample, ordo_error *err)
{
    *sample = NULL;
    ordo_status status = ordo__mlane_drop(lane, err);
    return status == ORDO_OK ? next_sample(lane, sample, err) : status;
}

/* The positions a checkpoint keeps; see pipeline.h. */
const ordo__pos *ordo__mlane_positions(const ordo__mlane *lane)
{
    return lane->start;
}
