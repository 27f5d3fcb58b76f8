/* The loader: one rank's lanes, their pipelines, batches, checkpoints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lane_state.h"
#include "pipeline.h"
#include "replay.h"
#include "reshard.h"
#include "shards/shards.h"

#define DEFAULT_PREFETCH 4
/* the chunks an observing loader keeps loaded (ordo_loader.chunk_cache) */
#define OBSERVE_CACHE_BYTES ((uint64_t)128 << 20)

/* Rank r owns the contiguous block of lanes [r*L/W, (r+1)*L/W). */
int ordo_lane_rank(int lanes, int world_size, int lane)
{
    if (lanes < 1 || world_size < 1 || lanes % world_size != 0 || lane < 0 || lane >= lanes)
        return -1;
    return lane / (lanes / world_size);
}

static ordo_status check_options(const ordo_recipe *r, const ordo_loader_options *o, int rank_bound,
                                 ordo_error *err)
{
    if (!r->planned)
        return ordo__error(err, ORDO_INVALID, "the recipe is not indexed (ordo_recipe_index)");
    if (o->world_size < 1 || o->world_size > 65536)
        return ordo__error(err, ORDO_INVALID, "world size (%d) must be between 1 and 65536",
                           o->world_size);
    if (o->rank < 0 || o->rank >= o->world_size)
        return ordo__error(err, ORDO_INVALID, "rank (%d) must be below world size (%d)", o->rank,
                           o->world_size);
    if (!rank_bound && r->lanes % o->world_size != 0)
        return ordo__error(err, ORDO_INVALID, "lanes (%d) must be divisible by world size (%d)",
                           r->lanes, o->world_size);
    if (rank_bound && r->global_batch % o->world_size != 0)
        return ordo__error(err, ORDO_INVALID,
                           "global_batch (%d) must be divisible by world size (%d)",
                           r->global_batch, o->world_size);
    if (o->read_workers < 1 || o->tokenize_workers < 1 || o->read_workers > 256 ||
        o->tokenize_workers > 256)
        return ordo__error(err, ORDO_INVALID, "workers (read=%d, tokenize=%d) must be 1 to 256",
                           o->read_workers, o->tokenize_workers);
    if (o->prefetch < 0 || o->prefetch > 1024)
        return ordo__error(err, ORDO_INVALID, "prefetch (%d) must be 0 to 1024", o->prefetch);
    return ORDO_OK;
}

static ordo_status alloc_batch(ordo_loader *l, ordo_error *err)
{
    size_t rows = (size_t)l->lane_count * (size_t)l->per_lane;
    size_t cells = rows * (size_t)l->recipe->sample_len;
    l->tokens = malloc(cells * sizeof *l->tokens);
    l->doc_start = malloc(cells ? cells : 1);
    l->lane_ids = malloc((size_t)l->lane_count * sizeof *l->lane_ids);
    l->lane_digests = malloc((size_t)l->lane_count * ORDO_DIGEST_SIZE);
    l->source_tokens = calloc(l->recipe->source_count, sizeof *l->source_tokens);
    l->sample_sources = calloc(rows ? rows : 1, sizeof *l->sample_sources);
    if (l->observe && !(l->row_pieces = calloc(rows ? rows : 1, sizeof *l->row_pieces)))
        return ordo__error(err, ORDO_NOMEM, "out of memory opening a loader");
    if (l->rank_bound)
        l->lanes = calloc((size_t)l->lane_count, sizeof *l->lanes);
    else
        l->mlanes = calloc((size_t)l->lane_count, sizeof *l->mlanes);
    l->digest_ctx = EVP_MD_CTX_new();
    if (!l->tokens || !l->doc_start || !l->lane_ids || !l->lane_digests || !l->source_tokens ||
        !l->sample_sources || (!l->lanes && !l->mlanes) || !l->digest_ctx)
        return ordo__error(err, ORDO_NOMEM, "out of memory opening a loader");
    return ORDO_OK;
}

/* The record of `lane` in a decoded state (records are in lane order), or
 * NULL when the state does not cover it. */
