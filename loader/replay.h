/* Self-verifying resume (design §6), internal. */
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

/* Refuses a resume from a checkpoint of `step` when the run (or, for a
 * fork's first steps, its baseline) has not recorded that step. */
ordo_status ordo__replay_reached(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                 ordo_error *err);

/* The recorded lane digests of `lane` for steps first..last of the run (a
 * fork's steps before its first segment are its baseline's): *digests, owned
 * by the caller, holds (last - first + 1) × 32 bytes. A step without a
 * recorded digest for the lane refuses the resume, naming step and lane. */
ordo_status ordo__replay_digests(ordo_ledger *ledger, int64_t run_id, int lane, int64_t first,
                                 int64_t last, unsigned char **digests, ordo_error *err);

#endif
