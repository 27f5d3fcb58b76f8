/* A lane's accumulators: issuing its schedule's chunks, packing documents
 * into samples, the shuffle window, flushes, and delivery accounting. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pipeline.h"
#include "replay.h"

/* A sample of the recipe; see pipeline.h. */
ordo__sample *ordo__sample_new(const ordo_recipe *r, uint64_t epoch)
{
    size_t n = (size_t)r->sample_len;
    size_t bytes =
        sizeof(ordo__sample) + n * sizeof(uint32_t) + r->source_count * sizeof(uint32_t) + n;
    ordo__sample *s = calloc(1, bytes);
    if (!s)
        return NULL;
    s->epoch = epoch;
    s->source = -1;
    s->tokens = (uint32_t *)(s + 1);
    s->source_tokens = s->tokens + n;
    s->doc_start = (uint8_t *)(s->source_tokens + r->source_count);
    return s;
}

/* Frees a sample; see pipeline.h. */
void ordo__sample_free(ordo__sample *s)
{
    if (s)
        ordo__pieces_free(s->pieces);
    free(s);
}

/* The rank-bound contrast's shuffle window: with "shuffle", as many
 * samples as a logical lane's flush epoch holds (flush_every x B / L),
 * whatever the world size; else none. */
static size_t rank_window(const ordo_loader *l)
{
    return ordo__rank_window(l->recipe);
}

/* Sets a lane up at the start of its schedule. */
ordo_status ordo__lane_init(ordo__lane *lane, ordo_loader *l, int index, ordo_error *err)
{
    memset(lane, 0, sizeof *lane);
    lane->loader = l;
    lane->index = index;
    lane->rng_epoch = UINT64_MAX;
    ordo_status status = ordo__schedule_init(&lane->schedule, l->recipe, (uint64_t)index,
                                             (uint64_t)l->stride, l->streams, err);
    if (status != ORDO_OK)
        return status;
    lane->ring = calloc((size_t)l->prefetch, sizeof *lane->ring);
    lane->window = calloc(rank_window(l) + 1, sizeof *lane->window);
    if (!lane->ring || !lane->window)
        return ordo__error(err, ORDO_NOMEM, "out of memory setting up lane %d", index);
    for (int i = 0; i < l->prefetch; i++) {
        lane->ring[i].lane = lane;
        lane->ring[i].seq = UINT64_MAX; /* free */
    }
    return ordo__lane_resume(lane, 0, 0, lane->schedule.state.taken, lane->schedule.state.estimated,
                             err);
}

static void free_snapshots(ordo__lane *lane, size_t keep_from)
{
    for (size_t i = 0; i < keep_from; i++) {
        free(lane->snapshots[i].taken);
        free(lane->snapshots[i].estimated);
    }
    if (keep_from > 0 && lane->snapshot_count > keep_from)
        memmove(lane->snapshots, lane->snapshots + keep_from,
                (lane->snapshot_count - keep_from) * sizeof *lane->snapshots);
    lane->snapshot_count -= keep_from;
}

/* Frees everything the lane holds. */
void ordo__lane_free(ordo__lane *lane)
{
    for (int i = 0; lane->ring && i < lane->loader->prefetch; i++) {
        ordo__work *w = &lane->ring[i];
        free(w->text);
        free(w->doc_len);
        free(w->doc_record);
        free(w->tokens.ids);
        free(w->doc_offset);
    }
    free(lane->ring);
    for (size_t i = 0; i < lane->window_count; i++)
        free(lane->window[i]);
    free(lane->window);
    for (size_t i = 0; i < lane->out_count; i++)
        free(lane->out[(lane->out_head + i) % lane->out_cap]);
    free(lane->out);
    free(lane->partial);
    if (lane->snapshots)
        free_snapshots(lane, lane->snapshot_count);
    free(lane->snapshots);
    ordo__check_free(&lane->check);
    if (lane->schedule.recipe)
        ordo__schedule_free(&lane->schedule);
}

