/* pipeline: the loader (internal, not installed): the work source of each
 * lane, lanes, worker pools, operators, the checkpoint state codec, resume
 * checks and re-sharding. Depends on core, tokenizer, shards, recipe and
 * ledger's SQLite-free face; never on SQLite. */
#ifndef ORDO_PIPELINE_H
#define ORDO_PIPELINE_H

#include <pthread.h>

#include "lane_state.h"
#include "packer.h"
#include "recipe/recipe.h"
#include "schedule.h"
#include "slot_plan.h"

/* One packed sample (a single allocation). */
typedef struct ordo__sample {
    uint64_t epoch;          /* flush epoch that produced it */
    uint32_t pad;            /* padding tokens */
    int32_t source;          /* the source of every token, or -1 when mixed (rank-bound) */
    uint32_t *tokens;        /* seq_len ids */
    uint32_t *source_tokens; /* tokens per source */
    uint8_t *doc_start;      /* seq_len flags */
    ordo__pieces *pieces;    /* its documents' pieces when the loader observes (owned), or NULL */
} ordo__sample;

/* The resume check of a lane (docs/reliability.md): the samples a resume
 * drops were delivered before, and their lane digests (steps `first` on)
 * are in the ledger. */
typedef struct ordo__resume_check {
    uint64_t position;          /* sample number in the lane of the next one dropped */
    int64_t first;              /* the first step replayed whole */
    struct ordo_ledger *ledger; /* NULL: nothing to check; borrowed while opening */
    int64_t run;
    EVP_MD_CTX *ctx;
} ordo__resume_check;

/* One chunk travelling through read -> tokenize, numbered in its lane. */
typedef struct ordo__work {
    struct ordo__lane *lane;
    struct ordo__work *next; /* queue link */
    uint64_t seq;
    uint32_t source;
    ordo__chunk_ref ref;
    uint64_t skip, end;    /* tokens packed: [skip, end), end 0 for the chunk's end */
    uint32_t first, count; /* documents of the chunk kept: [first, first + count); count 0: all */
    /* tokenize: documents before from_doc (of those kept) are left empty:
     * a resumed packer starts inside its unit, at that document */
    uint64_t from_doc;
    /* read: 1 + the physical record (in the chunk) of document from_doc,
     * or 0: a JSON-lines chunk is parsed from that record on, the
     * documents before it left empty */
    uint64_t from_record;
    uint64_t read_from; /* read: from_record, or where a shard of nothing but
                         * documents has document first + from_doc */
    int synced;         /* read: the document at read_from was found */
    int from_bound;     /* read: read_from is a bound (a read-on): the first
                         * document from it on is the packer's */
    /* read: with limit (text bytes, 0: none) the read stops after the
     * document that reaches it when the unit has more (more = 1,
     * next_record the physical record after it, in the chunk); the packer
     * reads the rest when it gets there (packer.c, read_limit) */
    uint64_t limit, next_record;
    int more;
    uint64_t end_doc; /* read: the chunk's document index past the unit's last */
    /* tokenize: with token_limit (0: none) tokenizing stops between pieces
     * once the tokens from document from_doc on reach it; the document it
     * stops in is then cut (cut = 1): the last one kept, its first tokens
     * only, no eos; the packer tokenizes it again when it gets there
     * (packer.c, token_limit) */
    uint64_t token_limit;
    int cut;
    uint64_t seen; /* read: documents of the chunk so far */
    int oom;       /* read: out of memory keeping a document */
    /* read: the chunk's documents, concatenated */
    char *text;
    size_t text_len, text_cap;
    size_t *doc_len;
    uint64_t *doc_record; /* each document's physical record in the chunk (from 0) */
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
    ordo__resume_check check;
} ordo__lane;

/* A logical lane (mix_lane.c): one packer per source, the slot plan, the
 * samples of its current flush epoch, delivery and the resume check. */
typedef struct ordo__mlane {
    struct ordo_loader *loader;
    int index;              /* global lane number */
    ordo__packer *packers;  /* S */
    ordo__plan plan;        /* after the steps of the epochs produced */
    uint64_t epoch;         /* epoch held in `samples`, UINT64_MAX: none */
    ordo__pos *start;       /* S: packer positions at the start of `epoch` */
    ordo__sample **samples; /* flush_every x per_lane, in slot order */
    uint32_t *sources;      /* their sources */
    uint64_t next;          /* the next of `samples` to deliver */
    uint64_t discard;       /* samples a resume regenerates and drops */
    ordo__resume_check check;
} ordo__mlane;

struct ordo_loader {
    const ordo_recipe *recipe;
    int rank, world_size, rank_bound, unordered;
    int lane_count; /* lanes this rank owns */
    int stride;     /* lanes of the whole job: L, or W when rank-bound */
    int per_lane;   /* samples per lane per step */
    int prefetch;
    ordo__stream *streams;       /* per source, what rank-bound re-shards left (owned) */
    int64_t step;                /* batches returned */
    ordo_status failed;          /* a failed batch leaves lanes half-filled: */
    ordo_error failure;          /* every later call repeats its error */
    ordo__lane *lanes;           /* rank-bound */
    ordo__mlane *mlanes;         /* logical */
    ordo__slot_cache slot_cache; /* logical lanes' slot permutations */
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
    int32_t *sample_sources; /* rows */
    EVP_MD_CTX *digest_ctx;
    /* provenance (logical lanes): the pieces of each row of the batch */
    int observe;
    /* an observing loader's loaded chunks, read once for every lane whose
     * units they hold (owned; NULL otherwise) */
    struct ordo__chunk_cache *chunk_cache;
    int at_epoch;              /* resumed at its flush epoch's start (ORDO__OPEN_AT_EPOCH) */
    ordo__pieces **row_pieces; /* rows, owned */
};

