/* Checkpoints: varint encoding of per-lane replay state (docs/recipe.md, "Checkpoints"). */
#include <stdlib.h>
#include <string.h>

#include "lane_state.h"

#define MAX_LANE_RECORDS (1u << 20)
#define STATE_VERSION 6
#define STATE_VERSION_5 5     /* positions without their record: still read */
#define ALGORITHM_1_VERSION 4 /* the last format of data algorithm 1 */
#define MAX_UNITS (1u << 20)  /* per source */

/* The recipe tag; see lane_state.h. */
uint32_t ordo__recipe_tag(const ordo_recipe *recipe)
{
    return (uint32_t)strtoul((char[9]){recipe->id[0], recipe->id[1], recipe->id[2], recipe->id[3],
                                       recipe->id[4], recipe->id[5], recipe->id[6], recipe->id[7],
                                       '\0'},
                             NULL, 16);
}

typedef struct {
    unsigned char *data;
    size_t size, capacity;
    int failed;
} writer;

static void put(writer *w, uint64_t v)
{
    do {
        if (w->size == w->capacity) {
            size_t cap = w->capacity ? 2 * w->capacity : 256;
            unsigned char *grown = realloc(w->data, cap);
            if (!grown) {
                w->failed = 1;
                return;
            }
            w->data = grown;
            w->capacity = cap;
        }
        unsigned char byte = v & 0x7f;
        v >>= 7;
        w->data[w->size++] = byte | (v ? 0x80 : 0);
    } while (v);
}

typedef struct {
    const unsigned char *data;
    size_t size, at;
    int failed;
} reader;

static uint64_t get(reader *r)
{
    if (r->failed) /* once malformed, every later field reads as 0 */
        return 0;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->at >= r->size) {
            r->failed = 1;
            return 0;
        }
        unsigned char byte = r->data[r->at++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    r->failed = 1;
    return 0;
}

/* Logical lanes' records: lane, then each source's packer position. */
static void put_positions(writer *w, const ordo__state *s)
{
    put(w, s->lane_count);
    for (uint64_t l = 0; l < s->lane_count; l++) {
        put(w, s->lanes[l].lane);
        for (uint32_t i = 0; i < s->sources; i++) {
            put(w, s->lanes[l].positions[i].unit);
            put(w, s->lanes[l].positions[i].doc);
            put(w, s->lanes[l].positions[i].offset);
            put(w, s->lanes[l].positions[i].record);
        }
    }
}

/* Rank-bound records: stream bases, lane records, re-shard units. */
static void put_rank_bound(writer *w, const ordo__state *s)
{
    for (uint32_t i = 0; i < s->sources; i++)
        put(w, s->streams[i].base);
    put(w, s->lane_count);
    for (uint64_t l = 0; l < s->lane_count; l++) {
        const ordo__lane_record *rec = &s->lanes[l];
        put(w, rec->lane);
        put(w, rec->epoch);
        put(w, rec->delivered);
        for (uint32_t i = 0; i < s->sources; i++)
            put(w, rec->taken[i]);
        for (uint32_t i = 0; i < s->sources; i++)
            put(w, rec->estimated[i]);
    }
    for (uint32_t i = 0; i < s->sources; i++) {
        const ordo__stream *stream = &s->streams[i];
        put(w, stream->count);
        for (uint64_t u = 0; u < stream->count; u++) {
            uint64_t previous = u ? stream->units[u - 1].position : UINT64_MAX;
            put(w, stream->units[u].position - previous); /* from -1: position + 1 */
            put(w, stream->units[u].skip);
            put(w, stream->units[u].end);
        }
    }
}

/* Encodes a state. */
ordo_status ordo__state_encode(const ordo__state *s, unsigned char **data, size_t *size,
                               ordo_error *err)
{
    writer w = {0};
    put(&w, STATE_VERSION);
    put(&w, s->rank_bound ? 1 : 0);
    put(&w, s->recipe_tag);
    put(&w, s->step);
    put(&w, s->stride);
    put(&w, s->sources);
    if (s->rank_bound)
        put_rank_bound(&w, s);
    else
        put_positions(&w, s);
    if (w.failed) {
        free(w.data);
        return ordo__error(err, ORDO_NOMEM, "out of memory encoding a checkpoint");
    }
    *data = w.data;
    *size = w.size;
    return ORDO_OK;
}

