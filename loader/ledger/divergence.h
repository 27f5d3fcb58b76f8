/* Divergence from a baseline, checked as steps are recorded (internal). */
#ifndef ORDO_DIVERGENCE_H
#define ORDO_DIVERGENCE_H

#include "step_blocks.h"

/* Checks the steps this call recorded (`fresh`, in recording order)
 * against the run's baseline, inside the caller's transaction: each that
 * differs becomes a divergence event and is counted (and, up to the
 * limit, listed) in `result`. Nothing is checked when the run has no
 * baseline or the baseline's digest kind is another. */
ordo_status ordo__divergences_check(ordo_ledger *ledger, int64_t run_id,
                                    const ordo__fresh_step *fresh, size_t count,
                                    ordo_record_result *result, ordo_error *err);

#endif