static const ordo__lane_record *lane_record(const ordo__state *s, int lane)
{
    size_t lo = 0, hi = (size_t)s->lane_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->lanes[mid].lane == (uint64_t)lane)
            return &s->lanes[mid];
        if (s->lanes[mid].lane < (uint64_t)lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Without re-sharding, a state resumes a loader when it is of the same
 * job (stride) and holds every lane the loader owns: the merged state of
 * all lanes, or a rank's own state at the same world size. */
static ordo_status check_covered(const ordo_loader *l, const ordo__state *s, ordo_error *err)
{
    if (s->stride != (uint64_t)l->stride)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint is of a job with %llu lanes; this job "
                           "has %d lanes",
                           (unsigned long long)s->stride, l->stride);
    for (int i = 0; i < l->lane_count; i++)
        if (!lane_record(s, l->lane_ids[i]))
            return ordo__error(err, ORDO_INVALID,
                               "checkpoint covers %llu of %llu lanes, not lane %d that rank %d "
                               "owns: resume from the state of every lane (join every rank's "
                               "state with ordo_checkpoint_merge; merge_states in Python) or "
                               "from this rank's own at the same world size",
                               (unsigned long long)s->lane_count, (unsigned long long)s->stride,
                               l->lane_ids[i], l->rank);
    return ORDO_OK;
}

/* The run a resume is checked against, and the step it must have
 * reached; 0 in *run_id without a ledger. */
static ordo_status resume_run(const ordo_loader_options *o, int64_t step, int64_t *run_id,
                              ordo_error *err)
{
    *run_id = 0;
    if (!o->ledger || step == 0)
        return ORDO_OK;
    ordo_run_info run;
    ordo_status status = o->run_id ? ordo__run_get_id(o->ledger, o->run_id, &run, err)
                                   : ordo__error(err, ORDO_INVALID,
                                                 "a resume checked against a "
                                                 "ledger needs the run's id");
    if (status == ORDO_OK)
        status = ordo__replay_reached(o->ledger, run.id, step, err);
    if (status == ORDO_OK)
        *run_id = run.id;
    return status;
}

/* Arms the check of the samples a resumed lane drops: the steps they
 * complete must have the lane digests the ledger recorded. */
static ordo_status expect_dropped(ordo_loader *l, ordo__lane *lane, const ordo__lane_record *rec,
                                  int64_t step, const ordo_loader_options *o, int64_t run_id,
                                  ordo_error *err)
{
    if (!run_id)
        return ORDO_OK;
    uint64_t per_lane = (uint64_t)l->per_lane;
    uint64_t position = (uint64_t)step * per_lane - rec->delivered;
    int64_t first = (int64_t)((position + per_lane - 1) / per_lane) + 1;
    return ordo__check_arm(&lane->check, position, first, o->ledger, run_id, err);
}

static ordo_status check_state(const ordo_loader *l, const ordo__state *s, int resharding,
                               ordo_error *err)
{
    uint32_t tag = ordo__recipe_tag(l->recipe);
    if (s->recipe_tag != tag)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint belongs to another recipe (id "
                           "%08x..., this recipe is %08x...)",
                           s->recipe_tag, tag);
    if (s->sources != l->recipe->source_count || s->rank_bound != l->rank_bound)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint does not fit this recipe and binding "
                           "(%u sources, %s lanes)",
                           s->sources, s->rank_bound ? "rank-bound" : "logical");
    if (resharding && s->lane_count != s->stride)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint covers %llu of %llu lanes; re-sharding needs every "
                           "lane: join every rank's state first (ordo_checkpoint_merge; "
                           "merge_states in Python)",
                           (unsigned long long)s->lane_count, (unsigned long long)s->stride);
    if (!resharding) {
        ordo_status covered = check_covered(l, s, err);
        if (covered != ORDO_OK)
            return covered;
    }
    if (s->rank_bound && (uint64_t)l->recipe->global_batch % s->stride != 0)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint of %llu rank-bound lanes: global_batch "
                           "(%d) is not divisible by it",
                           (unsigned long long)s->stride, l->recipe->global_batch);
    if (s->step > (uint64_t)ORDO_STEP_MAX)
        return ordo__error(err, ORDO_INVALID, "checkpoint step %llu is beyond %lld",
                           (unsigned long long)s->step, (long long)ORDO_STEP_MAX);
    for (uint32_t i = 0; !l->rank_bound && i < s->sources; i++)
        if (s->streams[i].base != 0 || s->streams[i].count != 0)
            return ordo__error(err, ORDO_INVALID,
                               "a checkpoint of logical lanes has no stream "
                               "offsets (source %u: %llu, %llu units)",
                               i, (unsigned long long)s->streams[i].base,
                               (unsigned long long)s->streams[i].count);
    return ORDO_OK;
}

