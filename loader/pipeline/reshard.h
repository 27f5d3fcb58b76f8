/* The rank-bound re-shard (internal): what remains of every source's
 * stream when a rank-bound job resumes at another world size. */
#ifndef ORDO_RESHARD_H
#define ORDO_RESHARD_H

#include "lane_state.h"

/* From a state of every lane of a rank-bound job, the streams of what its
 * lanes had not delivered by the state's step: each lane's flush epoch is
 * replayed (read and tokenized) to the end of the samples it delivered, so
 * the chunks it packed whole are gone, the chunk it was inside keeps its
 * undelivered tokens, and the chunks it had not reached stay in the stream
 * whichever lane was to read them. With a ledger (run_id not 0), each step
 * the replayed samples complete must have the lane digest it recorded for
 * the run, or the resume is refused naming the step and the lane; the
 * ledger is only read. *streams (source_count entries) is owned by the
 * caller (ordo__streams_free). */
ordo_status ordo__reshard(const ordo_recipe *recipe, const ordo__state *state, ordo_ledger *ledger,
                          int64_t run_id, ordo__stream **streams, ordo_error *err);

#endif