/* Frees streams and their units; see lane_state.h. */
void ordo__streams_free(ordo__stream *streams, uint32_t count)
{
    for (uint32_t i = 0; streams && i < count; i++)
        free(streams[i].units);
    free(streams);
}

void ordo__state_free(ordo__state *s)
{
    for (uint64_t l = 0; s->lanes && l < s->lane_count; l++) {
        free(s->lanes[l].taken);
        free(s->lanes[l].estimated);
        free(s->lanes[l].positions);
    }
    free(s->lanes);
    ordo__streams_free(s->streams, s->sources);
    memset(s, 0, sizeof *s);
}

/* Lane record l is below the stride and after record l - 1; else an
 * error naming the lane and the byte. */
static int lane_in_order(const reader *r, const ordo__state *s, uint64_t l, ordo_error *err)
{
    uint64_t lane = s->lanes[l].lane;
    if (lane < s->stride && (l == 0 || lane > s->lanes[l - 1].lane))
        return 1;
    ordo__error(err, ORDO_INVALID,
                "checkpoint: lane %llu at byte %zu is out of order or beyond %llu lanes",
                (unsigned long long)lane, r->at, (unsigned long long)s->stride);
    return 0;
}

/* Logical lane records: lane numbers ascending below the stride, then
 * each source's position. */
static ordo_status decode_positions(reader *r, ordo__state *s, int with_record, ordo_error *err)
{
    for (uint64_t l = 0; l < s->lane_count && !r->failed; l++) {
        ordo__lane_record *rec = &s->lanes[l];
        rec->lane = get(r);
        rec->positions = calloc(s->sources, sizeof *rec->positions);
        if (!rec->positions)
            return ordo__error(err, ORDO_NOMEM, "out of memory decoding a checkpoint");
        for (uint32_t i = 0; i < s->sources; i++) {
            rec->positions[i].unit = get(r);
            rec->positions[i].doc = get(r);
            rec->positions[i].offset = get(r);
            rec->positions[i].record = with_record ? get(r) : 0;
        }
        if (!r->failed && !lane_in_order(r, s, l, err))
            return ORDO_INVALID;
    }
    return ORDO_OK;
}

static ordo_status decode_lanes(reader *r, ordo__state *s, ordo_error *err)
{
    for (uint64_t l = 0; l < s->lane_count && !r->failed; l++) {
        ordo__lane_record *rec = &s->lanes[l];
        rec->lane = get(r);
        rec->epoch = get(r);
        rec->delivered = get(r);
        rec->taken = calloc(s->sources ? s->sources : 1, sizeof(uint64_t));
        rec->estimated = calloc(s->sources ? s->sources : 1, sizeof(uint64_t));
        if (!rec->taken || !rec->estimated)
            return ordo__error(err, ORDO_NOMEM, "out of memory decoding a checkpoint");
        for (uint32_t i = 0; i < s->sources; i++)
            rec->taken[i] = get(r);
        for (uint32_t i = 0; i < s->sources; i++)
            rec->estimated[i] = get(r);
        if (!r->failed && !lane_in_order(r, s, l, err))
            return ORDO_INVALID;
    }
    return ORDO_OK;
}

/* One unit after `previous` (NULL for the first): ascending by (position,
 * skip) below the base, a non-empty token range, nothing after a unit that
 * runs to its chunk's end. */
static int unit_fits(const ordo__unit *u, const ordo__unit *previous, uint64_t base)
{
    if (u->position >= base || (u->end && u->end <= u->skip))
        return 0;
    if (!previous || u->position > previous->position)
        return 1;
    return u->position == previous->position && previous->end && u->skip >= previous->end;
}