/* Every lane record the job resumes from (a re-shard reads them all),
 * bounded by the recipe. */
static ordo_status check_records(const ordo_loader *l, const ordo__state *s, int resharding,
                                 ordo_error *err)
{
    int per_lane = l->recipe->global_batch / (int)s->stride;
    int count = resharding ? (int)s->lane_count : l->lane_count;
    ordo_status status = ORDO_OK;
    for (int i = 0; status == ORDO_OK && i < count; i++)
        status = ordo__replay_check_record(
            l->recipe, s->stride, s->streams, per_lane, (int64_t)s->step,
            resharding ? &s->lanes[i] : lane_record(s, l->lanes[i].index), err);
    return status;
}

static ordo_status apply_resume(ordo_loader *l, const ordo_loader_options *o, ordo_error *err)
{
    ordo__state s;
    ordo_status status = ordo__state_decode(o->resume, o->resume_size, &s, err);
    if (status != ORDO_OK)
        return status;
    int resharding = l->rank_bound && (uint64_t)l->stride != s.stride;
    int64_t run_id = 0;
    status = check_state(l, &s, resharding, err);
    if (status == ORDO_OK)
        status = resume_run(o, (int64_t)s.step, &run_id, err);
    if (status == ORDO_OK)
        status = check_records(l, &s, resharding, err);
    l->step = (int64_t)s.step;
    ordo__stream *streams = NULL;
    if (status == ORDO_OK && resharding)
        status = ordo__reshard(l->recipe, &s, o->ledger, run_id, &streams, err);
    if (status == ORDO_OK) {
        ordo__streams_free(l->streams, l->recipe->source_count);
        l->streams = resharding ? streams : s.streams;
        if (!resharding)
            s.streams = NULL; /* ownership moved */
    }
    for (int i = 0; status == ORDO_OK && i < l->lane_count; i++) {
        ordo__lane *lane = &l->lanes[i];
        status = ordo__lane_init(lane, l, lane->index, err);
        if (status == ORDO_OK && !resharding) {
            const ordo__lane_record *rec = lane_record(&s, lane->index);
            status = ordo__lane_resume(lane, rec->epoch, rec->delivered, rec->taken, rec->estimated,
                                       err);
            if (status == ORDO_OK)
                status = expect_dropped(l, lane, rec, (int64_t)s.step, o, run_id, err);
        }
    }
    ordo__state_free(&s);
    return status;
}

/* Opens the logical lanes at the start of flush epoch `epoch`, each
 * packer at its record's positions (NULL: the start), dropping `discard`
 * samples; the units of every source are dealt once for all of them. */
