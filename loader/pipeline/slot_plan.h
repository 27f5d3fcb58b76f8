/* The slot plan (docs/recipe.md, "Which source fills each slot"),
 * internal: for every step, how many of the B samples each source fills
 * and which slots they are. A pure function of (recipe, step): it never
 * reads the world size, a lane, a rank or a worker count. */
#ifndef ORDO_SLOT_PLAN_H
#define ORDO_SLOT_PLAN_H

#include "permute.h"
#include "recipe/recipe.h"

/* The apportionment after `step` steps: per source the cumulative shares
 * (units of 2^-30 of a step's batch) and the samples given so far. */
typedef struct ordo__plan {
    const ordo_recipe *recipe;
    int64_t step;
    unsigned __int128 *target; /* S: sum of the shares of steps 1..step */
    uint64_t *given;           /* S: samples of steps 1..step */
    uint64_t *shares;          /* S: scratch */
    __int128 *rest;            /* S: scratch */
    uint64_t *counts;          /* S: scratch */
} ordo__plan;

/* Sets a plan up at step 0. Free with ordo__plan_free. */
ordo_status ordo__plan_init(ordo__plan *plan, const ordo_recipe *recipe, ordo_error *err);
void ordo__plan_free(ordo__plan *plan);

/* Copies src's position into dst (both set up for the same recipe). */
void ordo__plan_copy(ordo__plan *dst, const ordo__plan *src);

/* Plans the next step: counts[s] (S entries) receives how many of its B
 * samples source s fills; they sum to B. */
void ordo__plan_next(ordo__plan *plan, uint64_t *counts);

/* The furthest step a resume plans to (from step 0, ~30 ns a step with
 * three sources): a checkpoint of logical lanes past it is refused. */
#define ORDO__PLAN_STEPS_MAX ((uint64_t)1000000000)

/* Moves the plan to just after `step` (from the start when behind it). */
void ordo__plan_seek(ordo__plan *plan, int64_t step);

/* The slot permutations of recent steps, kept so that the lanes placing
 * the same step seed it once; zeroed: empty (steps start at 1). Only
 * ever a cache: what it holds is a pure function of (recipe, step). */
#define ORDO__SLOT_CACHE 8
typedef struct ordo__slot_cache {
    int64_t step[ORDO__SLOT_CACHE];
    ordo__permutation perm[ORDO__SLOT_CACHE];
} ordo__slot_cache;

/* The sources of slots first .. first+n-1 of `step` (slot j is row
 * j % (B/L) of lane j / (B/L)), whose counts are `counts`, into sources;
 * the step's permutation comes from / goes to `cache`. */
void ordo__slot_sources(const ordo_recipe *recipe, ordo__slot_cache *cache, int64_t step,
                        const uint64_t *counts, uint64_t first, uint64_t n, uint32_t *sources);

#endif