/* A source's units: a bounded count, each fitting after the one before. */
static ordo_status decode_units(reader *r, ordo__stream *stream, uint32_t source, ordo_error *err)
{
    uint64_t count = get(r);
    if (r->failed)
        return ORDO_OK;
    if (count > MAX_UNITS || count > (r->size - r->at) / 3) /* 3 bytes or more each */
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint: %llu units of source %u (at most %u, "
                           "and %zu bytes left)",
                           (unsigned long long)count, source, MAX_UNITS, r->size - r->at);
    stream->units = calloc(count ? count : 1, sizeof *stream->units);
    if (!stream->units)
        return ordo__error(err, ORDO_NOMEM, "out of memory decoding a checkpoint");
    uint64_t position = UINT64_MAX; /* -1 */
    for (uint64_t u = 0; u < count && !r->failed; u++) {
        uint64_t distance = get(r);
        ordo__unit unit = {position + distance, 0, 0};
        unit.skip = get(r);
        unit.end = get(r);
        if (r->failed)
            break;
        if ((u == 0 ? distance == 0 : distance > UINT64_MAX - position) ||
            !unit_fits(&unit, u ? &stream->units[u - 1] : NULL, stream->base))
            return ordo__error(err, ORDO_INVALID,
                               "checkpoint: unit %llu of source %u at byte "
                               "%zu is out of order, empty or not below the "
                               "base %llu",
                               (unsigned long long)u, source, r->at,
                               (unsigned long long)stream->base);
        position = unit.position;
        stream->units[u] = unit;
        stream->count = u + 1;
    }
    return ORDO_OK;
}

/* Decodes and validates a checkpoint. */
ordo_status ordo__state_decode(const void *data, size_t size, ordo__state *s, ordo_error *err)
{
    memset(s, 0, sizeof *s);
    reader r = {data, size, 0, 0};
    uint64_t version = get(&r), binding = get(&r), tag = get(&r);
    if (!r.failed && version == ALGORITHM_1_VERSION)
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint of format %d was written under data algorithm 1; this "
                           "ordo cuts batches with data algorithm %d (format %d) and cannot "
                           "resume it",
                           ALGORITHM_1_VERSION, ORDO__DATA_ALGORITHM, STATE_VERSION);
    if (!r.failed && ((version != STATE_VERSION && version != STATE_VERSION_5) || binding > 1 ||
                      tag > UINT32_MAX))
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint: unknown version %llu or binding %llu "
                           "(this ordo writes version %d)",
                           (unsigned long long)version, (unsigned long long)binding, STATE_VERSION);
    s->rank_bound = (int)binding;
    s->recipe_tag = (uint32_t)tag;
    s->step = get(&r);
    s->stride = get(&r);
    uint64_t sources = get(&r);
    if (!r.failed && (sources == 0 || sources > 4096 || s->stride == 0 || s->stride > 65536))
        return ordo__error(err, ORDO_INVALID,
                           "checkpoint: implausible shape (%llu sources, "
                           "%llu lanes)",
                           (unsigned long long)sources, (unsigned long long)s->stride);
    s->sources = (uint32_t)sources;
    s->streams = calloc(sources ? sources : 1, sizeof *s->streams);
    if (!s->streams)
        return ordo__error(err, ORDO_NOMEM, "out of memory decoding a checkpoint");
    for (uint32_t i = 0; s->rank_bound && i < s->sources && !r.failed; i++)
        s->streams[i].base = get(&r);
    s->lane_count = get(&r);
    if (!r.failed && s->lane_count > s->stride) {
        ordo__state_free(s);
        return ordo__error(err, ORDO_INVALID, "checkpoint: %llu lane records for %llu lanes",
                           (unsigned long long)s->lane_count, (unsigned long long)s->stride);
    }
    s->lanes = r.failed ? NULL : calloc(s->lane_count ? s->lane_count : 1, sizeof *s->lanes);
    ordo_status status = ORDO_OK;
    if (!r.failed && !s->lanes)
        status = ordo__error(err, ORDO_NOMEM, "out of memory decoding a checkpoint");
    if (status == ORDO_OK && !r.failed)
        status = s->rank_bound ? decode_lanes(&r, s, err)
                               : decode_positions(&r, s, version == STATE_VERSION, err);
    for (uint32_t i = 0; status == ORDO_OK && s->rank_bound && i < s->sources && !r.failed; i++)
        status = decode_units(&r, &s->streams[i], i, err);
    if (status == ORDO_OK && (r.failed || r.at != size))
        status = ordo__error(err, ORDO_INVALID, "checkpoint is %s at byte %zu of %zu",
                             r.failed ? "truncated or malformed" : "followed by extra bytes", r.at,
                             size);
    if (status != ORDO_OK)
        ordo__state_free(s);
    return status;
}

