/* The mixture: the sources' weights, constant or scheduled by step, as
 * exact integer shares per step (docs/recipe.md, "Mixture schedules"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

#define MAX_ENTRIES 4096

static const char *const entry_keys[] = {"step", "weights", "linear_from", NULL};

/* Integer shares of `weights` (finite, >= 0, positive sum) summing to
 * exactly ORDO__SHARE_ONE: floors, then the rest one by one to the largest
 * fractional parts (ties to the lower index), positive weights only. */
static void shares_of(const double *weights, uint32_t n, uint64_t *shares)
{
    double total = 0;
    for (uint32_t s = 0; s < n; s++)
        total += weights[s];
    uint64_t given = 0;
    for (uint32_t s = 0; s < n; s++) {
        double exact = weights[s] / total * (double)ORDO__SHARE_ONE;
        shares[s] = exact >= (double)ORDO__SHARE_ONE ? ORDO__SHARE_ONE : (uint64_t)exact;
        given += shares[s];
    }
    while (given > ORDO__SHARE_ONE) { /* rounding of the quotients: take back */
        uint32_t most = 0;
        for (uint32_t s = 1; s < n; s++)
            if (shares[s] > shares[most])
                most = s;
        shares[most]--, given--;
    }
    while (given < ORDO__SHARE_ONE) {
        uint32_t best = n;
        double best_part = -1;
        for (uint32_t s = 0; s < n; s++) {
            if (weights[s] <= 0)
                continue;
            double part = weights[s] / total * (double)ORDO__SHARE_ONE - (double)shares[s];
            if (part > best_part) {
                best = s;
                best_part = part;
            }
        }
        shares[best]++, given++;
    }
}

static ordo_status new_entry(ordo_recipe *r, int64_t step, int64_t linear_from, ordo_error *err)
{
    ordo__mix_entry *grown = realloc(r->mix, (r->mix_count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    r->mix = grown;
    ordo__mix_entry *e = &grown[r->mix_count++];
    e->step = step;
    e->linear_from = linear_from;
    e->shares = calloc(r->source_count, sizeof *e->shares);
    e->weights = calloc(r->source_count, sizeof *e->weights);
    if (!e->shares || !e->weights)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    return ORDO_OK;
}

static uint32_t source_index(const ordo_recipe *r, const char *name)
{
    for (uint32_t s = 0; s < r->source_count; s++)
        if (strcmp(r->sources[s].name, name) == 0)
            return s;
    return UINT32_MAX;
}

/* One entry's "weights": source names to finite weights >= 0, positive sum. */
static ordo_status entry_weights(ordo_recipe *r, json_t *weights, size_t at, ordo__mix_entry *e,
                                 ordo_error *err)
{
    if (!json_is_object(weights) || json_object_size(weights) == 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: schedule[%zu]: 'weights' must be an object of source "
                           "names to weights",
                           at);
    const char *name;
    json_t *value;
    double total = 0;
    json_object_foreach(weights, name, value)
    {
        uint32_t s = source_index(r, name);
        if (s == UINT32_MAX)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: schedule[%zu]: '%s' is not a source of the recipe", at,
                               name);
        double w = json_number_value(value);
        if (!json_is_number(value) || !isfinite(w) || w < 0 || w > 1e300)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: schedule[%zu]: the weight of '%s' must be a finite "
                               "number >= 0",
                               at, name);
        e->weights[s] = w;
        total += w;
    }
    if (!(total > 0))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: schedule[%zu]: the weights must have a positive sum", at);
    shares_of(e->weights, r->source_count, e->shares);
    return ORDO_OK;
}

static ordo_status entry_step(json_t *entry, const char *key, size_t at, int64_t *out,
                              ordo_error *err)
{
    json_t *v = json_object_get(entry, key);
    *out = 0;
    if (!v)
        return ORDO_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: schedule[%zu]: '%s' must be an integer from 1 to %lld", at, key,
                           (long long)ORDO_STEP_MAX);
    *out = json_integer_value(v);
    return ORDO_OK;
}

static ordo_status parse_entry(ordo_recipe *r, json_t *entry, size_t at, ordo_error *err)
{
    char where[48];
    snprintf(where, sizeof where, "schedule[%zu]", at);
    if (!json_is_object(entry))
        return ordo__error(err, ORDO_INVALID, "recipe: %s must be an object", where);
    const char *key;
    json_t *value;
    json_object_foreach(entry, key, value)
    {
        int known = 0;
        for (size_t i = 0; entry_keys[i]; i++)
            known |= strcmp(key, entry_keys[i]) == 0;
        if (!known)
            return ordo__error(err, ORDO_INVALID, "recipe: unknown key '%s' in %s", key, where);
    }
    int64_t step = 0, from = 0;
    ordo_status status = entry_step(entry, "step", at, &step, err);
    if (status == ORDO_OK)
        status = entry_step(entry, "linear_from", at, &from, err);
    if (status != ORDO_OK)
        return status;
    const ordo__mix_entry *previous = at ? &r->mix[at - 1] : NULL;
    if (!step)
        return ordo__error(err, ORDO_INVALID, "recipe: %s needs a 'step'", where);
    if (!previous && step != 1)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: schedule[0] is at step %lld; the first entry must be at "
                           "step 1",
                           (long long)step);
    if (previous && step <= previous->step)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: %s is at step %lld, not after the previous entry's %lld", where,
                           (long long)step, (long long)previous->step);
    if (from && (!previous || from < previous->step || from >= step))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: %s: 'linear_from' (%lld) must be from the previous entry's "
                           "step (%lld) to before this entry's (%lld)",
                           where, (long long)from, (long long)(previous ? previous->step : 0),
                           (long long)step);
    status = new_entry(r, step, from, err);
    if (status == ORDO_OK)
        status = entry_weights(r, json_object_get(entry, "weights"), at, &r->mix[at], err);
    return status;
}