/* The text bytes an observing loader reads of a unit at a time; 0, as
 * set: about what its packer still packs in the flush epoch (packer.c,
 * read_limit). Tests set it lower to make every unit be read in parts. */
extern uint64_t ordo__observe_read_limit;

/* The tokens an observing loader tokenizes past a packer's position at a
 * time; 0, as set: what the packer still packs in the flush epoch
 * (packer.c, token_need). Tests set it lower to make documents be cut and
 * tokenized again. */
extern uint64_t ordo__observe_token_limit;

/* How ordo__loader_open_observed opens a loader. */
enum {
    /* note the document pieces of every sample the packers cut, from the
     * first one a resume regenerates on (logical lanes only):
     * ordo__loader_row_pieces gives them per row of the last batch */
    ORDO__OPEN_OBSERVE = 1,
    /* resume (logical lanes) at the start of the flush epoch of the
     * state's step, nothing of it delivered: the next batch is the epoch's
     * first step, whatever step of the epoch the state was taken after
     * (every state of an epoch holds the same positions) */
    ORDO__OPEN_AT_EPOCH = 2
};

/* Opens a loader as ordo_loader_open does, with `flags` (ORDO__OPEN_*). */
ordo_status ordo__loader_open_observed(const ordo_recipe *recipe, const ordo_loader_options *o,
                                       unsigned flags, ordo_loader **out, ordo_error *err);

/* The pieces of row `row` of the last batch of an observing loader
 * (owned by the loader until its next batch), or NULL. */
const ordo__pieces *ordo__loader_row_pieces(const ordo_loader *loader, int row);

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
/* Unordered debug mode: waits for any done item in flight among `count`. */
ordo__work *ordo__pool_wait_any(struct ordo_loader *loader, ordo__work *const *items, int count);

/* The read and tokenize operators (stateless but for the chunks read keeps
 * in `cache`, NULL: none). */
void ordo__op_read(const ordo_recipe *recipe, struct ordo__chunk_cache *cache, ordo__work *work);
void ordo__op_tokenize(const ordo_recipe *recipe, ordo__work *work);
/* The text bytes read through a chunk cache (an observing loader's) in this
 * process; for tests. */
extern _Atomic uint64_t ordo__cached_read_bytes;

/* Tokens the tokenize operator made, by every loader of the process
 * (ops.c; tests read it). */
extern _Atomic uint64_t ordo__tokenized_tokens;
/* Frees the buffers a work item holds (not the item). */
void ordo__work_release(ordo__work *work);

/* Logical lanes (mix_lane.c). */
/* Sets lane `index` up with its packers owning `units` (S lists, moved
 * out) at `positions` (S; NULL: the start) and the plan `plan` (at the
 * start of flush epoch `epoch` that they begin, its position copied);
 * `discard` samples of that epoch are dropped. */
ordo_status ordo__mlane_init(ordo__mlane *lane, struct ordo_loader *loader, int index,
                             ordo__unit_list *units, const ordo__pos *positions,
                             const ordo__plan *plan, uint64_t epoch, uint64_t discard,
                             ordo_error *err);
void ordo__mlane_free(ordo__mlane *lane);
/* Issues the lane's packers' units into free prefetch slots, up to `depth`
 * units past each packer's position, appended to the chain at *chain. */
void ordo__mlane_issue(ordo__mlane *lane, int depth, ordo__work **chain);
/* The lane's next sample into *sample (the caller frees it with free()),
 * after dropping (and checking) what a resume regenerated. */
ordo_status ordo__mlane_take(ordo__mlane *lane, ordo__sample **sample, ordo_error *err);
/* Drops what a resume regenerated; see ordo__lane_drop. */
ordo_status ordo__mlane_drop(ordo__mlane *lane, ordo_error *err);
/* The packer positions at the start of the flush epoch of the lane's last
 * step: what its checkpoint keeps (S entries, owned by the lane). */
const ordo__pos *ordo__mlane_positions(const ordo__mlane *lane);

/* The shuffle window of the rank-bound contrast's lanes, in samples. */
size_t ordo__rank_window(const ordo_recipe *recipe);

/* A sample of `recipe` (one allocation; ordo__sample_free). */
ordo__sample *ordo__sample_new(const ordo_recipe *recipe, uint64_t epoch);
/* Frees a sample and its pieces (NULL is fine). */
void ordo__sample_free(ordo__sample *sample);
/* Arms a resume check: the dropped samples start at sample number
 * `position` of the lane; each step from `first` on that they complete
 * must have the lane digest `ledger` (borrowed until the drops are done)
 * recorded for run `run_id`. */
ordo_status ordo__check_arm(ordo__resume_check *check, uint64_t position, int64_t first,
                            struct ordo_ledger *ledger, int64_t run_id, ordo_error *err);
/* Checks a sample a resume drops: a step it completes must hash to the
 * lane digest the ledger recorded, or it is an error naming step and lane. */
ordo_status ordo__check_sample(struct ordo_loader *loader, int lane, ordo__resume_check *check,
                               const uint32_t *tokens, ordo_error *err);
/* Frees what a resume check holds. */
void ordo__check_free(ordo__resume_check *check);
#endif
