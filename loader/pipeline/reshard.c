/* The rank-bound re-shard: a standard loader resumed at another world size
 * re-shards exactly what remains of each source's stream. Each old lane's
 * packer and shuffle window are replayed, on token ranges instead of
 * tokens, to the end of the samples it delivered; what they still held
 * goes back to the stream with the chunks no lane reached. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "pipeline.h"
#include "replay.h"
#include "reshard.h"

/* Tokens [from, to) of the chunk at a lane's entry `k` of `source`; `tokens`
 * is the chunk's token count (a range to it is written with end 0). */
typedef struct {
    uint64_t k, from, to, tokens;
    uint32_t source;
} piece;

typedef struct {
    piece *items;
    size_t count, cap;
} pieces;

static int pieces_add(pieces *p, piece x)
{
    if (p->count && p->items[p->count - 1].source == x.source && p->items[p->count - 1].k == x.k &&
        p->items[p->count - 1].to == x.from) {
        p->items[p->count - 1].to = x.to; /* the same chunk, contiguous */
        return 0;
    }
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        piece *grown = realloc(p->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        p->items = grown;
        p->cap = cap;
    }
    p->items[p->count++] = x;
    return 0;
}

/* The tokens of a chunk the replay read in the current flush epoch. */
typedef struct {
    uint32_t source;
    uint64_t k;
    ordo__tokens tokens;
} cached_chunk;

/* The replayed packer of one old lane: samples as lists of pieces. With
 * a ledger, every step its delivered samples complete is hashed and must
 * have the lane digest recorded (the check a same-world-size resume does
 * while dropping them). */
typedef struct {
    const ordo_recipe *recipe;
    uint64_t lane, delivered, emitted, fill;
    pieces partial, *window;
    size_t window_count, window_cap;
    ordo__rng rng;
    uint64_t rng_epoch;
    cached_chunk *cache;
    size_t cache_count, cache_cap;
    ordo_ledger *ledger;         /* NULL: nothing to check */
    int64_t run_id, step, first; /* the state's step; the first step hashed whole */
    uint64_t per_lane, position; /* sample number in the lane of the next delivered */
    EVP_MD_CTX *ctx;
} replay_packer;

/* Token ids as 32-bit little-endian integers (docs/recipe.md, "How a lane's data is decided"). */
static void hash_ids(EVP_MD_CTX *ctx, const uint32_t *ids, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    EVP_DigestUpdate(ctx, ids, count * sizeof *ids);
#else
    for (size_t i = 0; i < count; i++) {
        unsigned char le[4] = {(unsigned char)ids[i], (unsigned char)(ids[i] >> 8),
                               (unsigned char)(ids[i] >> 16), (unsigned char)(ids[i] >> 24)};
        EVP_DigestUpdate(ctx, le, 4);
    }
#endif
}

static const ordo__tokens *cached(const replay_packer *p, uint32_t source, uint64_t k)
{
    for (size_t i = 0; i < p->cache_count; i++)
        if (p->cache[i].source == source && p->cache[i].k == k)
            return &p->cache[i].tokens;
    return NULL;
}

static ordo_status mismatch(const replay_packer *p, int64_t step, const unsigned char *got,
                            const unsigned char *want, ordo_error *err)
{
    char got_hex[ORDO_DIGEST_HEX_SIZE], want_hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(got, got_hex);
    ordo_digest_to_hex(want, want_hex);
    return ordo__error(err, ORDO_INVALID,
                       "resume refused: the checkpoint at step %lld does not reproduce step "
                       "%lld of lane %llu (replayed lane digest %s, the ledger recorded %s); it "
                       "was changed or written by other code",
                       (long long)p->step, (long long)step, (unsigned long long)p->lane, got_hex,
                       want_hex);
}

/* A sample the old lane delivered: hashed into its step's microbatch; a
 * complete microbatch is compared with the ledger's lane digest. */