static int same_streams(const ordo__stream *a, const ordo__stream *b, uint32_t sources)
{
    for (uint32_t i = 0; i < sources; i++)
        if (a[i].base != b[i].base || a[i].count != b[i].count ||
            (a[i].count && memcmp(a[i].units, b[i].units, a[i].count * sizeof *a[i].units) != 0))
            return 0;
    return 1;
}

static int same_shape(const ordo__state *a, const ordo__state *b)
{
    return a->rank_bound == b->rank_bound && a->recipe_tag == b->recipe_tag && a->step == b->step &&
           a->stride == b->stride && a->sources == b->sources &&
           same_streams(a->streams, b->streams, a->sources);
}

static int by_lane(const void *x, const void *y)
{
    const ordo__lane_record *a = x, *b = y;
    return (a->lane > b->lane) - (a->lane < b->lane);
}

/* Joins per-rank checkpoints; see ordo.h. */
ordo_status ordo_checkpoint_merge(const unsigned char *const *states, const size_t *sizes,
                                  int count, unsigned char **merged, size_t *size, ordo_error *err)
{
    if (count < 1)
        return ordo__error(err, ORDO_INVALID, "no checkpoints to merge");
    ordo__state all = {0}, part;
    ordo_status status = ORDO_OK;
    for (int i = 0; i < count && status == ORDO_OK; i++) {
        status = ordo__state_decode(states[i], sizes[i], &part, err);
        if (status != ORDO_OK)
            break;
        if (i == 0) {
            all = part;
            continue;
        }
        if (!same_shape(&all, &part))
            status = ordo__error(err, ORDO_INVALID,
                                 "checkpoint of rank %d is of another step "
                                 "or shape",
                                 i);
        /* never realloc to 0 bytes: that frees and returns NULL */
        size_t total = (size_t)(all.lane_count + part.lane_count);
        ordo__lane_record *grown =
            status == ORDO_OK ? realloc(all.lanes, (total ? total : 1) * sizeof *grown) : NULL;
        if (status == ORDO_OK && !grown)
            status = ordo__error(err, ORDO_NOMEM, "out of memory merging checkpoints");
        if (status == ORDO_OK) {
            all.lanes = grown;
            memcpy(all.lanes + all.lane_count, part.lanes, part.lane_count * sizeof *grown);
            all.lane_count += part.lane_count;
            free(part.lanes);
            part.lanes = NULL;
            part.lane_count = 0;
        }
        ordo__state_free(&part);
    }
    if (status == ORDO_OK) {
        qsort(all.lanes, all.lane_count, sizeof *all.lanes, by_lane);
        for (uint64_t l = 1; l < all.lane_count && status == ORDO_OK; l++)
            if (all.lanes[l].lane == all.lanes[l - 1].lane)
                status = ordo__error(err, ORDO_INVALID, "lane %llu appears in two checkpoints",
                                     (unsigned long long)all.lanes[l].lane);
    }
    if (status == ORDO_OK)
        status = ordo__state_encode(&all, merged, size, err);
    ordo__state_free(&all);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Lanes and step of a checkpoint. */
ordo_status ordo_checkpoint_describe(const void *data, size_t size, int *lanes, int64_t *step,
                                     ordo_error *err)
{
    ordo__state s;
    ordo_status status = ordo__state_decode(data, size, &s, err);
    if (status != ORDO_OK)
        return status;
    if (lanes)
        *lanes = (int)s.lane_count;
    if (step)
        *step = (int64_t)s.step;
    ordo__state_free(&s);
    return ordo__ok(err);
}