static ordo_status open_mlanes(ordo_loader *l, const ordo__state *state, uint64_t epoch,
                               uint64_t discard, ordo_error *err)
{
    const ordo_recipe *r = l->recipe;
    uint32_t n = r->source_count, first = (uint32_t)(l->rank * l->lane_count);
    uint32_t lanes = (uint32_t)l->lane_count;
    ordo__plan plan;
    ordo_status status = ordo__plan_init(&plan, r, err);
    if (status != ORDO_OK)
        return status;
    ordo__plan_seek(&plan, (int64_t)(epoch * (uint64_t)r->flush_every));
    ordo__unit_list *units = calloc((size_t)n * lanes, sizeof *units),
                    *mine = calloc(n, sizeof *mine);
    if (!units || !mine)
        status = ordo__error(err, ORDO_NOMEM, "out of memory opening lanes");
    for (uint32_t s = 0; status == ORDO_OK && s < n; s++)
        status = ordo__units_partition(r, s, first, lanes, units + (size_t)s * lanes, err);
    for (uint32_t i = 0; status == ORDO_OK && i < lanes; i++) {
        for (uint32_t s = 0; s < n; s++)
            mine[s] = units[(size_t)s * lanes + i];
        for (uint32_t s = 0; s < n; s++)
            units[(size_t)s * lanes + i] = (ordo__unit_list){0};
        const ordo__lane_record *rec = state ? lane_record(state, (int)(first + i)) : NULL;
        status = ordo__mlane_init(&l->mlanes[i], l, (int)(first + i), mine,
                                  rec ? rec->positions : NULL, &plan, epoch, discard, err);
        for (uint32_t s = 0; s < n; s++)
            ordo__unit_list_free(&mine[s]);
    }
    for (size_t i = 0; units && i < (size_t)n * lanes; i++)
        ordo__unit_list_free(&units[i]);
    free(units);
    free(mine);
    ordo__plan_free(&plan);
    return status;
}

/* Resumes logical lanes: each at the start of the flush epoch of the
 * state's step, its packers at the recorded positions, dropping (and with
 * a ledger checking) the samples of that epoch's steps up to the step. */
static ordo_status apply_mix_resume(ordo_loader *l, const ordo_loader_options *o, ordo_error *err)
{
    ordo__state s;
    ordo_status status = ordo__state_decode(o->resume, o->resume_size, &s, err);
    if (status != ORDO_OK)
        return status;
    int64_t run_id = 0;
    status = check_state(l, &s, 0, err);
    if (status == ORDO_OK && s.step > ORDO__PLAN_STEPS_MAX)
        status = ordo__error(err, ORDO_INVALID,
                             "checkpoint step %llu is beyond %llu: a resume plans its slots from "
                             "step 0 (about 30 ns a step), so logical lanes resume up to step %llu",
                             (unsigned long long)s.step, (unsigned long long)ORDO__PLAN_STEPS_MAX,
                             (unsigned long long)ORDO__PLAN_STEPS_MAX);
    if (status == ORDO_OK)
        status = resume_run(o, (int64_t)s.step, &run_id, err);
    uint64_t flush = (uint64_t)l->recipe->flush_every, per_lane = (uint64_t)l->per_lane;
    uint64_t epoch = s.step ? (s.step - 1) / flush : 0;
    uint64_t discard = l->at_epoch ? 0 : (s.step - epoch * flush) * per_lane;
    for (int i = 0; status == ORDO_OK && i < l->lane_count; i++)
        status = ordo__replay_check_positions(l->recipe, per_lane, (int64_t)s.step,
                                              lane_record(&s, l->lane_ids[i]), err);
    l->step = l->at_epoch ? (int64_t)(epoch * flush) : (int64_t)s.step;
    if (status == ORDO_OK)
        status = open_mlanes(l, &s, epoch, discard, err);
    for (int i = 0; status == ORDO_OK && run_id && i < l->lane_count; i++)
        status = ordo__check_arm(&l->mlanes[i].check, epoch * flush * per_lane,
                                 (int64_t)(epoch * flush) + 1, o->ledger, run_id, err);
    ordo__state_free(&s);
    return status;
}