static ordo_status snapshot(ordo__lane *lane, uint64_t epoch, ordo_error *err)
{
    size_t n = lane->loader->recipe->source_count;
    ordo__snapshot *grown = realloc(lane->snapshots, (lane->snapshot_count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    lane->snapshots = grown;
    ordo__snapshot *s = &grown[lane->snapshot_count];
    s->epoch = epoch;
    s->taken = malloc(n * sizeof(uint64_t));
    s->estimated = malloc(n * sizeof(uint64_t));
    if (!s->taken || !s->estimated) {
        free(s->taken);
        free(s->estimated);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    ordo__schedule_save(&lane->schedule, s->taken, s->estimated);
    lane->snapshot_count++;
    return ORDO_OK;
}

/* Restarts the lane at a flush epoch; see pipeline.h. */
ordo_status ordo__lane_resume(ordo__lane *lane, uint64_t epoch, uint64_t delivered,
                              const uint64_t *taken, const uint64_t *estimated, ordo_error *err)
{
    uint64_t flush_every = (uint64_t)lane->loader->recipe->flush_every;
    ordo__schedule_restore(&lane->schedule, taken, estimated);
    lane->issued = lane->consumed = epoch * flush_every;
    lane->delivered_epoch = lane->step_epoch = lane->ckpt_epoch = epoch;
    lane->delivered_in_epoch = lane->step_offset = lane->step_rows = 0;
    lane->ckpt_delivered = delivered;
    lane->discard = delivered;
    free_snapshots(lane, lane->snapshot_count);
    return snapshot(lane, epoch, err);
}

/* Issues chunks into free slots; returns them chained through ->next. */
ordo_status ordo__lane_issue(ordo__lane *lane, ordo__work **first, ordo_error *err)
{
    ordo_loader *l = lane->loader;
    uint64_t flush_every = (uint64_t)l->recipe->flush_every;
    ordo__work *chain = NULL, **tail = &chain;
    for (int i = 0; i < l->prefetch; i++) {
        ordo__work *w = &lane->ring[i];
        if (w->seq != UINT64_MAX)
            continue;
        uint64_t seq = lane->issued;
        uint64_t epoch = seq / flush_every;
        if (seq % flush_every == 0 && lane->snapshots[lane->snapshot_count - 1].epoch != epoch) {
            ordo_status status = snapshot(lane, epoch, err);
            if (status != ORDO_OK)
                return status;
        }
        ordo__pick pick;
        ordo_status status = ordo__schedule_next(&lane->schedule, &pick, err);
        if (status != ORDO_OK)
            return status;
        w->seq = seq;
        w->source = pick.source;
        w->ref = pick.ref;
        w->skip = pick.skip;
        w->end = pick.end;
        w->first = 0;
        w->from_doc = w->from_record = w->limit = 0;
        w->count = UINT32_MAX;
        w->status = ORDO_OK;
        w->done = 0;
        lane->issued++;
        *tail = w;
        tail = &w->next;
    }
    *tail = NULL;
    *first = chain;
    return ORDO_OK;
}

static ordo_status push_out(ordo__lane *lane, ordo__sample *s, ordo_error *err)
{
    if (lane->out_count == lane->out_cap) {
        size_t cap = lane->out_cap ? 2 * lane->out_cap : 16;
        ordo__sample **grown = malloc(cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        for (size_t i = 0; i < lane->out_count; i++)
            grown[i] = lane->out[(lane->out_head + i) % lane->out_cap];
        free(lane->out);
        lane->out = grown;
        lane->out_cap = cap;
        lane->out_head = 0;
    }
    lane->out[(lane->out_head + lane->out_count++) % lane->out_cap] = s;
    return ORDO_OK;
}

static void seed_shuffle(ordo__lane *lane, uint64_t epoch)
{
    if (lane->rng_epoch != epoch) {
        ordo__rng_seed(&lane->rng, lane->loader->recipe->seed, "shuffle", (uint64_t)lane->index,
                       epoch);
        lane->rng_epoch = epoch;
    }
}

/* Shuffle accumulator: a window of samples, seeded per (lane, epoch). */
static ordo_status shuffle_in(ordo__lane *lane, ordo__sample *s, ordo_error *err)
{
    size_t window = rank_window(lane->loader);
    if (window == 0)
        return push_out(lane, s, err);
    seed_shuffle(lane, s->epoch);
    if (lane->window_count < window) {
        lane->window[lane->window_count++] = s;
        return ORDO_OK;
    }
    size_t j = (size_t)ordo__rng_below(&lane->rng, window);
    ordo__sample *leaving = lane->window[j];
    lane->window[j] = s;
    return push_out(lane, leaving, err);
}

static ordo_status shuffle_drain(ordo__lane *lane, uint64_t epoch, ordo_error *err)
{
    seed_shuffle(lane, epoch);
    while (lane->window_count > 0) {
        size_t j = (size_t)ordo__rng_below(&lane->rng, lane->window_count);
        ordo__sample *leaving = lane->window[j];
        lane->window[j] = lane->window[--lane->window_count];
        ordo_status status = push_out(lane, leaving, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status emit_partial(ordo__lane *lane, ordo_error *err)
{
    ordo__sample *s = lane->partial;
    lane->partial = NULL;
    lane->fill = 0;
    return shuffle_in(lane, s, err);
}

/* Flush: the packer pads its partial sample, the window drains. */
static ordo_status flush(ordo__lane *lane, uint64_t epoch, ordo_error *err)
{
    const ordo_recipe *r = lane->loader->recipe;
    if (lane->partial) {
        uint32_t pad = ordo__pad_id(r);
        for (size_t i = lane->fill; i < (size_t)r->sample_len; i++)
            lane->partial->tokens[i] = pad;
        lane->partial->pad = (uint32_t)((size_t)r->sample_len - lane->fill);
        ordo_status status = emit_partial(lane, err);
        if (status != ORDO_OK)
            return status;
    }
    return shuffle_drain(lane, epoch, err);
}

/* Packing accumulator: documents (each ending in end-of-text) cut into
 * samples of exactly seq_len tokens; documents may span samples. Tokens
 * move in runs: up to the next document start or the end of the sample. */
ordo_status ordo__lane_pack(ordo__lane *lane, ordo__work *w, ordo_error *err)
{
    const ordo_recipe *r = lane->loader->recipe;
    size_t seq_len = (size_t)r->sample_len;
    uint64_t epoch = w->seq / (uint64_t)r->flush_every;
    size_t stop = w->end && w->end < w->tokens.count ? (size_t)w->end : w->tokens.count;
    size_t next_doc = 0, t = w->skip < stop ? (size_t)w->skip : stop;
    while (next_doc < w->doc_count && w->doc_offset[next_doc] < t)
        next_doc++; /* documents begun before a re-shard: their rest has no start */
    while (t < stop) {
        if (!lane->partial && !(lane->partial = ordo__sample_new(r, epoch)))
            return ordo__error(err, ORDO_NOMEM, "out of memory packing");
        ordo__sample *s = lane->partial;
        if (next_doc < w->doc_count && w->doc_offset[next_doc] == t) {
            s->doc_start[lane->fill] = 1;
            next_doc++;
        }
        size_t end = next_doc < w->doc_count && w->doc_offset[next_doc] < stop
                         ? w->doc_offset[next_doc]
                         : stop;
        size_t run = end - t;
        if (run > seq_len - lane->fill)
            run = seq_len - lane->fill;
        memcpy(s->tokens + lane->fill, w->tokens.ids + t, run * sizeof *s->tokens);
        s->source_tokens[w->source] += (uint32_t)run;
        lane->fill += run;
        t += run;
        if (lane->fill == seq_len) {
            ordo_status status = emit_partial(lane, err);
            if (status != ORDO_OK)
                return status;
        }
    }
    if ((w->seq + 1) % (uint64_t)r->flush_every == 0)
        return flush(lane, epoch, err);
    return ORDO_OK;
}

/* Arms a resume check; see pipeline.h. */
ordo_status ordo__check_arm(ordo__resume_check *c, uint64_t position, int64_t first,
                            struct ordo_ledger *ledger, int64_t run_id, ordo_error *err)
{
    c->ledger = ledger;
    c->run = run_id;
    c->position = position;
    c->first = first;
    if (!c->ctx && !(c->ctx = EVP_MD_CTX_new()))
        return ordo__error(err, ORDO_NOMEM, "out of memory arming a resume check");
    return ORDO_OK;
}

/* Frees a resume check's hash context. */
void ordo__check_free(ordo__resume_check *c)
{
    EVP_MD_CTX_free(c->ctx);
    c->ctx = NULL;
}

/* Token ids as 32-bit little-endian integers (docs/recipe.md, "How a lane's data is decided"). */
static void hash_tokens(EVP_MD_CTX *ctx, const uint32_t *tokens, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    EVP_DigestUpdate(ctx, tokens, count * sizeof *tokens);
#else
    for (size_t i = 0; i < count; i++) {
        unsigned char le[4] = {(unsigned char)tokens[i], (unsigned char)(tokens[i] >> 8),
                               (unsigned char)(tokens[i] >> 16), (unsigned char)(tokens[i] >> 24)};
        EVP_DigestUpdate(ctx, le, 4);
    }
#endif
}

/* A sample a resume drops: hashed into its step's microbatch; a complete
 * microbatch must have the lane digest the ledger recorded for the step. */
ordo_status ordo__check_sample(ordo_loader *l, int lane, ordo__resume_check *c,
                               const uint32_t *tokens, ordo_error *err)
{
    uint64_t per_lane = (uint64_t)l->per_lane, position = c->position++;
    int64_t step = (int64_t)(position / per_lane) + 1;
    uint64_t row = position % per_lane;
    if (!c->ledger || step < c->first)
        return ORDO_OK; /* a step begun in an earlier flush epoch: not replayed whole */
    if (row == 0 && !EVP_DigestInit_ex2(c->ctx, EVP_sha256(), NULL))
        return ordo__error(err, ORDO_NOMEM, "cannot hash a replayed sample");
    hash_tokens(c->ctx, tokens, (size_t)l->recipe->sample_len);
    if (row + 1 < per_lane)
        return ORDO_OK;
    unsigned char got[ORDO_DIGEST_SIZE], *want = NULL;
    unsigned int n = 0;
    EVP_DigestFinal_ex(c->ctx, got, &n);
    ordo_status status = ordo__replay_digests(c->ledger, c->run, lane, step, step, &want, err);
    if (status != ORDO_OK)
        return status;
    int same = memcmp(got, want, ORDO_DIGEST_SIZE) == 0;
    char got_hex[ORDO_DIGEST_HEX_SIZE], want_hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(got, got_hex);
    ordo_digest_to_hex(want, want_hex);
    free(want);
    if (same)
        return ORDO_OK;
    return ordo__error(err, ORDO_INVALID,
                       "resume refused: the checkpoint at step %lld does not reproduce step "
                       "%lld of lane %d (replayed lane digest %s, the ledger recorded %s); it "
                       "was changed or written by other code",
                       (long long)l->step, (long long)step, lane, got_hex, want_hex);
}

static ordo_status check_dropped(ordo__lane *lane, const ordo__sample *s, ordo_error *err)
{
    return ordo__check_sample(lane->loader, lane->index, &lane->check, s->tokens, err);
}

static ordo__sample *pop(ordo__lane *lane)
{
    ordo__sample *s = lane->out[lane->out_head];
    lane->out_head = (lane->out_head + 1) % lane->out_cap;
    lane->out_count--;
    if (s->epoch != lane->delivered_epoch) {
        lane->delivered_epoch = s->epoch;
        lane->delivered_in_epoch = 0;
    }
    lane->delivered_in_epoch++;
    return s;
}

/* Drops what a resume regenerated but was delivered before; see
 * pipeline.h. */
ordo_status ordo__lane_drop(ordo__lane *lane, ordo_error *err)
{
    while (lane->discard > 0 && lane->out_count > 0) {
        ordo__sample *s = pop(lane);
        lane->discard--;
        ordo_status status = check_dropped(lane, s, err);
        free(s);
        if (status != ORDO_OK)
            return status;
    }
    if (lane->discard == 0)
        lane->check.ledger = NULL; /* every dropped step checked */
    return ORDO_OK;
}

/* Next deliverable sample, after resume discards; updates the epoch
 * accounting a checkpoint needs. */
ordo_status ordo__lane_take(ordo__lane *lane, int first, ordo__sample **sample, ordo_error *err)
{
    *sample = NULL;
    ordo_status status = ordo__lane_drop(lane, err);
    if (status != ORDO_OK || lane->discard > 0 || lane->out_count == 0)
        return status;
    ordo__sample *s = pop(lane);
    if (first) {
        lane->step_epoch = s->epoch;
        lane->step_offset = lane->delivered_in_epoch - 1;
        lane->step_rows = 0;
        size_t drop = 0;
        while (drop < lane->snapshot_count && lane->snapshots[drop].epoch < s->epoch)
            drop++;
        free_snapshots(lane, drop);
    }
    lane->ckpt_epoch = lane->step_epoch;
    lane->ckpt_delivered = lane->step_offset + ++lane->step_rows;
    *sample = s;
    return ORDO_OK;
}

/* The checkpoint record of the lane; see pipeline.h. */
void ordo__lane_record_of(const ordo__lane *lane, uint64_t *epoch, uint64_t *delivered)
{
    *epoch = lane->ckpt_epoch;
    *delivered = lane->ckpt_delivered;
}

/* The work-source state a checkpoint after the last step starts at. */
const ordo__snapshot *ordo__lane_snapshot(const ordo__lane *lane)
{
    for (size_t i = 0; i < lane->snapshot_count; i++)
        if (lane->snapshots[i].epoch == lane->ckpt_epoch)
            return &lane->snapshots[i];
    return NULL;
}