static ordo_status delivered(replay_packer *p, const pieces *sample, ordo_error *err)
{
    uint64_t position = p->position++;
    int64_t step = (int64_t)(position / p->per_lane) + 1;
    uint64_t row = position % p->per_lane, length = 0;
    if (!p->ledger || step < p->first)
        return ORDO_OK;
    if (row == 0 && !EVP_DigestInit_ex2(p->ctx, EVP_sha256(), NULL))
        return ordo__error(err, ORDO_NOMEM, "cannot hash a replayed sample");
    for (size_t i = 0; i < sample->count; i++) {
        const piece *x = &sample->items[i];
        const ordo__tokens *t = cached(p, x->source, x->k);
        if (!t || x->to > t->count)
            return ordo__error(err, ORDO_INVALID, "re-shard: lane %llu lost a chunk it read",
                               (unsigned long long)p->lane);
        hash_ids(p->ctx, t->ids + x->from, (size_t)(x->to - x->from));
        length += x->to - x->from;
    }
    uint32_t pad = ordo__pad_id(p->recipe);
    for (; length < (uint64_t)p->recipe->sample_len; length++)
        hash_ids(p->ctx, &pad, 1);
    if (row + 1 < p->per_lane)
        return ORDO_OK;
    unsigned char got[ORDO_DIGEST_SIZE], *want = NULL;
    unsigned int n = 0;
    EVP_DigestFinal_ex(p->ctx, got, &n);
    ordo_status status =
        ordo__replay_digests(p->ledger, p->run_id, (int)p->lane, step, step, &want, err);
    if (status == ORDO_OK && memcmp(got, want, ORDO_DIGEST_SIZE) != 0)
        status = mismatch(p, step, got, want, err);
    free(want);
    return status;
}

static void seed(replay_packer *p, uint64_t epoch)
{
    if (p->rng_epoch != epoch) {
        ordo__rng_seed(&p->rng, p->recipe->seed, "shuffle", p->lane, epoch);
        p->rng_epoch = epoch;
    }
}

static void swap(pieces *a, pieces *b)
{
    pieces t = *a;
    *a = *b;
    *b = t;
}

/* A sample is complete: into the shuffle window as ordo__lane's
 * shuffle_in does (the sample leaving it is delivered). */
static ordo_status complete(replay_packer *p, uint64_t epoch, ordo_error *err)
{
    p->fill = 0;
    ordo_status status = ORDO_OK;
    if (p->window_cap == 0) {
        p->emitted++;
        status = delivered(p, &p->partial, err);
        p->partial.count = 0;
        return status;
    }
    seed(p, epoch);
    if (p->window_count < p->window_cap) {
        swap(&p->partial, &p->window[p->window_count++]);
        p->partial.count = 0;
        return ORDO_OK;
    }
    size_t j = (size_t)ordo__rng_below(&p->rng, p->window_cap);
    swap(&p->partial, &p->window[j]);
    p->emitted++;
    status = delivered(p, &p->partial, err); /* the leaving sample */
    p->partial.count = 0;
    return status;
}

/* Flush: the partial sample (padded) goes in, the window drains. */
static ordo_status flush(replay_packer *p, uint64_t epoch, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    if (p->fill > 0 || p->partial.count > 0)
        status = complete(p, epoch, err);
    seed(p, epoch);
    while (status == ORDO_OK && p->window_count > 0 && p->emitted < p->delivered) {
        size_t j = (size_t)ordo__rng_below(&p->rng, p->window_count);
        swap(&p->window[j], &p->window[--p->window_count]);
        p->emitted++;
        status = delivered(p, &p->window[p->window_count], err);
        p->window[p->window_count].count = 0;
    }
    return status;
}

/* Reads and tokenizes a pick's chunk (all of it, whatever it skips) into
 * the packer's cache of the current flush epoch. */
