/* The rank-bound re-shard: a standard loader resumed at another world size
 * re-shards exactly what remains of each source's stream. */
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
#include "reshard.h"

/* Where one lane stood after the samples it delivered: chunks of each
 * source packed whole, and the chunk it was inside, if any. */
typedef struct {
    uint64_t *consumed;
    int inside;
    uint32_t inside_source;
    uint64_t inside_skip; /* tokens of that chunk delivered */
} lane_cut;

/* Tokens a pick adds to the packer (its chunk's, less those skipped). */
static ordo_status pick_tokens(const ordo_recipe *r, const ordo__pick *pick, uint64_t *count,
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
    *count = w.tokens.count > pick->skip ? w.tokens.count - pick->skip : 0;
    free(w.text);
    free(w.doc_len);
    free(w.tokens.ids);
    free(w.doc_offset);
    return status;
}

/* Replays a lane's packer from its flush epoch's start to the end of its
 * delivered samples (packing as ordo__lane_pack does: samples of seq_len,
 * the partial one padded at each flush). */
static ordo_status cut_lane(const ordo_recipe *r, const ordo__state *s,
                            const ordo__lane_record *rec, lane_cut *cut, ordo_error *err)
{
    ordo__schedule sched;
    size_t bytes = r->source_count * sizeof(uint64_t);
    ordo_status status = ordo__schedule_init(&sched, r, rec->lane, s->stride, s->streams, err);
    if (status != ORDO_OK)
        return status;
    ordo__schedule_restore(&sched, rec->taken, rec->estimated);
    memcpy(cut->consumed, rec->taken, bytes);
    uint64_t seq_len = (uint64_t)r->seq_len, flush_every = (uint64_t)r->flush_every;
    uint64_t seq = rec->epoch * flush_every, emitted = 0, fill = 0, empty = 0;
    while (status == ORDO_OK && emitted < rec->delivered) {
        ordo__pick pick;
        uint64_t n = 0;
        status = ordo__schedule_next(&sched, &pick, err);
        if (status == ORDO_OK)
            status = pick_tokens(r, &pick, &n, err);
        if (status != ORDO_OK)
            break;
        unsigned __int128 need = (unsigned __int128)(rec->delivered - emitted) * seq_len - fill;
        if (n < need) {
            fill += n;
            emitted += fill / seq_len;
            fill %= seq_len;
            if ((seq + 1) % flush_every == 0 && fill > 0)
                emitted++, fill = 0;
        } else if (n > need) {
            cut->inside = 1;
            cut->inside_source = pick.source;
            cut->inside_skip = pick.skip + (uint64_t)need;
            break; /* consumed stays before this chunk */
        } else {
            emitted = rec->delivered;
        }
        memcpy(cut->consumed, sched.state.taken, bytes);
        seq++;
        empty = n ? 0 : empty + 1;
        if (empty > flush_every) /* a chunk has at least one token: never here */
            status = ordo__error(err, ORDO_INVALID, "re-shard: lane %llu reads chunks without "
                                                    "tokens", (unsigned long long)rec->lane);
    }
    ordo__schedule_free(&sched);
    return status;
}

static ordo__unit unit_at(const ordo__stream *old, uint64_t entry)
{
    if (entry < old->count)
        return old->units[entry];
    return (ordo__unit){old->base + (entry - old->count), 0};
}

/* One source's new stream: the entries no lane consumed, in stream order. */
static ordo_status reshard_source(const ordo__state *s, const lane_cut *cuts, uint32_t source,
                                  ordo__stream *out, ordo_error *err)
{
    const ordo__stream *old = &s->streams[source];
    uint64_t lanes = s->stride, low = UINT64_MAX, high = 0;
    for (uint64_t l = 0; l < lanes; l++) {
        uint64_t c = cuts[l].consumed[source];
        uint64_t reached = c + (cuts[l].inside && cuts[l].inside_source == source);
        low = c < low ? c : low;
        high = reached > high ? reached : high;
    }
    uint64_t end = high * lanes, kept = old->count > end ? old->count - end : 0;
    uint64_t cap = (high - low) * lanes + kept;
    out->units = malloc((cap ? cap : 1) * sizeof *out->units);
    if (!out->units)
        return ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    out->count = 0;
    for (uint64_t entry = low * lanes; entry < end; entry++) {
        const lane_cut *cut = &cuts[entry % lanes];
        uint64_t k = entry / lanes;
        if (k < cut->consumed[source])
            continue;
        ordo__unit u = unit_at(old, entry);
        if (k == cut->consumed[source] && cut->inside && cut->inside_source == source)
            u.skip = cut->inside_skip;
        out->units[out->count++] = u;
    }
    for (uint64_t entry = end; entry < old->count; entry++)
        out->units[out->count++] = old->units[entry];
    out->base = old->base + (end > old->count ? end - old->count : 0);
    return ORDO_OK;
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
        cuts[l].consumed = calloc(r->source_count, sizeof(uint64_t));
        status = cuts[l].consumed ? cut_lane(r, s, &s->lanes[l], &cuts[l], err)
                                  : ordo__error(err, ORDO_NOMEM, "out of memory re-sharding");
    }
    for (uint32_t i = 0; status == ORDO_OK && i < r->source_count; i++)
        status = reshard_source(s, cuts, i, &out[i], err);
    for (uint64_t l = 0; cuts && l < s->stride; l++)
        free(cuts[l].consumed);
    free(cuts);
    if (status != ORDO_OK) {
        ordo__streams_free(out, r->source_count);
        return status;
    }
    *streams = out;
    return ORDO_OK;
}
