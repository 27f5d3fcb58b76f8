/* Batch provenance (views, internal): the regeneration's working state
 * (batch.c) and building the answer from the loader's last batch
 * (batch_build.c). */
#ifndef ORDO_VIEWS_BATCH_H
#define ORDO_VIEWS_BATCH_H

#include "recipe/recipe.h"

typedef struct batch_job {
    int64_t step, from; /* from: the step the replay starts after, 0: the run's start */
    /* "start", "checkpoint", or "epoch": the checkpoint holds the positions
     * of from's epoch and is opened at that epoch's start */
    const char *from_kind;
    int epoch_state; /* the checkpoint is a lane state (epoch_states), not a checkpoint */
    ordo_run_info run;
    int lanes;
    ordo_checkpoint checkpoint;
    unsigned char *expected; /* (step - from) x lanes x 32: the ledger's lane digests */
    unsigned char *recorded; /* step - from flags */
    ordo_recipe *recipe;
    ordo_loader *loader;
    int replaying; /* the loader was opened on the ledger's checkpoint */
} batch_job;

/* The provenance of the loader's last batch (the job's step): samples,
 * their pieces (byte offsets read from the shards) and digests; takes the
 * job's recipe on success. */
ordo_status ordo__provenance_build(batch_job *job, const ordo_batch *batch, ordo_provenance **out,
                                   ordo_error *err);

#endif
