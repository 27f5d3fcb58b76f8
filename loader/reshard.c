/* The rank-bound re-shard: a standard loader resumed at another world size
 * re-shards exactly what remains of each source's stream. Each old lane's
 * packer and shuffle window are replayed, on token ranges instead of
 * tokens, to the end of the samples it delivered; what they still held
 * goes back to the stream with the chunks no lane reached. */
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
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
    if (p->count && p->items[p->count - 1].source == x.source &&
        p->items[p->count - 1].k == x.k && p->items[p->count - 1].to == x.from) {
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

/* The replayed packer of one old lane: samples as lists of pieces. */
typedef struct {
    const ordo_recipe *recipe;
    uint64_t lane, delivered, emitted, fill;
    pieces partial, *window;
    size_t window_count, window_cap;
    ordo__rng rng;
    uint64_t rng_epoch;
} replay_packer;

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
static void complete(replay_packer *p, uint64_t epoch)
{
    p->fill = 0;
    if (p->window_cap == 0) {
        p->emitted++;
        p->partial.count = 0;
        return;
    }
    seed(p, epoch);
    if (p->window_count < p->window_cap) {
        swap(&p->partial, &p->window[p->window_count++]);
        p->partial.count = 0;
        return;
    }
    size_t j = (size_t)ordo__rng_below(&p->rng, p->window_cap);
    swap(&p->partial, &p->window[j]);
    p->partial.count = 0; /* the leaving sample */
    p->emitted++;
}

/* Flush: the partial sample (padded) goes in, the window drains. */
static void flush(replay_packer *p, uint64_t epoch)
{
    if (p->fill > 0 || p->partial.count > 0)
        complete(p, epoch);
    seed(p, epoch);
    while (p->window_count > 0 && p->emitted < p->delivered) {
        size_t j = (size_t)ordo__rng_below(&p->rng, p->window_count);
        swap(&p->window[j], &p->window[--p->window_count]);
        p->window[p->window_count].count = 0;
        p->emitted++;
    }
}

/* Tokens of a pick's chunk (all of them, whatever it skips). */
static ordo_status chunk_tokens(const ordo_recipe *r, const ordo__pick *pick, uint64_t *count,
                                ordo_error *err)
{
    ordo__work w;
    memset(&w, 0, sizeof w);
    w.source = pick->source;
    w.ref = pick->ref;
    ordo__op_read(r, &w);
    ordo__op_tokenize(r, &w);
    ordo_status status = w.status;
    if (status != ORDO_OK && err)
        *err = w.err;
    *count = w.tokens.count;
    free(w.text);
    free(w.doc_len);
    free(w.tokens.ids);
    free(w.doc_offset);
    return status;
}

/* Packs one pick's tokens; stops at the delivered count. */
static int pack(replay_packer *p, const ordo__pick *pick, uint64_t k, uint64_t tokens,
                uint64_t epoch, pieces *left)
{
    uint64_t seq_len = (uint64_t)p->recipe->seq_len;
    uint64_t stop = pick->end && pick->end < tokens ? pick->end : tokens;
    uint64_t t = pick->skip < stop ? pick->skip : stop;
    while (t < stop && p->emitted < p->delivered) {
        uint64_t run = stop - t < seq_len - p->fill ? stop - t : seq_len - p->fill;
        if (pieces_add(&p->partial, (piece){k, t, t + run, tokens, pick->source}))
            return -1;
        p->fill += run;
        t += run;
        if (p->fill == seq_len)
            complete(p, epoch);
    }
    if (t < stop) /* the rest of the chunk the lane was inside */
        return pieces_add(left, (piece){k, t, stop, tokens, pick->source});
    return 0;
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
        status = ordo__schedule_next(&sched, &pick, err);
        uint64_t k = sched.state.taken[pick.source] - 1;
        if (status == ORDO_OK)
            status = chunk_tokens(r, &pick, &tokens, err);
        if (status == ORDO_OK && pack(p, &pick, k, tokens, seq / flush_every, &cut->left))
            status = ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
        if (status == ORDO_OK && (seq + 1) % flush_every == 0 && p->emitted < rec->delivered)
            flush(p, seq / flush_every);
        memcpy(cut->consumed, sched.state.taken, bytes);
        seq++;
        idle = p->emitted == before ? idle + 1 : 0;
        if (status == ORDO_OK && idle > flush_every) /* every flush epoch yields a sample */
            status = ordo__error(err, ORDO_INVALID, "re-shard: lane %llu delivers nothing from "
                                                    "flush epoch %llu on",
                                 (unsigned long long)rec->lane,
                                 (unsigned long long)(seq / flush_every));
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
    free(p->partial.items);
    for (size_t i = 0; p->window && i < p->window_cap; i++)
        free(p->window[i].items);
    free(p->window);
}

/* Re-shards a rank-bound state; see reshard.h. */
ordo_status ordo__reshard(const ordo_recipe *r, const ordo__state *s, ordo__stream **streams,
                          ordo_error *err)
{
    *streams = NULL;
    ordo__stream *out = calloc(r->source_count, sizeof *out);
    lane_cut *cuts = calloc((size_t)s->stride, sizeof *cuts);
    ordo_status status = out && cuts ? ORDO_OK
                                     : ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    for (uint64_t l = 0; status == ORDO_OK && l < s->stride; l++) {
        replay_packer p = {.recipe = r, .lane = s->lanes[l].lane,
                           .delivered = s->lanes[l].delivered,
                           .window_cap = (size_t)r->shuffle_window, .rng_epoch = UINT64_MAX};
        p.window = calloc(p.window_cap + 1, sizeof *p.window);
        cuts[l].consumed = calloc(r->source_count, sizeof(uint64_t));
        status = cuts[l].consumed && p.window
                     ? cut_lane(r, s, &s->lanes[l], &p, &cuts[l], err)
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
