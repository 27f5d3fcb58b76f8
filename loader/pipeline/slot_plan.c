/* The slot plan: per step, each source's count of samples apportioned from
 * cumulative targets in exact integers, placed on the step's slots by a
 * seeded permutation of (seed, step). */
#include <stdlib.h>
#include <string.h>

#include "permute.h"
#include "slot_plan.h"

/* Sets a plan up at step 0. */
ordo_status ordo__plan_init(ordo__plan *p, const ordo_recipe *r, ordo_error *err)
{
    memset(p, 0, sizeof *p);
    size_t n = r->source_count;
    p->recipe = r;
    p->target = calloc(n, sizeof *p->target);
    p->given = calloc(n, sizeof *p->given);
    p->shares = calloc(n, sizeof *p->shares);
    p->rest = calloc(n, sizeof *p->rest);
    p->counts = calloc(n, sizeof *p->counts);
    if (!p->target || !p->given || !p->shares || !p->rest || !p->counts) {
        ordo__plan_free(p);
        return ordo__error(err, ORDO_NOMEM, "out of memory planning slots");
    }
    return ORDO_OK;
}

void ordo__plan_free(ordo__plan *p)
{
    free(p->target);
    free(p->given);
    free(p->shares);
    free(p->rest);
    free(p->counts);
    memset(p, 0, sizeof *p);
}

/* Copies a plan's position; see slot_plan.h. */
void ordo__plan_copy(ordo__plan *dst, const ordo__plan *src)
{
    size_t n = src->recipe->source_count;
    dst->step = src->step;
    memcpy(dst->target, src->target, n * sizeof *dst->target);
    memcpy(dst->given, src->given, n * sizeof *dst->given);
}

/* The next step's counts. In units of 2^-30 samples, source s is owed
 * rest_s = B * target_s - 2^30 * given_s once this step's shares are added
 * (a pure function of the step). Each source gets floor(rest_s / 2^30)
 * samples (none when it is ahead), then single samples go to the largest
 * remainders (ties to the lower index) until the step holds B, or, when
 * it holds more, are taken back from the smallest with a sample to give.
 * So every cumulative count stays within one sample of its target and
 * each step within two of weight x B. */
void ordo__plan_next(ordo__plan *p, uint64_t *counts)
{
    const ordo_recipe *r = p->recipe;
    uint32_t n = r->source_count;
    const __int128 one = (__int128)ORDO__SHARE_ONE, batch = r->global_batch;
    ordo__step_shares(r, p->step + 1, p->shares);
    int64_t total = 0;
    for (uint32_t s = 0; s < n; s++) {
        p->target[s] += p->shares[s];
        __int128 rest = batch * (__int128)p->target[s] - one * (__int128)p->given[s];
        counts[s] = rest > 0 ? (uint64_t)(rest / one) : 0;
        p->rest[s] = rest - one * (__int128)counts[s];
        total += (int64_t)counts[s];
    }
    while (total < r->global_batch) {
        uint32_t best = 0;
        for (uint32_t s = 1; s < n; s++)
            if (p->rest[s] > p->rest[best])
                best = s;
        counts[best]++, total++;
        p->rest[best] -= one;
    }
    while (total > r->global_batch) {
        uint32_t worst = n;
        for (uint32_t s = 0; s < n; s++)
            if (counts[s] > 0 && (worst == n || p->rest[s] < p->rest[worst]))
                worst = s;
        counts[worst]--, total--;
        p->rest[worst] += one;
    }
    for (uint32_t s = 0; s < n; s++)
        p->given[s] += counts[s];
    p->step++;
}

/* Moves to just after `step`; see slot_plan.h. */
void ordo__plan_seek(ordo__plan *p, int64_t step)
{
    if (p->step > step) {
        size_t n = p->recipe->source_count;
        memset(p->target, 0, n * sizeof *p->target);
        memset(p->given, 0, n * sizeof *p->given);
        p->step = 0;
    }
    while (p->step < step)
        ordo__plan_next(p, p->counts);
}

/* The sources of consecutive slots; see slot_plan.h. */
void ordo__slot_sources(const ordo_recipe *r, ordo__slot_cache *cache, int64_t step,
                        const uint64_t *counts, uint64_t first, uint64_t n, uint32_t *sources)
{
    size_t k = (size_t)((uint64_t)step % ORDO__SLOT_CACHE);
    const ordo__permutation *perm = &cache->perm[k];
    if (cache->step[k] != step) {
        ordo__permutation_init(&cache->perm[k], (uint64_t)r->global_batch, r->seed, "slot-plan",
                               (uint64_t)step, 0);
        cache->step[k] = step;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at = ordo__permutation_at(perm, first + i), below = 0;
        uint32_t s = 0;
        while (s + 1 < r->source_count && at >= below + counts[s])
            below += counts[s++];
        sources[i] = s;
    }
}