/* Parses the schedule, or makes the one entry of the sources' weights. */
ordo_status ordo__mixture_parse(ordo_recipe *r, json_t *root, ordo_error *err)
{
    json_t *schedule = json_object_get(root, "schedule");
    if (!schedule) {
        ordo_status status = new_entry(r, 1, 0, err);
        for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++)
            r->mix[0].weights[s] = r->sources[s].weight;
        if (status == ORDO_OK)
            shares_of(r->mix[0].weights, r->source_count, r->mix[0].shares);
        return status;
    }
    if (!json_is_array(schedule) || json_array_size(schedule) == 0 ||
        json_array_size(schedule) > MAX_ENTRIES)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: 'schedule' must be an array of 1 to %d entries", MAX_ENTRIES);
    r->scheduled = 1;
    size_t i;
    json_t *entry;
    json_array_foreach(schedule, i, entry)
    {
        ordo_status status = parse_entry(r, entry, i, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

/* The canonical schedule; see recipe.h. */
json_t *ordo__mixture_canonical(const ordo_recipe *r)
{
    if (!r->scheduled)
        return NULL;
    json_t *entries = json_array();
    for (uint32_t i = 0; entries && i < r->mix_count; i++) {
        const ordo__mix_entry *e = &r->mix[i];
        json_t *weights = json_object();
        for (uint32_t s = 0; weights && s < r->source_count; s++)
            if (e->weights[s] > 0)
                json_object_set_new(weights, r->sources[s].name, json_real(e->weights[s]));
        json_t *item = json_pack("{s:I, s:o}", "step", (json_int_t)e->step, "weights", weights);
        if (item && e->linear_from)
            json_object_set_new(item, "linear_from", json_integer(e->linear_from));
        json_array_append_new(entries, item);
    }
    return entries;
}

void ordo__mixture_free(ordo_recipe *r)
{
    for (uint32_t i = 0; r->mix && i < r->mix_count; i++) {
        free(r->mix[i].shares);
        free(r->mix[i].weights);
    }
    free(r->mix);
    r->mix = NULL;
    r->mix_count = 0;
}

/* The shares at `step`: the last entry at or before it, or on a ramp the
 * exact integer interpolation (floors, then the remainders to the largest
 * ones, ties to the lower index), summing to ORDO__SHARE_ONE. */
void ordo__step_shares(const ordo_recipe *r, int64_t step, uint64_t *shares)
{
    uint32_t n = r->source_count, i = 0;
    while (i + 1 < r->mix_count && r->mix[i + 1].step <= step)
        i++;
    const ordo__mix_entry *e = &r->mix[i], *next = i + 1 < r->mix_count ? &r->mix[i + 1] : NULL;
    if (!next || !next->linear_from || step <= next->linear_from) {
        memcpy(shares, e->shares, n * sizeof *shares);
        return;
    }
    uint64_t span = (uint64_t)(next->step - next->linear_from);
    uint64_t into = (uint64_t)(step - next->linear_from), given = 0;
    for (uint32_t s = 0; s < n; s++) {
        unsigned __int128 num = (unsigned __int128)e->shares[s] * (span - into) +
                                (unsigned __int128)next->shares[s] * into;
        shares[s] = (uint64_t)(num / span);
        given += shares[s];
    }
    /* fewer than n remainders to give: each to the largest remainder not
     * yet given one (a source given one has shares above num / span) */
    while (given < ORDO__SHARE_ONE) {
        uint32_t best = n;
        uint64_t best_rem = 0;
        for (uint32_t s = 0; s < n; s++) {
            unsigned __int128 num = (unsigned __int128)e->shares[s] * (span - into) +
                                    (unsigned __int128)next->shares[s] * into;
            unsigned __int128 floor = (unsigned __int128)shares[s] * span;
            if (floor > num)
                continue; /* given one already */
            uint64_t rem = (uint64_t)(num - floor);
            if (best == n || rem > best_rem) {
                best = s;
                best_rem = rem;
            }
        }
        shares[best]++, given++;
    }
}

/* The weights at a step, as doubles; see ordo.h. */
ordo_status ordo_recipe_step_weights(const ordo_recipe *r, int64_t step, double *weights,
                                     ordo_error *err)
{
    if (step < 1 || step > ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "step %lld is not between 1 and %lld",
                           (long long)step, (long long)ORDO_STEP_MAX);
    uint64_t *shares = calloc(r->source_count, sizeof *shares);
    if (!shares)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo__step_shares(r, step, shares);
    for (uint32_t s = 0; s < r->source_count; s++)
        weights[s] = (double)shares[s] / (double)ORDO__SHARE_ONE;
    free(shares);
    return ordo__ok(err);
}
