/* Self-verifying resume (docs/reliability.md), internal. */
#ifndef ORDO_REPLAY_H
#define ORDO_REPLAY_H

#include "lane_state.h"

/* Refuses a lane record the recipe cannot have produced by `step`, naming
 * the step, the lane and the numbers: delivered samples outside
 * per_lane..step*per_lane (0 before any step), a flush epoch beyond what the
 * delivered tokens allow, or chunks taken / tokens estimated that differ
 * from the lane's work source replayed to the start of that epoch. */
ordo_status ordo__replay_check_record(const ordo_recipe *recipe, uint64_t stride,
                                      const ordo__stream *streams, int per_lane, int64_t step,
                                      const ordo__lane_record *rec, ordo_error *err);

/* Refuses a logical lane record the recipe cannot have produced by
 * `step`, naming the step, the lane and the numbers: a position before
 * the first step that is not the start, or a packer past more units than
 * the lane had delivered tokens (every unit yields at least one). Whether
 * a position fits its unit is checked when the unit is read again. */
ordo_status ordo__replay_check_positions(const ordo_recipe *recipe, uint64_t per_lane, int64_t step,
                                         const ordo__lane_record *rec, ordo_error *err);

#endif
