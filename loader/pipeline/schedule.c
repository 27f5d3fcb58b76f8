/* The work source of one lane: seeded chunk orders per (source, epoch),
 * lanes striding the streams, token-ratio mixing in integers. */
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* Sets a schedule up at its start. */
ordo_status ordo__schedule_init(ordo__schedule *s, const ordo_recipe *r, uint64_t lane,
                                uint64_t stride, const ordo__stream *streams, ordo_error *err)
{
    memset(s, 0, sizeof *s);
    uint32_t n = r->source_count;
    s->recipe = r;
    s->lane = lane;
    s->stride = stride;
    s->streams = streams;
    s->state.taken = calloc(n, sizeof *s->state.taken);
    s->state.estimated = calloc(n, sizeof *s->state.estimated);
    s->order = calloc(n, sizeof *s->order);
    s->order_epoch = malloc(n * sizeof *s->order_epoch);
    if (!s->state.taken || !s->state.estimated || !s->order || !s->order_epoch) {
        ordo__schedule_free(s);
        return ordo__error(err, ORDO_NOMEM, "out of memory setting up a lane");
    }
    for (uint32_t i = 0; i < n; i++)
        s->order_epoch[i] = UINT64_MAX;
    return ORDO_OK;
}

/* Frees the schedule's arrays. */
void ordo__schedule_free(ordo__schedule *s)
{
    free(s->order);
    free(s->order_epoch);
    free(s->state.taken);
    free(s->state.estimated);
    memset(s, 0, sizeof *s);
}

uint64_t ordo__estimated_tokens(const ordo_recipe *r, uint32_t source, const ordo__chunk *chunk)
{
    const ordo__source *src = &r->sources[source];
    unsigned __int128 v = (unsigned __int128)chunk->raw_length * src->sample_tokens;
    uint64_t tokens = (uint64_t)(v / (src->sample_bytes ? src->sample_bytes : 1));
    return tokens ? tokens : 1;
}

/* The source furthest behind weight × total: maximise
 * share_s * T - ONE * E_s, exact in 128-bit integers. */
static uint32_t behind_most(const ordo__schedule *s)
{
    const ordo_recipe *r = s->recipe;
    unsigned __int128 total = 0;
    for (uint32_t i = 0; i < r->source_count; i++)
        total += s->state.estimated[i];
    uint32_t best = 0;
    __int128 best_deficit = 0;
    for (uint32_t i = 0; i < r->source_count; i++) {
        __int128 deficit = (__int128)(r->sources[i].share * total) -
                           (__int128)((unsigned __int128)ORDO__SHARE_ONE * s->state.estimated[i]);
        if (i == 0 || deficit > best_deficit) {
            best = i;
            best_deficit = deficit;
        }
    }
    return best;
}

static ordo_status order_for(ordo__schedule *s, uint32_t source, uint64_t epoch, ordo_error *err)
{
    if (s->order_epoch[source] == epoch)
        return ORDO_OK;
    uint32_t n = s->recipe->sources[source].chunk_count;
    if (n == 0)
        return ordo__error(err, ORDO_INVALID, "source '%s' has no chunks",
                           s->recipe->sources[source].name);
    ordo__permutation_init(&s->order[source], n, s->recipe->seed, "chunk-order", source, epoch);
    s->order_epoch[source] = epoch;
    return ORDO_OK;
}

/* Picks the next chunk; see schedule.h. */
ordo_status ordo__schedule_next(ordo__schedule *s, ordo__pick *pick, ordo_error *err)
{
    uint32_t source = behind_most(s);
    const ordo__source *src = &s->recipe->sources[source];
    uint64_t entry = s->lane + s->state.taken[source] * s->stride, skip = 0, end = 0;
    uint64_t position = entry;
    if (s->streams && entry < s->streams[source].count) {
        position = s->streams[source].units[entry].position;
        skip = s->streams[source].units[entry].skip;
        end = s->streams[source].units[entry].end;
    } else if (s->streams) {
        position = s->streams[source].base + (entry - s->streams[source].count);
    }
    uint64_t epoch = position / src->chunk_count;
    ordo_status status = order_for(s, source, epoch, err);
    if (status != ORDO_OK)
        return status;
    pick->source = source;
    pick->position = position;
    pick->skip = skip;
    pick->end = end;
    pick->ref = src->chunks[ordo__permutation_at(&s->order[source], position % src->chunk_count)];
    const ordo__chunk *chunk = &src->shards[pick->ref.shard].chunks[pick->ref.chunk];
    s->state.taken[source]++;
    s->state.estimated[source] += ordo__estimated_tokens(s->recipe, source, chunk);
    return ORDO_OK;
}

void ordo__schedule_save(const ordo__schedule *s, uint64_t *taken, uint64_t *estimated)
{
    size_t n = s->recipe->source_count * sizeof(uint64_t);
    memcpy(taken, s->state.taken, n);
    memcpy(estimated, s->state.estimated, n);
}

void ordo__schedule_restore(ordo__schedule *s, const uint64_t *taken, const uint64_t *estimated)
{
    size_t n = s->recipe->source_count * sizeof(uint64_t);
    memcpy(s->state.taken, taken, n);
    memcpy(s->state.estimated, estimated, n);
}
