/* The job simulator: W data-parallel ranks in lockstep, recording into the
 * ledger (shared by `ordo run` and `ordo resume`). */
#ifndef ORDO_CLI_JOB_H
#define ORDO_CLI_JOB_H

#include "cli.h"

typedef struct job {
    ordo_ledger *ledger;
    const ordo_recipe *recipe;
    int64_t run_id;
    const char *run_name;
    int world_size;
    int rank_bound;
    int read_workers, tokenize_workers;
    int64_t last_step;        /* play until this step */
    int64_t checkpoint_every; /* 0: only at the end */
    const void *resume;       /* merged checkpoint, or NULL */
    size_t resume_size;
    int64_t resume_run_id; /* the run the checkpoint was recorded for */
    /* Called once every rank's loader is open (a resume's replay checked),
     * before the first step: where a resume records its segment. Returns
     * an exit code; NULL for none. */
    int (*opened)(struct job *j, void *context);
    void *opened_context;
    int quiet;
    /* Batch digests the steps from expected_first on must have (a recovery
     * manifest's): a step that differs stops the job loudly. */
    const unsigned char *expected; /* expected_count × 32 bytes, or NULL */
    int64_t expected_first;
    size_t expected_count;
} job;

/* What a resume continues: the run, its recipe re-read with every shard
 * checked (size at open, chunks as read), the checkpoint, and (from a
 * manifest) the digests expected. */
typedef struct resume_source {
    ordo_run_info run;
    ordo_recipe *recipe;
    ordo_checkpoint checkpoint;
    int rank_bound;
    int world_size;          /* the manifest's W, 0 without a manifest */
    unsigned char *expected; /* owned; expected_count × 32 */
    size_t expected_count;
} resume_source;

/* Reads a recovery manifest (a file, or an http:// URL), checks its
 * SHA-256, and fills `src` from it and the ledger (cmd_manifest.c). The
 * run must be in the ledger. data_root overrides the manifest's. Returns
 * an exit code, printing why on failure. */
int manifest_source(ordo_ledger *ledger, const char *where, const char *data_root,
                    resume_source *src);

/* Plays the job from its current step to last_step; returns an exit code
 * and prints why on failure. */
int job_play(const char *command, job *j);

/* Parses "read=2,tokenize=2" (either may be left out). 0 on success. */
int job_parse_workers(const char *text, int *read_workers, int *tokenize_workers);

#endif
