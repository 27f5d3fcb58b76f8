/* A Parquet chunk's aux (docs/parquet.md, "The aux"): the plan of the
 * bytes it reads, so that a read needs no footer. Little-endian:
 *   u8 version (1), u64 limit, u64 rows, u8 span count, then per span
 *   u16 path length, path, u8 type, u8 codec, u8 max_def,
 *   u64 dict_offset, u64 dict_length, u64 data_offset, u64 data_length,
 *   u64 skip. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

#define AUX_VERSION 1
#define SPAN_FIXED (3 + 5 * 8)

static unsigned char *put(unsigned char *at, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *at++ = (unsigned char)(v >> (8 * i));
    return at;
}

static uint64_t get(const unsigned char **at, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)(*at)[i] << (8 * i);
    *at += bytes;
    return v;
}

/* Encodes a plan; see parquet.h. */
ordo_status ordo__pq_aux_encode(const ordo__pq_plan *plan, unsigned char **out, size_t *len,
                                ordo_error *err)
{
    size_t n = 1 + 8 + 8 + 1;
    if (plan->span_count > 255)
        return ordo__error(err, ORDO_INVALID, "a filter over more than 254 columns");
    for (size_t i = 0; i < plan->span_count; i++) {
        if (strlen(plan->spans[i].path) > 65535)
            return ordo__error(err, ORDO_INVALID, "a column path longer than 65535 bytes");
        n += 2 + strlen(plan->spans[i].path) + SPAN_FIXED;
    }
    unsigned char *buf = malloc(n), *at = buf;
    if (!buf)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    at = put(at, AUX_VERSION, 1);
    at = put(at, plan->limit, 8);
    at = put(at, plan->rows, 8);
    at = put(at, plan->span_count, 1);
    for (size_t i = 0; i < plan->span_count; i++) {
        const ordo__pq_span *s = &plan->spans[i];
        size_t plen = strlen(s->path);
        at = put(at, plen, 2);
        memcpy(at, s->path, plen);
        at += plen;
        at = put(at, (uint64_t)s->type, 1);
        at = put(at, (uint64_t)s->codec, 1);
        at = put(at, (uint64_t)s->max_def, 1);
        at = put(at, s->dict_offset, 8);
        at = put(at, s->dict_length, 8);
        at = put(at, s->data_offset, 8);
        at = put(at, s->data_length, 8);
        at = put(at, s->skip, 8);
    }
    *out = buf;
    *len = n;
    return ORDO_OK;
}

static ordo_status bad_aux(const char *path, uint32_t index, const char *what, ordo_error *err)
{
    return ordo__error(err, ORDO_CONFLICT,
                       "shard '%s': chunk %u's Parquet locator is corrupt (%s); index the "
                       "shard again",
                       path, index, what);
}

static int span_sane(const ordo__pq_span *s, uint64_t limit)
{
    return s->dict_length <= 4 * limit && s->data_length <= 4 * limit &&
           s->dict_offset <= UINT64_MAX - s->dict_length &&
           s->data_offset <= UINT64_MAX - s->data_length && s->max_def <= 64;
}

/* Decodes a plan; see parquet.h. */
ordo_status ordo__pq_aux_decode(const char *path, uint32_t index, const unsigned char *aux,
                                size_t len, ordo__pq_plan *plan, ordo_error *err)
{
    *plan = (ordo__pq_plan){0};
    const unsigned char *at = aux, *end = aux + len;
    if (len < 18 || aux[0] != AUX_VERSION)
        return bad_aux(path, index, "not version 1", err);
    at++;
    plan->limit = get(&at, 8);
    plan->rows = get(&at, 8);
    size_t count = (size_t)get(&at, 1);
    if (count == 0 || plan->limit > ((uint64_t)1 << 40))
        return bad_aux(path, index, "no columns, or a limit beyond reason", err);
    plan->spans = calloc(count, sizeof *plan->spans);
    if (!plan->spans)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        if (end - at < 2)
            return bad_aux(path, index, "it ends early", err);
        size_t plen = (size_t)get(&at, 2);
        if ((size_t)(end - at) < plen + SPAN_FIXED)
            return bad_aux(path, index, "it ends early", err);
        ordo__pq_span *s = &plan->spans[plan->span_count++];
        s->path = malloc(plen + 1);
        if (!s->path)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        memcpy(s->path, at, plen);
        s->path[plen] = 0;
        at += plen;
        s->type = (int)get(&at, 1);
        s->codec = (int)get(&at, 1);
        s->max_def = (int)get(&at, 1);
        s->dict_offset = get(&at, 8);
        s->dict_length = get(&at, 8);
        s->data_offset = get(&at, 8);
        s->data_length = get(&at, 8);
        s->skip = get(&at, 8);
        if (!span_sane(s, plan->limit))
            return bad_aux(path, index, "a span beyond its limit", err);
    }
    if (at != end)
        return bad_aux(path, index, "bytes after its last column", err);
    return ORDO_OK;
}

/* Frees a plan's spans; see parquet.h. */
void ordo__pq_plan_free(ordo__pq_plan *plan)
{
    for (size_t i = 0; i < plan->span_count; i++)
        free(plan->spans[i].path);
    free(plan->spans);
    *plan = (ordo__pq_plan){0};
}

/* The bytes a plan reads; see parquet.h. */
uint64_t ordo__pq_plan_length(const ordo__pq_plan *plan)
{
    uint64_t n = 0;
    for (size_t i = 0; i < plan->span_count; i++)
        n += plan->spans[i].dict_length + plan->spans[i].data_length;
    return n;
}

/* The smallest file offset a plan reads; see parquet.h. */
uint64_t ordo__pq_plan_offset(const ordo__pq_plan *plan)
{
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < plan->span_count; i++) {
        const ordo__pq_span *s = &plan->spans[i];
        if (s->dict_length && s->dict_offset < first)
            first = s->dict_offset;
        if (s->data_length && s->data_offset < first)
            first = s->data_offset;
    }
    return first == UINT64_MAX ? 0 : first;
}
