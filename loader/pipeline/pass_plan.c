/* TokenEstimation as a plan (docs/api.md, the audit's "passes"): how
 * often a source repeats. From each source's measured tokens per byte, the
 * tokens of one pass over its documents, and from the slot plan, the steps
 * at which the source starts each next pass within a horizon. */
#include <stdlib.h>
#include <string.h>

#include "slot_plan.h"
#include "units.h"

/* Bytes, documents and tokens of one pass; tokens per byte leave the
 * special tokens out (the sample counted eos, and bos when the recipe has
 * one, per kept document) so that each document adds exactly those. */
static void pass_size(const ordo_recipe *r, uint32_t s, ordo_source_plan *plan)
{
    const ordo__source *src = &r->sources[s];
    for (uint32_t c = 0; c < src->chunk_count; c++) {
        const ordo__chunk *chunk = &src->shards[src->chunks[c].shard].chunks[src->chunks[c].chunk];
        plan->bytes += chunk->raw_length;
        plan->documents += chunk->records;
    }
    for (uint32_t i = 0; i < src->shard_count; i++) {
        const ordo__counts *counts = &src->shards[i].counts;
        plan->records.read += counts->read;
        plan->records.passed += counts->passed;
        plan->records.filtered += counts->filtered;
        plan->records.empty += counts->empty;
    }
    uint64_t specials = ordo__doc_specials(r);
    uint64_t text_tokens = src->sample_tokens > src->sample_records * specials
                               ? src->sample_tokens - src->sample_records * specials
                               : 0;
    uint64_t sample_bytes = src->sample_bytes ? src->sample_bytes : 1;
    plan->tokens_per_byte = (double)text_tokens / (double)sample_bytes;
    unsigned __int128 tokens =
        ((unsigned __int128)plan->bytes * text_tokens + sample_bytes / 2) / sample_bytes;
    plan->tokens_per_pass = (uint64_t)tokens + plan->documents * specials;
    plan->samples_per_pass = (double)plan->tokens_per_pass / (double)r->sample_len;
}

/* Bytes of the lightest and heaviest lane's units of source s, dealt as
 * the loader deals them (units.c), and of all lanes' into *total. */
static ordo_status lane_bytes(const ordo_recipe *r, uint32_t s, ordo_source_plan *plan,
                              uint64_t *total, ordo_error *err)
{
    uint32_t lanes = (uint32_t)r->lanes;
    ordo__unit_list *lists = calloc(lanes, sizeof *lists);
    if (!lists)
        return ordo__error(err, ORDO_NOMEM, "out of memory planning passes");
    ordo_status status = ordo__units_partition(r, s, 0, lanes, lists, err);
    const ordo__source *src = &r->sources[s];
    for (uint32_t l = 0; status == ORDO_OK && l < lanes; l++) {
        uint64_t bytes = 0;
        for (uint32_t u = 0; u < lists[l].count; u++) {
            const ordo__unit_ref *unit = &lists[l].units[u];
            const ordo__chunk *chunk = &src->shards[unit->ref.shard].chunks[unit->ref.chunk];
            bytes += chunk->raw_length * unit->count / (chunk->records ? chunk->records : 1);
        }
        if (l == 0 || bytes < plan->lane_bytes_min)
            plan->lane_bytes_min = bytes;
        if (bytes > plan->lane_bytes_max)
            plan->lane_bytes_max = bytes;
        *total += bytes;
    }
    for (uint32_t l = 0; status == ORDO_OK && l < lanes; l++)
        ordo__unit_list_free(&lists[l]);
    free(lists);
    return status;
}

/* The pass that the source's `given` samples reach: the one holding its
 * last token (0 before any sample). */
static int64_t pass_of(uint64_t given, const ordo_recipe *r, const ordo_source_plan *plan)
{
    if (given == 0)
        return 0;
    unsigned __int128 last = (unsigned __int128)given * (unsigned)r->sample_len - 1;
    return (int64_t)(last / plan->tokens_per_pass) + 1;
}

