/* A run and its first segment as one request makes them: the lane count
 * from the stored recipe, the lane plan checked, all before anything is
 * recorded. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* The run as it is already recorded, if it is: a first segment at another
 * world size is refused (a new world size is a new segment). */
static ordo_status check_existing(ordo_ledger *ledger, const ordo_run_start_spec *spec,
                                  int *has_segments, ordo_error *err)
{
    ordo_run_info existing;
    ordo_error lookup;
    *has_segments = 0;
    if (ordo_run_get(ledger, spec->run.name, &existing, &lookup) != ORDO_OK)
        return ORDO_OK; /* a new run (ordo_run_create reports any other trouble) */
    *has_segments = existing.segments > 0;
    if (*has_segments && existing.world_size != spec->world_size)
        return ordo__error(err, ORDO_CONFLICT,
                           "run '%s' exists at world size %d, not %d (a new world size is a "
                           "segment: POST .../segments)",
                           spec->run.name, existing.world_size, spec->world_size);
    return ORDO_OK;
}

/* What ordo_segment_add would refuse of the first segment beyond its plan,
 * refused before the run is created (the same words). */
static ordo_status check_segment_fields(const ordo_run_start_spec *spec, ordo_error *err)
{
    if (spec->resumed_from != 0)
        return ordo__error(err, ORDO_INVALID,
                           "resumed-from step (%lld) must be before the start step (1)",
                           (long long)spec->resumed_from);
    ordo_status status = ORDO_OK;
    if (spec->workers)
        status = ordo__check_json_object(spec->workers, "worker settings", err);
    if (status == ORDO_OK && spec->host)
        status = ordo__check_name(spec->host, "host", err);
    return status;
}

/* Creates a run with its first segment; see ordo.h. */
ordo_status ordo_run_start(ordo_ledger *ledger, const ordo_run_start_spec *spec,
                           ordo_run_started *started, ordo_error *err)
{
    memset(started, 0, sizeof *started);
    ordo_run_spec run = spec->run;
    int *ranks = NULL, plan_lanes = 0, has_segments = 0;
    ordo_status status = ordo_run_name_check(run.name, err);
    if (status == ORDO_OK)
        status = ordo_recipe_lanes(ledger, run.recipe_id, &run.lanes, err);
    if (status == ORDO_OK)
        status =
            ordo_lane_plan_parse(run.lanes, spec->world_size, spec->lane_binding, spec->lane_plan,
                                 spec->lane_plan_len, &ranks, &plan_lanes, err);
    if (status == ORDO_OK)
        status = check_segment_fields(spec, err);
    if (status == ORDO_OK)
        status = check_existing(ledger, spec, &has_segments, err);
    if (status == ORDO_OK)
        status = ordo_run_create(ledger, &run, &started->run_id, err);
    if (status == ORDO_OK && !has_segments) {
        ordo_segment_spec segment = {.world_size = spec->world_size,
                                     .start_step = 1,
                                     .lanes = plan_lanes,
                                     .lane_ranks = ranks,
                                     .lane_binding = spec->lane_binding,
                                     .workers = spec->workers,
                                     .host = spec->host,
                                     .resumed_from = spec->resumed_from};
        status = ordo_segment_add(ledger, started->run_id, &segment, &started->segment_id, err);
        started->created = status == ORDO_OK;
    }
    free(ranks);
    return status == ORDO_OK ? ordo__ok(err) : status;
}
