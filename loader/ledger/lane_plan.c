/* Lane plans: which rank owns which lane of a segment (docs/ledger.md,
 * "Recording guarantees"), checked once here for the service, the CLI and
 * ordo_segment_add. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define MAX_WORLD_SIZE 65536

/* 1 for rank binding, 0 for logical, -1 (err filled) for anything else. */
static int rank_bound(ordo_lane_binding binding, ordo_error *err)
{
    if (binding == ORDO_BINDING_LOGICAL)
        return 0;
    if (binding == ORDO_BINDING_RANK)
        return 1;
    ordo__error(err, ORDO_INVALID, "lane_binding must be 'logical' or 'rank'");
    return -1;
}

/* The binding, the world size and (logical) L % W: what the plan's shape
 * rests on. */
static ordo_status check_shape(int lanes, int world_size, int bound, ordo_error *err)
{
    if (world_size < 1 || world_size > MAX_WORLD_SIZE)
        return ordo__error(err, ORDO_INVALID, "world size (%d) must be between 1 and %d",
                           world_size, MAX_WORLD_SIZE);
    if (bound && lanes != world_size)
        return ordo__error(err, ORDO_INVALID,
                           "a rank-bound segment has one lane per rank: lanes (%d) must equal "
                           "world size (%d)",
                           lanes, world_size);
    if (!bound && lanes % world_size != 0)
        return ordo__error(err, ORDO_INVALID, "lanes (%d) must be divisible by world size (%d)",
                           lanes, world_size);
    return ORDO_OK;
}

/* Checks a lane plan given lane by lane; see ordo.h. */
ordo_status ordo_lane_plan_check(int lanes, int world_size, ordo_lane_binding binding,
                                 const int *lane_ranks, ordo_error *err)
{
    int bound = rank_bound(binding, err);
    if (bound < 0)
        return ORDO_INVALID;
    ordo_status status = check_shape(lanes, world_size, bound, err);
    if (status != ORDO_OK)
        return status;
    if (lanes < 1 || !lane_ranks)
        return ordo__error(err, ORDO_INVALID, "lane plan is empty");
    int *owned = calloc((size_t)world_size, sizeof *owned);
    if (!owned)
        return ordo__error(err, ORDO_NOMEM, "out of memory checking a lane plan");
    for (int lane = 0; lane < lanes && status == ORDO_OK; lane++) {
        int rank = lane_ranks[lane];
        if (rank < 0 || rank >= world_size)
            status = ordo__error(err, ORDO_INVALID,
                                 "lane %d is assigned to rank %d, outside world size %d", lane,
                                 rank, world_size);
        else
            owned[rank]++;
    }
    int per = lanes / world_size; /* 1 when rank-bound: lanes == world size */
    for (int rank = 0; rank < world_size && status == ORDO_OK; rank++)
        if (owned[rank] != per)
            status = ordo__error(err, ORDO_INVALID,
                                 "lane_plan gives rank %d %d lanes; every rank owns %d", rank,
                                 owned[rank], per);
    free(owned);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* lane_ranks from JSON [[lanes of rank 0], ...]: each of the `lanes` lanes
 * listed once, by one of the `world_size` ranks. An entry that is not an
 * array lists no lanes. */
static ordo_status read_plan(json_t *plan, int lanes, int world_size, int *ranks, ordo_error *err)
{
    if (!json_is_array(plan) || (int)json_array_size(plan) != world_size)
        return ordo__error(err, ORDO_INVALID,
                           "lane_plan must be an array of %d arrays (one per "
                           "rank)",
                           world_size);
    for (int l = 0; l < lanes; l++)
        ranks[l] = -1;
    size_t r;
    json_t *owned;
    json_array_foreach(plan, r, owned)
    {
        size_t i;
        json_t *lane;
        json_array_foreach(owned, i, lane)
        {
            json_int_t l = json_integer_value(lane);
            if (!json_is_integer(lane) || l < 0 || l >= lanes || ranks[l] != -1)
                return ordo__error(err, ORDO_INVALID,
                                   "lane_plan: rank %zu lists lane %lld, which is not one of "
                                   "the %d lanes or is listed twice",
                                   r, (long long)l, lanes);
            ranks[l] = (int)r;
        }
    }
    for (int l = 0; l < lanes; l++)
        if (ranks[l] < 0)
            return ordo__error(err, ORDO_INVALID, "lane_plan leaves lane %d without a rank", l);
    return ORDO_OK;
}

/* The plan from its JSON text, or the binding's default without one. */
static ordo_status fill_plan(const char *plan, size_t len, int lanes, int world_size, int bound,
                             int *ranks, ordo_error *err)
{
    if (!plan) {
        int per = bound ? 1 : lanes / world_size;
        for (int l = 0; l < lanes; l++)
            ranks[l] = l / per;
        return ORDO_OK;
    }
    json_error_t jerr;
    json_t *root = json_loadb(plan, len, JSON_DECODE_ANY, &jerr);
    if (!root)
        return ordo__error(err, ORDO_INVALID,
                           "lane_plan is not valid JSON: line %d, column %d: "
                           "%s",
                           jerr.line, jerr.column, jerr.text);
    ordo_status status = read_plan(root, lanes, world_size, ranks, err);
    json_decref(root);
    return status;
}

/* Reads and checks a segment's lane plan; see ordo.h. */
ordo_status ordo_lane_plan_parse(int lanes, int world_size, ordo_lane_binding binding,
                                 const char *plan, size_t len, int **lane_ranks, int *plan_lanes,
                                 ordo_error *err)
{
    *lane_ranks = NULL;
    *plan_lanes = 0;
    int bound = rank_bound(binding, err);
    if (bound < 0)
        return ORDO_INVALID;
    int count = bound ? world_size : lanes;
    ordo_status status = check_shape(count, world_size, bound, err);
    if (status != ORDO_OK)
        return status;
    if (count < 1)
        return ordo__error(err, ORDO_INVALID, "lane plan is empty");
    int *ranks = malloc((size_t)count * sizeof *ranks);
    if (!ranks)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a lane plan");
    status = fill_plan(plan, len, count, world_size, bound, ranks, err);
    if (status == ORDO_OK)
        status = ordo_lane_plan_check(count, world_size, binding, ranks, err);
    if (status != ORDO_OK) {
        free(ranks);
        return status;
    }
    *lane_ranks = ranks;
    *plan_lanes = count;
    return ORDO_OK;
}
