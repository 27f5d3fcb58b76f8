/* Work units: chunks, or ranges of their documents, dealt to lanes. */
#include <stdlib.h>
#include <string.h>

#include "units.h"

typedef struct {
    ordo__unit_ref unit;
    uint64_t bytes;
    uint32_t index; /* in the source's unit order */
} sized_unit;

/* Pieces per chunk when the source has fewer chunks than lanes: at least
 * one each, proportional to documents otherwise (never more pieces than
 * documents), adding up to at least L. */
static void pieces_per_chunk(const ordo__source *src, const ordo_recipe *r, uint32_t *pieces)
{
    uint64_t docs = 0, lanes = (uint64_t)r->lanes, total = 0;
    for (uint32_t c = 0; c < src->chunk_count; c++) {
        ordo__chunk_ref ref = src->chunks[c];
        docs += src->shards[ref.shard].chunks[ref.chunk].records;
    }
    for (uint32_t c = 0; c < src->chunk_count; c++) {
        ordo__chunk_ref ref = src->chunks[c];
        uint64_t records = src->shards[ref.shard].chunks[ref.chunk].records;
        uint64_t p = docs ? lanes * records / docs : 1;
        pieces[c] = (uint32_t)(p < 1 ? 1 : p > records ? records : p);
        total += pieces[c];
    }
    while (total < lanes) { /* to the chunk with most documents per piece */
        uint32_t best = UINT32_MAX;
        for (uint32_t c = 0; c < src->chunk_count; c++) {
            ordo__chunk_ref ref = src->chunks[c];
            uint64_t records = src->shards[ref.shard].chunks[ref.chunk].records;
            if (pieces[c] >= records)
                continue;
            if (best == UINT32_MAX)
                best = c;
            ordo__chunk_ref bref = src->chunks[best];
            uint64_t brecords = src->shards[bref.shard].chunks[bref.chunk].records;
            if (records * pieces[best] > brecords * pieces[c])
                best = c;
        }
        if (best == UINT32_MAX)
            break; /* fewer documents than lanes: refused when indexing */
        pieces[best]++, total++;
    }
}

/* Every unit of the source, in order, with its bytes. */
static ordo_status all_units(const ordo_recipe *r, const ordo__source *src, sized_unit **out,
                             uint32_t *count, ordo_error *err)
{
    uint32_t *pieces = calloc(src->chunk_count ? src->chunk_count : 1, sizeof *pieces);
    if (!pieces)
        return ordo__error(err, ORDO_NOMEM, "out of memory dealing units");
    uint64_t total = 0;
    if (src->chunk_count < (uint32_t)r->lanes)
        pieces_per_chunk(src, r, pieces);
    else
        for (uint32_t c = 0; c < src->chunk_count; c++)
            pieces[c] = 1;
    for (uint32_t c = 0; c < src->chunk_count; c++)
        total += pieces[c];
    sized_unit *units = total <= UINT32_MAX ? calloc(total ? total : 1, sizeof *units) : NULL;
    if (!units) {
        free(pieces);
        return ordo__error(err, ORDO_NOMEM, "out of memory dealing units");
    }
    uint32_t n = 0;
    for (uint32_t c = 0; c < src->chunk_count; c++) {
        ordo__chunk_ref ref = src->chunks[c];
        const ordo__chunk *chunk = &src->shards[ref.shard].chunks[ref.chunk];
        for (uint32_t i = 0; i < pieces[c]; i++) {
            uint64_t from = (uint64_t)chunk->records * i / pieces[c];
            uint64_t to = (uint64_t)chunk->records * (i + 1) / pieces[c];
            units[n] = (sized_unit){{ref, (uint32_t)from, (uint32_t)(to - from)},
                                    chunk->raw_length * (to - from) /
                                        (chunk->records ? chunk->records : 1),
                                    n};
            n++;
        }
    }
    free(pieces);
    *out = units;
    *count = n;
    return ORDO_OK;
}

static int by_bytes(const void *x, const void *y)
{
    const sized_unit *a = x, *b = y;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1; /* largest first */
    return (a->index > b->index) - (a->index < b->index);
}

static int by_index(const void *x, const void *y)
{
    const ordo__unit_ref *a = x, *b = y;
    if (a->ref.shard != b->ref.shard)
        return a->ref.shard < b->ref.shard ? -1 : 1;
    if (a->ref.chunk != b->ref.chunk)
        return a->ref.chunk < b->ref.chunk ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

/* The lane that the unit at position q of the largest-first order goes
 * to: dealt back and forth (0 .. L-1, L-1 .. 0, ...), so lanes' unit
 * counts differ by at most one and their bytes are balanced. */
static uint32_t lane_of(uint64_t q, uint64_t lanes)
{
    uint64_t round = q / lanes, at = q % lanes;
    return (uint32_t)(round % 2 == 0 ? at : lanes - 1 - at);
}

/* Partitions a source's units among lanes; see units.h. */
ordo_status ordo__units_partition(const ordo_recipe *r, uint32_t source, uint32_t first, uint32_t n,
                                  ordo__unit_list *lists, ordo_error *err)
{
    memset(lists, 0, n * sizeof *lists);
    const ordo__source *src = &r->sources[source];
    sized_unit *units = NULL;
    uint32_t count = 0;
    ordo_status status = all_units(r, src, &units, &count, err);
    if (status != ORDO_OK)
        return status;
    qsort(units, count, sizeof *units, by_bytes);
    uint64_t lanes = (uint64_t)r->lanes;
    uint32_t *owned = calloc(n ? n : 1, sizeof *owned);
    if (!owned)
        status = ordo__error(err, ORDO_NOMEM, "out of memory dealing units");
    for (uint64_t q = 0; status == ORDO_OK && q < count; q++) {
        uint32_t lane = lane_of(q, lanes);
        if (lane >= first && lane - first < n)
            owned[lane - first]++;
    }
    for (uint32_t i = 0; status == ORDO_OK && i < n; i++) {
        if (owned[i] == 0)
            status = ordo__error(err, ORDO_INVALID,
                                 "source '%s' has %u units for %d lanes: lane %u has none",
                                 src->name, count, r->lanes, first + i);
        else if (!(lists[i].units = calloc(owned[i], sizeof *lists[i].units)))
            status = ordo__error(err, ORDO_NOMEM, "out of memory dealing units");
    }
    for (uint64_t q = 0; status == ORDO_OK && q < count; q++) {
        uint32_t lane = lane_of(q, lanes);
        if (lane >= first && lane - first < n)
            lists[lane - first].units[lists[lane - first].count++] = units[q].unit;
    }
    for (uint32_t i = 0; status == ORDO_OK && i < n; i++)
        qsort(lists[i].units, lists[i].count, sizeof *lists[i].units, by_index);
    free(owned);
    free(units);
    if (status != ORDO_OK)
        for (uint32_t i = 0; i < n; i++)
            ordo__unit_list_free(&lists[i]);
    return status;
}

void ordo__unit_list_free(ordo__unit_list *list)
{
    free(list->units);
    memset(list, 0, sizeof *list);
}