static ordo_status open_lanes(ordo_loader *l, const ordo_loader_options *o, ordo_error *err)
{
    int first = l->rank_bound ? l->rank : l->rank * l->lane_count;
    for (int i = 0; i < l->lane_count; i++) {
        if (l->rank_bound)
            l->lanes[i].index = first + i;
        l->lane_ids[i] = first + i;
    }
    if (o->resume)
        return l->rank_bound ? apply_resume(l, o, err) : apply_mix_resume(l, o, err);
    if (!l->rank_bound)
        return open_mlanes(l, NULL, 0, 0, err);
    for (int i = 0; i < l->lane_count; i++) {
        ordo_status status = ordo__lane_init(&l->lanes[i], l, first + i, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status advance(ordo_loader *l, ordo__lane *lane, ordo_error *err);

/* An observing loader names the lane of an error that does not already
 * (a shard's changed chunk, a read error): provenance names step and lane. */
static ordo_status name_lane(const ordo_loader *l, int lane, ordo_status status, ordo_error *err)
{
    char own[32];
    snprintf(own, sizeof own, "lane %d", lane);
    if (status == ORDO_OK || !l->observe || !err || strstr(err->message, own))
        return status;
    ordo_error was = *err;
    return ordo__error(err, status, "lane %d: %s", lane, was.message);
}

/* A resumed loader regenerates what its lanes delivered since their flush
 * epochs began and checks it before handing out anything, so a checkpoint
 * that does not reproduce the ledger is refused when the loader opens. */
static ordo_status replay_dropped(ordo_loader *l, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    for (int i = 0; status == ORDO_OK && !l->rank_bound && i < l->lane_count; i++)
        status = name_lane(l, l->mlanes[i].index, ordo__mlane_drop(&l->mlanes[i], err), err);
    for (int i = 0; status == ORDO_OK && l->rank_bound && i < l->lane_count; i++) {
        ordo__lane *lane = &l->lanes[i];
        while (status == ORDO_OK && (status = ordo__lane_drop(lane, err)) == ORDO_OK &&
               lane->discard > 0)
            status = advance(l, lane, err);
    }
    return status;
}

/* Opens a loader; see ordo.h. */
ordo_status ordo_loader_open(const ordo_recipe *r, const ordo_loader_options *o, ordo_loader **out,
                             ordo_error *err)
{
    return ordo__loader_open_observed(r, o, 0, out, err);
}

uint64_t ordo__observe_read_limit;  /* see pipeline.h */
uint64_t ordo__observe_token_limit; /* see pipeline.h */

/* Opens a loader that may note its samples' pieces; see pipeline.h. */
ordo_status ordo__loader_open_observed(const ordo_recipe *r, const ordo_loader_options *o,
                                       unsigned flags, ordo_loader **out, ordo_error *err)
{
    int observe = (flags & ORDO__OPEN_OBSERVE) != 0;
    *out = NULL;
    if (!ordo_lane_binding_name(o->lane_binding))
        return ordo__error(err, ORDO_INVALID,
                           "lane binding %d must be ORDO_BINDING_LOGICAL or "
                           "ORDO_BINDING_RANK",
                           (int)o->lane_binding);
    int rank_bound = o->lane_binding == ORDO_BINDING_RANK;
    if (observe && rank_bound)
        return ordo__error(err, ORDO_INVALID,
                           "the pieces of samples are noted for logical lanes only: a rank-bound "
                           "lane packs several sources into one sample");
    ordo_status status = check_options(r, o, rank_bound, err);
    if (status != ORDO_OK)
        return status;
    ordo_loader *l = calloc(1, sizeof *l);
    if (!l)
        return ordo__error(err, ORDO_NOMEM, "out of memory opening a loader");
    l->recipe = r;
    l->rank = o->rank;
    l->world_size = o->world_size;
    l->rank_bound = rank_bound;
    l->observe = observe;
    l->at_epoch = (flags & ORDO__OPEN_AT_EPOCH) != 0;
    l->stride = rank_bound ? o->world_size : r->lanes;
    l->lane_count = rank_bound ? 1 : r->lanes / o->world_size;
    l->per_lane = r->global_batch / l->stride;
    l->prefetch = o->prefetch ? o->prefetch : DEFAULT_PREFETCH;
    l->read_workers = o->read_workers;
    l->tokenize_workers = o->tokenize_workers;
    int no_cache = observe && !(l->chunk_cache = ordo__chunk_cache_new(OBSERVE_CACHE_BYTES));
    pthread_mutex_init(&l->mutex, NULL);
    pthread_cond_init(&l->read_ready, NULL);
    pthread_cond_init(&l->tokenize_ready, NULL);
    pthread_cond_init(&l->work_done, NULL);
    l->streams = calloc(r->source_count, sizeof *l->streams);
    status = l->streams && !no_cache ? alloc_batch(l, err)
                                     : ordo__error(err, ORDO_NOMEM, "out of memory");
    if (status == ORDO_OK)
        status = open_lanes(l, o, err);
    if (status == ORDO_OK)
        status = ordo__pool_start(l, err);
    if (status == ORDO_OK && o->resume)
        status = replay_dropped(l, err);
    if (status != ORDO_OK) {
        ordo_loader_close(l);
        return status;
    }
    *out = l;
    return ordo__ok(err);
}

/* Debug only (testing.h): from its first batch on, the loader hands chunks
 * on as they finish instead of in number order, breaking determinism, to
 * measure what ordering costs; it then takes no checkpoints. Refused once
 * a batch was returned. */
ordo_status ordo__loader_set_unordered(ordo_loader *l, ordo_error *err)
{
    if (l->step > 0)
        return ordo__error(err, ORDO_INVALID,
                           "a loader becomes unordered before its first batch, not after step %lld",
                           (long long)l->step);
    l->unordered = 1;
    return ORDO_OK;
}

/* Stops workers and frees everything. */
void ordo_loader_close(ordo_loader *l)
{
    if (!l)
        return;
    ordo__pool_stop(l);
    for (int i = 0; l->lanes && i < l->lane_count; i++)
        ordo__lane_free(&l->lanes[i]);
    for (int i = 0; l->mlanes && i < l->lane_count; i++)
        ordo__mlane_free(&l->mlanes[i]);
    free(l->lanes);
    free(l->mlanes);
    free(l->sample_sources);
    for (int i = 0; l->row_pieces && i < l->lane_count * l->per_lane; i++)
        ordo__pieces_free(l->row_pieces[i]);
    free(l->row_pieces);
    ordo__streams_free(l->streams, l->recipe->source_count);
    ordo__chunk_cache_free(l->chunk_cache);
    free(l->tokens);
    free(l->doc_start);
    free(l->lane_ids);
    free(l->lane_digests);
    free(l->source_tokens);
    EVP_MD_CTX_free(l->digest_ctx);
    pthread_mutex_destroy(&l->mutex);
    pthread_cond_destroy(&l->read_ready);
    pthread_cond_destroy(&l->tokenize_ready);
    pthread_cond_destroy(&l->work_done);
    free(l);
}

/* Fills free prefetch slots. Logical lanes' units are queued depth by
 * depth (every packer's current unit, then every next one, ...), so the
 * units the coming batch packs are read before any lane's later ones. */
static ordo_status top_up(ordo_loader *l, ordo_error *err)
{
    if (!l->rank_bound) {
        ordo__work *chain = NULL, **tail = &chain;
        for (int depth = 1; depth <= l->prefetch; depth++)
            for (int i = 0; i < l->lane_count; i++) {
                ordo__mlane_issue(&l->mlanes[i], depth, tail);
                while (*tail)
                    tail = &(*tail)->next;
            }
        ordo__pool_submit(l, chain);
        return ORDO_OK;
    }
    for (int i = 0; i < l->lane_count; i++) {
        ordo__work *chain = NULL;
        ordo_status status = ordo__lane_issue(&l->lanes[i], &chain, err);
        if (status != ORDO_OK)
            return status;
        ordo__pool_submit(l, chain);
    }
    return ORDO_OK;
}

static ordo__work *slot_of(ordo__lane *lane, uint64_t seq)
{
    for (int i = 0; i < lane->loader->prefetch; i++)
        if (lane->ring[i].seq == seq)
            return &lane->ring[i];
    return NULL;
}

/* Packs the lane's next chunk: in number order, or (debug) any finished. */
static ordo_status advance(ordo_loader *l, ordo__lane *lane, ordo_error *err)
{
    ordo__work *chain = NULL;
    ordo_status status = ordo__lane_issue(lane, &chain, err);
    if (status != ORDO_OK)
        return status;
    ordo__pool_submit(l, chain);
    ordo__work *ring[1024];
    for (int i = 0; l->unordered && i < l->prefetch; i++)
        ring[i] = &lane->ring[i];
    ordo__work *w =
        l->unordered ? ordo__pool_wait_any(l, ring, l->prefetch) : slot_of(lane, lane->consumed);
    if (!w)
        return ordo__error(err, ORDO_INVALID, "lane %d lost chunk %llu", lane->index,
                           (unsigned long long)lane->consumed);
    if (!l->unordered)
        ordo__pool_wait(l, w);
    if (w->status != ORDO_OK) {
        if (err)
            *err = w->err;
        return w->status;
    }
    if (l->unordered) /* debug: pretend it was next in line */
        w->seq = lane->consumed;
    status = ordo__lane_pack(lane, w, err);
    w->seq = UINT64_MAX; /* the slot is free again */
    lane->consumed++;
    return status;
}

static void digest_row(ordo_loader *l, const uint32_t *tokens, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    EVP_DigestUpdate(l->digest_ctx, tokens, count * sizeof *tokens);
#else
    for (size_t i = 0; i < count; i++) {
        unsigned char le[4] = {(unsigned char)tokens[i], (unsigned char)(tokens[i] >> 8),
                               (unsigned char)(tokens[i] >> 16), (unsigned char)(tokens[i] >> 24)};
        EVP_DigestUpdate(l->digest_ctx, le, 4);
    }
#endif
}

/* The next sample of lane i: a logical lane's, or a rank-bound lane's
 * (packing chunks until one is ready). */
static ordo_status take_sample(ordo_loader *l, int i, int row, ordo__sample **s, ordo_error *err)
{
    if (!l->rank_bound)
        return ordo__mlane_take(&l->mlanes[i], s, err);
    ordo__lane *lane = &l->lanes[i];
    for (;;) {
        ordo_status status = ordo__lane_take(lane, row == 0, s, err);
        if (status == ORDO_OK && *s)
            return ORDO_OK;
        if (status == ORDO_OK)
            status = advance(l, lane, err);
        if (status != ORDO_OK)
            return status;
    }
}

/* Fills the lane's microbatch rows and its digest. */
static ordo_status fill_lane(ordo_loader *l, int i, ordo_batch *b, ordo_error *err)
{
    size_t seq_len = (size_t)l->recipe->sample_len;
    if (!EVP_DigestInit_ex2(l->digest_ctx, EVP_sha256(), NULL))
        return ordo__error(err, ORDO_NOMEM, "cannot hash a batch");
    for (int row = 0; row < l->per_lane; row++) {
        ordo__sample *s = NULL;
        ordo_status status = take_sample(l, i, row, &s, err);
        if (status != ORDO_OK)
            return status;
        size_t at = ((size_t)i * (size_t)l->per_lane + (size_t)row) * seq_len;
        memcpy(l->tokens + at, s->tokens, seq_len * sizeof *s->tokens);
        memcpy(l->doc_start + at, s->doc_start, seq_len);
        size_t index = (size_t)i * (size_t)l->per_lane + (size_t)row;
        l->sample_sources[index] = s->source;
        if (l->row_pieces) { /* observed: the row's pieces replace the last batch's */
            ordo__pieces_free(l->row_pieces[index]);
            l->row_pieces[index] = s->pieces;
            s->pieces = NULL;
        }
        digest_row(l, s->tokens, seq_len);
        b->pad_tokens += s->pad;
        for (uint32_t src = 0; src < l->recipe->source_count; src++)
            l->source_tokens[src] += s->source_tokens[src];
        ordo__sample_free(s);
    }
    unsigned int n = 0;
    EVP_DigestFinal_ex(l->digest_ctx, l->lane_digests + (size_t)i * ORDO_DIGEST_SIZE, &n);
    return ORDO_OK;
}

static ordo_status repeat_failure(const ordo_loader *l, ordo_error *err)
{
    if (err)
        *err = l->failure;
    return l->failed;
}

/* The next batch of this rank; see ordo.h. */
ordo_status ordo_loader_next(ordo_loader *l, ordo_batch *b, ordo_error *err)
{
    memset(b, 0, sizeof *b);
    if (l->failed)
        return repeat_failure(l, err);
    memset(l->source_tokens, 0, l->recipe->source_count * sizeof *l->source_tokens);
    ordo_error local;
    ordo_status status = top_up(l, &local);
    for (int i = 0; status == ORDO_OK && i < l->lane_count; i++)
        status = name_lane(l, l->lane_ids[i], fill_lane(l, i, b, &local), &local);
    if (status != ORDO_OK) {
        l->failed = status;
        l->failure = local;
        return repeat_failure(l, err);
    }
    l->step++;
    b->step = l->step;
    b->rows = l->lane_count * l->per_lane;
    b->seq_len = l->recipe->seq_len;
    b->sample_len = l->recipe->sample_len;
    b->tokens = l->tokens;
    b->doc_start = l->doc_start;
    b->lane_count = l->lane_count;
    b->lanes = l->lane_ids;
    b->lane_digests = l->lane_digests;
    b->source_count = (int)l->recipe->source_count;
    b->source_tokens = l->source_tokens;
    b->sources = l->sample_sources;
    return ordo__ok(err);
}

/* This rank's lanes' replay state after its last batch. */
ordo_status ordo_loader_checkpoint(ordo_loader *l, unsigned char **data, size_t *size,
                                   ordo_error *err)
{
    *data = NULL;
    *size = 0;
    if (l->failed)
        return repeat_failure(l, err);
    if (l->unordered)
        return ordo__error(err, ORDO_INVALID,
                           "an unordered (debug) loader takes no checkpoints: "
                           "its batches cannot be replayed");
    if (l->observe) /* its reads leave records that are only bounds (ordo__pos) */
        return ordo__error(err, ORDO_INVALID,
                           "a loader regenerating a recorded batch takes no checkpoints");
    ordo__state s = {l->rank_bound,
                     (uint64_t)l->step,
                     (uint64_t)l->stride,
                     l->recipe->source_count,
                     l->streams,
                     NULL,
                     (uint64_t)l->lane_count,
                     ordo__recipe_tag(l->recipe)};
    ordo__lane_record *records = calloc((size_t)l->lane_count, sizeof *records);
    if (!records)
        return ordo__error(err, ORDO_NOMEM, "out of memory taking a checkpoint");
    ordo_status status = ORDO_OK;
    for (int i = 0; !l->rank_bound && i < l->lane_count; i++)
        records[i] =
            (ordo__lane_record){.lane = (uint64_t)l->mlanes[i].index,
                                .positions = (ordo__pos *)ordo__mlane_positions(&l->mlanes[i])};
    for (int i = 0; l->rank_bound && i < l->lane_count && status == ORDO_OK; i++) {
        const ordo__lane *lane = &l->lanes[i];
        const ordo__snapshot *snap = ordo__lane_snapshot(lane);
        uint64_t epoch = 0, delivered = 0;
        ordo__lane_record_of(lane, &epoch, &delivered);
        if (!snap)
            status = ordo__error(err, ORDO_INVALID, "lane %d has no state for flush epoch %llu",
                                 lane->index, (unsigned long long)epoch);
        else
            records[i] = (ordo__lane_record){(uint64_t)lane->index, epoch,           delivered,
                                             snap->taken,           snap->estimated, NULL};
    }
    s.lanes = records;
    if (status == ORDO_OK)
        status = ordo__state_encode(&s, data, size, err);
    free(records);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* The pieces of a row of the last batch; see pipeline.h. */
const ordo__pieces *ordo__loader_row_pieces(const ordo_loader *l, int row)
{
    if (!l->row_pieces || row < 0 || row >= l->lane_count * l->per_lane)
        return NULL;
    return l->row_pieces[row];
}
