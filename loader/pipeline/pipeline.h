/* pipeline: the loader (internal, not installed): the work source of each
 * lane, lanes, worker pools, operators, the checkpoint state codec, resume
 * checks and re-sharding. Depends on core, tokenizer, shards, recipe and
 * ledger's SQLite-free face; never on SQLite. */
#ifndef ORDO_PIPELINE_H
#define ORDO_PIPELINE_H

#include <pthread.h>

#include "lane_state.h"
#include "recipe/recipe.h"
#include "schedule.h"

/* One packed sample (a single allocation). */
typedef struct ordo__sample {
    uint64_t epoch;          /* flush epoch that produced it */
    uint32_t pad;            /* padding tokens */
    uint32_t *tokens;        /* seq_len ids */
    uint32_t *source_tokens; /* tokens per source */
    uint8_t *doc_start;      /* seq_len flags */
} ordo__sample;

/* One chunk travelling through read -> tokenize, numbered in its lane. */
typedef struct ordo__work {
    struct ordo__lane *lane;
    struct ordo__work *next; /* queue link */
    uint64_t seq;
    uint32_t source;
    ordo__chunk_ref ref;
    uint64_t skip, end; /* tokens packed: [skip, end), end 0 for the chunk's end */
    /* read: the chunk's documents, concatenated */
    char *text;
    size_t text_len, text_cap;
    size_t *doc_len;
    size_t doc_count, doc_cap;
    /* tokenize: tokens of every document, each followed by end-of-text */
    ordo__tokens tokens;
    size_t *doc_offset; /* where each document starts in tokens */
    size_t offset_cap;
    int done; /* set under the loader's lock */
    ordo_status status;
    ordo_error err;
} ordo__work;

/* The work-source state at the start of a flush epoch. */
typedef struct ordo__snapshot {
    uint64_t epoch;
    uint64_t *taken, *estimated;
} ordo__snapshot;

typedef struct ordo__lane {
    struct ordo_loader *loader;
    int index; /* global lane number */
    ordo__schedule schedule;
    uint64_t issued, consumed; /* chunk numbers */
    ordo__work *ring;          /* prefetch slots, by seq % prefetch */
    ordo__snapshot *snapshots;
    size_t snapshot_count;
    /* pack */
    ordo__sample *partial;
    size_t fill;
    /* shuffle */
    ordo__sample **window;
    size_t window_count;
    ordo__rng rng;
    uint64_t rng_epoch;
    /* samples ready to deliver, FIFO */
    ordo__sample **out;
    size_t out_head, out_count, out_cap;
    /* delivery: the epoch of the last sample taken and how many of its
     * samples were taken; for the checkpoint, the epoch of the last step's
     * first sample and the samples taken from its start to the step's end */
    uint64_t delivered_epoch, delivered_in_epoch, discard;
    uint64_t step_epoch, step_offset, step_rows, ckpt_epoch, ckpt_delivered;
    /* resume check: the samples dropped were delivered before, and their
     * lane digests (steps replay_first on) are in the ledger */
    uint64_t replay_position; /* sample number in the lane of the next one dropped */
    int64_t replay_first;
    struct ordo_ledger *replay_ledger; /* NULL: nothing to check; borrowed while opening */
    int64_t replay_run;
    EVP_MD_CTX *replay_ctx;
} ordo__lane;

struct ordo_loader {
    const ordo_recipe *recipe;
    int rank, world_size, rank_bound, unordered;
    int lane_count; /* lanes this rank owns */
    int stride;     /* lanes of the whole job: L, or W when rank-bound */
    int per_lane;   /* samples per lane per step */
    int prefetch;
    ordo__stream *streams; /* per source, what rank-bound re-shards left (owned) */
    int64_t step;          /* batches returned */
    ordo_status failed;    /* a failed batch leaves lanes half-filled: */
    ordo_error failure;    /* every later call repeats its error */
    ordo__lane *lanes;
    /* workers */
    pthread_mutex_t mutex;
    pthread_cond_t read_ready, tokenize_ready, work_done;
    ordo__work *read_head, *read_tail, *tokenize_head, *tokenize_tail;
    pthread_t *threads;
    int thread_count, stopping;
    int read_workers, tokenize_workers;
    /* the batch handed out */
    uint32_t *tokens;
    uint8_t *doc_start;
    int *lane_ids;
    unsigned char *lane_digests;
    int64_t *source_tokens;
    EVP_MD_CTX *digest_ctx;
};

/* Lanes (lane.c). */
ordo_status ordo__lane_init(ordo__lane *lane, struct ordo_loader *loader, int index,
                            ordo_error *err);
void ordo__lane_free(ordo__lane *lane);
/* Packs a finished chunk (in order) and moves samples to the output. */
ordo_status ordo__lane_pack(ordo__lane *lane, ordo__work *work, ordo_error *err);
/* Takes the next sample from the output into *sample (NULL when none yet;
 * the caller frees it with free()); `first` says it is the first row of a
 * step. Samples a resume drops are checked against the recorded digests:
 * a mismatch is an error naming step and lane. */
ordo_status ordo__lane_take(ordo__lane *lane, int first, ordo__sample **sample, ordo_error *err);
/* Drops, from the output, samples a resume regenerated that were
 * delivered before, checking them (see ordo__lane_take). */
ordo_status ordo__lane_drop(ordo__lane *lane, ordo_error *err);
/* The lane's state as a checkpoint keeps it, after its last step. */
void ordo__lane_record_of(const ordo__lane *lane, uint64_t *epoch, uint64_t *delivered);
/* Arms the resume check: the dropped samples start at sample number
 * `position` of the lane; each step from `first` on that they complete
 * must have the lane digest `ledger` (borrowed until the drops are done)
 * recorded for run `run_id`. */
ordo_status ordo__lane_expect(ordo__lane *lane, uint64_t position, int64_t first,
                              struct ordo_ledger *ledger, int64_t run_id, ordo_error *err);
/* Issues chunks while fewer than `prefetch` are in flight; returns the
 * work items to queue through `issue`. */
ordo_status ordo__lane_issue(ordo__lane *lane, ordo__work **first, ordo_error *err);
/* Sets a lane to resume at flush epoch `epoch` with the given schedule
 * state, discarding `delivered` samples. */
ordo_status ordo__lane_resume(ordo__lane *lane, uint64_t epoch, uint64_t delivered,
                              const uint64_t *taken, const uint64_t *estimated, ordo_error *err);
/* The snapshot of the epoch a checkpoint after the last step starts at. */
const ordo__snapshot *ordo__lane_snapshot(const ordo__lane *lane);

/* Workers (pool.c). */
/* Debug only: chunks handed on as they finish (loader.c). */
ordo_status ordo__loader_set_unordered(struct ordo_loader *loader, ordo_error *err);

ordo_status ordo__pool_start(struct ordo_loader *loader, ordo_error *err);
void ordo__pool_stop(struct ordo_loader *loader);
/* Queues work items for reading (caller holds no lock). */
void ordo__pool_submit(struct ordo_loader *loader, ordo__work *first);
/* Waits until `work` is done. */
void ordo__pool_wait(struct ordo_loader *loader, ordo__work *work);
/* Unordered debug mode: waits for any done item of the lane in flight. */
ordo__work *ordo__pool_wait_any(struct ordo_loader *loader, ordo__lane *lane);

/* The read and tokenize operators (stateless). */
void ordo__op_read(const ordo_recipe *recipe, ordo__work *work);
void ordo__op_tokenize(const ordo_recipe *recipe, ordo__work *work);

#endif