static ordo_status read_chunk(replay_packer *p, const ordo__pick *pick, uint64_t k, uint64_t *count,
                              ordo_error *err)
{
    if (p->cache_count == p->cache_cap) {
        size_t cap = p->cache_cap ? 2 * p->cache_cap : 8;
        cached_chunk *grown = realloc(p->cache, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
        p->cache = grown;
        p->cache_cap = cap;
    }
    ordo__work w;
    memset(&w, 0, sizeof w);
    w.source = pick->source;
    w.ref = pick->ref;
    ordo__op_read(p->recipe, NULL, &w);
    ordo__op_tokenize(p->recipe, &w);
    ordo_status status = w.status;
    if (status != ORDO_OK && err)
        *err = w.err;
    *count = w.tokens.count;
    p->cache[p->cache_count++] = (cached_chunk){pick->source, k, w.tokens}; /* ids moved */
    free(w.text);
    free(w.doc_len);
    free(w.doc_record);
    free(w.doc_offset);
    return status;
}

static void forget_chunks(replay_packer *p)
{
    for (size_t i = 0; i < p->cache_count; i++)
        free(p->cache[i].tokens.ids);
    p->cache_count = 0;
}

/* Packs one pick's tokens; stops at the delivered count. */
static ordo_status pack(replay_packer *p, const ordo__pick *pick, uint64_t k, uint64_t tokens,
                        uint64_t epoch, pieces *left, ordo_error *err)
{
    uint64_t seq_len = (uint64_t)p->recipe->sample_len;
    uint64_t stop = pick->end && pick->end < tokens ? pick->end : tokens;
    uint64_t t = pick->skip < stop ? pick->skip : stop;
    ordo_status status = ORDO_OK;
    while (status == ORDO_OK && t < stop && p->emitted < p->delivered) {
        uint64_t run = stop - t < seq_len - p->fill ? stop - t : seq_len - p->fill;
        if (pieces_add(&p->partial, (piece){k, t, t + run, tokens, pick->source}))
            return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
        p->fill += run;
        t += run;
        if (p->fill == seq_len)
            status = complete(p, epoch, err);
    }
    if (status == ORDO_OK && t < stop && /* the rest of the chunk the lane was inside */
        pieces_add(left, (piece){k, t, stop, tokens, pick->source}))
        return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    return status;
}

/* Where one old lane stood after the samples it delivered: entries of each
 * source it packed, and the parts of them not delivered. */
typedef struct {
    uint64_t *consumed;
    pieces left;
} lane_cut;

static ordo_status held_back(replay_packer *p, lane_cut *cut, ordo_error *err)
{
    for (size_t w = 0; w < p->window_count; w++)
        for (size_t i = 0; i < p->window[w].count; i++)
            if (pieces_add(&cut->left, p->window[w].items[i]))
                return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    for (size_t i = 0; i < p->partial.count; i++)
        if (pieces_add(&cut->left, p->partial.items[i]))
            return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    return ORDO_OK;
}

/* Replays one old lane from its flush epoch's start, packing as
 * ordo__lane_pack does, to the end of the samples it delivered. */
static ordo_status cut_lane(const ordo_recipe *r, const ordo__state *s,
                            const ordo__lane_record *rec, replay_packer *p, lane_cut *cut,
                            ordo_error *err)
{
    ordo__schedule sched;
    ordo_status status = ordo__schedule_init(&sched, r, rec->lane, s->stride, s->streams, err);
    if (status != ORDO_OK)
        return status;
    size_t bytes = r->source_count * sizeof(uint64_t);
    ordo__schedule_restore(&sched, rec->taken, rec->estimated);
    memcpy(cut->consumed, rec->taken, bytes);
    uint64_t flush_every = (uint64_t)r->flush_every, seq = rec->epoch * flush_every;
    uint64_t idle = 0;
    while (status == ORDO_OK && p->emitted < rec->delivered) {
        ordo__pick pick;
        uint64_t tokens = 0, before = p->emitted;
        if (seq % flush_every == 0)
            forget_chunks(p); /* the epoch before drained whole */
        status = ordo__schedule_next(&sched, &pick, err);
        uint64_t k = status == ORDO_OK ? sched.state.taken[pick.source] - 1 : 0;
        if (status == ORDO_OK)
            status = read_chunk(p, &pick, k, &tokens, err);
        if (status == ORDO_OK)
            status = pack(p, &pick, k, tokens, seq / flush_every, &cut->left, err);
        if (status == ORDO_OK && (seq + 1) % flush_every == 0 && p->emitted < rec->delivered)
            status = flush(p, seq / flush_every, err);
        memcpy(cut->consumed, sched.state.taken, bytes);
        seq++;
        idle = p->emitted == before ? idle + 1 : 0;
        if (status == ORDO_OK && idle > flush_every) /* every flush epoch yields a sample */
            status =
                ordo__error(err, ORDO_INVALID,
                            "re-shard: lane %llu delivers nothing from "
                            "flush epoch %llu on",
                            (unsigned long long)rec->lane, (unsigned long long)(seq / flush_every));
    }
    if (status == ORDO_OK)
        status = held_back(p, cut, err);
    ordo__schedule_free(&sched);
    return status;
}

static ordo__unit unit_at(const ordo__stream *old, uint64_t entry)
{
    if (entry < old->count)
        return old->units[entry];
    return (ordo__unit){old->base + (entry - old->count), 0, 0};
}

typedef struct {
    uint64_t entry, to;
    ordo__unit unit;
} ranked_unit;

static int by_entry(const void *x, const void *y)
{
    const ranked_unit *a = x, *b = y;
    if (a->entry != b->entry)
        return (a->entry > b->entry) - (a->entry < b->entry);
    return (a->unit.skip > b->unit.skip) - (a->unit.skip < b->unit.skip);
}

/* The units of one source left by the old lanes: the parts they held
 * back and the entries they had not reached, in stream order. */
static ranked_unit *remaining(const ordo__state *s, const lane_cut *cuts, uint32_t source,
                              uint64_t high, size_t *count)
{
    const ordo__stream *old = &s->streams[source];
    uint64_t lanes = s->stride;
    size_t n = 0, cap = 0;
    for (uint64_t l = 0; l < lanes; l++)
        cap += cuts[l].left.count + (size_t)(high - cuts[l].consumed[source]);
    ranked_unit *out = malloc((cap ? cap : 1) * sizeof *out);
    for (uint64_t l = 0; out && l < lanes; l++) {
        for (size_t i = 0; i < cuts[l].left.count; i++) {
            const piece *x = &cuts[l].left.items[i];
            if (x->source != source)
                continue;
            uint64_t entry = l + x->k * lanes;
            ordo__unit u = {unit_at(old, entry).position, x->from, x->to == x->tokens ? 0 : x->to};
            out[n++] = (ranked_unit){entry, x->to, u};
        }
        for (uint64_t k = cuts[l].consumed[source]; k < high; k++)
            out[n++] = (ranked_unit){l + k * lanes, UINT64_MAX, unit_at(old, l + k * lanes)};
    }
    if (out)
        qsort(out, n, sizeof *out, by_entry);
    *count = n;
    return out;
}

/* One source's new stream: what remains, then the old stream from the
 * first entry no lane reached. */
static ordo_status reshard_source(const ordo__state *s, const lane_cut *cuts, uint32_t source,
                                  ordo__stream *out, ordo_error *err)
{
    const ordo__stream *old = &s->streams[source];
    uint64_t high = 0, end;
    for (uint64_t l = 0; l < s->stride; l++)
        high = cuts[l].consumed[source] > high ? cuts[l].consumed[source] : high;
    end = high * s->stride;
    size_t n = 0;
    ranked_unit *left = remaining(s, cuts, source, high, &n);
    uint64_t kept = old->count > end ? old->count - end : 0;
    out->units = left ? malloc((n + kept ? n + kept : 1) * sizeof *out->units) : NULL;
    if (!out->units) {
        free(left);
        return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    }
    out->count = 0;
    for (size_t i = 0; i < n; i++) {
        ordo__unit *last = out->count ? &out->units[out->count - 1] : NULL;
        if (i > 0 && left[i - 1].entry == left[i].entry && left[i - 1].to == left[i].unit.skip)
            last->end = left[i].unit.end; /* two parts of one chunk that meet */
        else
            out->units[out->count++] = left[i].unit;
    }
    free(left);
    for (uint64_t entry = end; entry < old->count; entry++)
        out->units[out->count++] = old->units[entry];
    out->base = old->base + (end > old->count ? end - old->count : 0);
    return ORDO_OK;
}

static void packer_free(replay_packer *p)
{
    forget_chunks(p);
    free(p->cache);
    EVP_MD_CTX_free(p->ctx);
    free(p->partial.items);
    for (size_t i = 0; p->window && i < p->window_cap; i++)
        free(p->window[i].items);
    free(p->window);
}

/* Re-shards a rank-bound state; see reshard.h. */
ordo_status ordo__reshard(const ordo_recipe *r, const ordo__state *s, ordo_ledger *ledger,
                          int64_t run_id, ordo__stream **streams, ordo_error *err)
{
    *streams = NULL;
    ordo__stream *out = calloc(r->source_count, sizeof *out);
    lane_cut *cuts = calloc((size_t)s->stride, sizeof *cuts);
    ordo_status status =
        out && cuts ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    for (uint64_t l = 0; status == ORDO_OK && l < s->stride; l++) {
        const ordo__lane_record *rec = &s->lanes[l];
        uint64_t per_lane = (uint64_t)r->global_batch / s->stride;
        uint64_t position = s->step * per_lane - rec->delivered; /* bounded by the recipe */
        replay_packer p = {.recipe = r,
                           .lane = rec->lane,
                           .delivered = rec->delivered,
                           .window_cap = ordo__rank_window(r),
                           .rng_epoch = UINT64_MAX,
                           .ledger = run_id ? ledger : NULL,
                           .run_id = run_id,
                           .step = (int64_t)s->step,
                           .per_lane = per_lane,
                           .position = position,
                           .first = (int64_t)((position + per_lane - 1) / per_lane) + 1};
        p.window = calloc(p.window_cap + 1, sizeof *p.window);
        p.ctx = EVP_MD_CTX_new();
        cuts[l].consumed = calloc(r->source_count, sizeof(uint64_t));
        status = cuts[l].consumed && p.window && p.ctx
                     ? cut_lane(r, s, rec, &p, &cuts[l], err)
                     : ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
        packer_free(&p);
    }
    for (uint32_t i = 0; status == ORDO_OK && i < r->source_count; i++)
        status = reshard_source(s, cuts, i, &out[i], err);
    for (uint64_t l = 0; cuts && l < s->stride; l++) {
        free(cuts[l].consumed);
        free(cuts[l].left.items);
    }
    free(cuts);
    if (status != ORDO_OK) {
        ordo__streams_free(out, r->source_count);
        return status;
    }
    *streams = out;
    return ORDO_OK;
}