/* Whether a lane of `bytes` of the source's `total` lane bytes has used up
 * its first pass once the source got `given` samples, a lane taking 1/L. */
static int lane_past_first(uint64_t given, uint64_t bytes, uint64_t total, const ordo_recipe *r,
                           const ordo_source_plan *plan)
{
    unsigned __int128 used = (unsigned __int128)given * (unsigned)r->sample_len * total;
    unsigned __int128 owned = (unsigned __int128)plan->tokens_per_pass * bytes * (unsigned)r->lanes;
    return used > owned;
}

/* Records what step `step` changed for one source, whose samples are now
 * `given`. */
static void note_step(const ordo_recipe *r, int64_t step, uint64_t given, uint64_t lane_total,
                      ordo_source_plan *plan)
{
    int64_t pass = pass_of(given, r, plan);
    for (int64_t k = plan->pass_count + 1; k <= pass && k <= ORDO_PASS_STARTS; k++)
        plan->pass_start[k - 1] = step;
    if (pass > plan->pass_count)
        plan->last_pass_start = step;
    plan->pass_count = pass;
    if (!plan->lane_pass2_first &&
        lane_past_first(given, plan->lane_bytes_min, lane_total, r, plan))
        plan->lane_pass2_first = step;
    if (!plan->lane_pass2_last && lane_past_first(given, plan->lane_bytes_max, lane_total, r, plan))
        plan->lane_pass2_last = step;
}

/* Walks the slot plan over the horizon; lane_total[s] is the sum of the
 * source's lane bytes. */
static ordo_status walk(const ordo_recipe *r, int64_t steps, const uint64_t *lane_total,
                        ordo_source_plan *plans, ordo_error *err)
{
    ordo__plan plan;
    ordo_status status = ordo__plan_init(&plan, r, err);
    uint64_t *counts = status == ORDO_OK ? calloc(r->source_count, sizeof *counts) : NULL;
    if (status == ORDO_OK && !counts)
        status = ordo__error(err, ORDO_NOMEM, "out of memory planning passes");
    for (int64_t step = 1; status == ORDO_OK && step <= steps; step++) {
        ordo__plan_next(&plan, counts);
        for (uint32_t s = 0; s < r->source_count; s++)
            if (counts[s]) {
                plans[s].samples += counts[s];
                note_step(r, step, plans[s].samples, lane_total[s], &plans[s]);
            }
    }
    free(counts);
    if (plan.recipe)
        ordo__plan_free(&plan);
    return status;
}

/* Every source's passes within a horizon; see ordo.h. */
ordo_status ordo_recipe_passes(const ordo_recipe *r, int64_t steps, ordo_source_plan *plans,
                               ordo_error *err)
{
    if (steps < 1 || steps > ORDO_PASS_STEPS_MAX)
        return ordo__error(err, ORDO_INVALID, "a horizon of %lld steps is not between 1 and %lld",
                           (long long)steps, (long long)ORDO_PASS_STEPS_MAX);
    if (!r->planned)
        return ordo__error(err, ORDO_INVALID,
                           "recipe %s is not indexed: its passes need its chunk tables and "
                           "token estimates (ordo index)",
                           r->id);
    uint64_t *lane_total = calloc(r->source_count, sizeof *lane_total);
    if (!lane_total)
        return ordo__error(err, ORDO_NOMEM, "out of memory planning passes");
    ordo_status status = ORDO_OK;
    for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++) {
        memset(&plans[s], 0, sizeof plans[s]);
        plans[s].name = r->sources[s].name;
        plans[s].steps = steps;
        pass_size(r, s, &plans[s]);
        status = lane_bytes(r, s, &plans[s], &lane_total[s], err);
    }
    if (status == ORDO_OK)
        status = walk(r, steps, lane_total, plans, err);
    for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++)
        plans[s].passes = (double)plans[s].samples / plans[s].samples_per_pass;
    free(lane_total);
    return status == ORDO_OK ? ordo__ok(err) : status;
}
