/* Parquet footers and page headers: the Thrift compact protocol, read
 * strictly. Every length is checked against the bytes left before it is
 * used, list sizes are bounded by the bytes left (every element takes at
 * least one), structs nest at most ORDO__PQ_THRIFT_DEPTH deep, and unknown
 * fields are skipped by their type. */
#include <string.h>

#include "parquet.h"

static int fail(ordo__pq_thrift *t, const char *problem)
{
    if (!t->problem)
        t->problem = problem;
    return -1;
}

static int ran_out(ordo__pq_thrift *t)
{
    t->short_input = 1;
    return fail(t, "the bytes end inside a value");
}

/* Starts reading [data, data + len). */
void ordo__pq_thrift_init(ordo__pq_thrift *t, const unsigned char *data, size_t len)
{
    *t = (ordo__pq_thrift){data, data, data + len, 0, 0, NULL};
}

static int byte(ordo__pq_thrift *t, unsigned char *out)
{
    if (t->at >= t->end)
        return ran_out(t);
    *out = *t->at++;
    return 0;
}

static int varint(ordo__pq_thrift *t, uint64_t *out)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        unsigned char b = 0;
        if (byte(t, &b) != 0)
            return -1;
        if (shift == 63 && b > 1)
            return fail(t, "a varint longer than 64 bits");
        value |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return fail(t, "a varint longer than 64 bits");
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Enters a struct; see parquet.h. */
int ordo__pq_struct_begin(ordo__pq_thrift *t)
{
    if (t->depth >= ORDO__PQ_THRIFT_DEPTH)
        return fail(t, "structs nested too deep");
    t->depth++;
    return 0;
}

/* Leaves a struct; see parquet.h. */
void ordo__pq_struct_end(ordo__pq_thrift *t)
{
    t->depth--;
}

/* The next field header; see parquet.h. */
int ordo__pq_field(ordo__pq_thrift *t, int *last, int *id, int *type)
{
    unsigned char b = 0;
    if (byte(t, &b) != 0)
        return -1;
    if (b == 0)
        return 0;
    *type = b & 0x0f;
    if (*type < ORDO__TT_TRUE || *type > ORDO__TT_STRUCT)
        return fail(t, "a field of an unknown type");
    int delta = b >> 4;
    if (delta) {
        *id = *last + delta;
    } else {
        uint64_t v = 0;
        if (varint(t, &v) != 0)
            return -1;
        int64_t full = unzigzag(v);
        if (full < -32768 || full > 32767)
            return fail(t, "a field id beyond 16 bits");
        *id = (int)full;
    }
    if (*id > 32767)
        return fail(t, "a field id beyond 16 bits");
    *last = *id;
    return 1;
}

static int expect(ordo__pq_thrift *t, int type, int want)
{
    return type == want ? 0 : fail(t, "a field of the wrong type");
}

/* An i32 (I16, I32 or BYTE accepted, as Thrift widens them); see parquet.h. */
int ordo__pq_i32(ordo__pq_thrift *t, int type, int32_t *out)
{
    if (type == ORDO__TT_BYTE) {
        unsigned char b = 0;
        if (byte(t, &b) != 0)
            return -1;
        *out = (int8_t)b;
        return 0;
    }
    if (type != ORDO__TT_I32 && type != ORDO__TT_I16)
        return fail(t, "a field of the wrong type");
    uint64_t v = 0;
    if (varint(t, &v) != 0)
        return -1;
    int64_t full = unzigzag(v);
    if (full < INT32_MIN || full > INT32_MAX)
        return fail(t, "an i32 beyond 32 bits");
    *out = (int32_t)full;
    return 0;
}

/* An i64 (or a narrower integer); see parquet.h. */
int ordo__pq_i64(ordo__pq_thrift *t, int type, int64_t *out)
{
    if (type != ORDO__TT_I64) {
        int32_t narrow = 0;
        int r = ordo__pq_i32(t, type, &narrow);
        *out = narrow;
        return r;
    }
    uint64_t v = 0;
    if (varint(t, &v) != 0)
        return -1;
    *out = unzigzag(v);
    return 0;
}

/* A bool field: its value is in the field header's type; see parquet.h. */
int ordo__pq_bool(ordo__pq_thrift *t, int type, int *out)
{
    if (type != ORDO__TT_TRUE && type != ORDO__TT_FALSE)
        return fail(t, "a field of the wrong type");
    *out = type == ORDO__TT_TRUE;
    return 0;
}

/* A binary; see parquet.h. */
int ordo__pq_binary(ordo__pq_thrift *t, int type, const unsigned char **out, size_t *len)
{
    uint64_t n = 0;
    if (expect(t, type, ORDO__TT_BINARY) != 0 || varint(t, &n) != 0)
        return -1;
    if (n > (uint64_t)(t->end - t->at))
        return ran_out(t);
    *out = t->at;
    *len = (size_t)n;
    t->at += n;
    return 0;
}

static int list_header(ordo__pq_thrift *t, int *elem, size_t *size)
{
    unsigned char b = 0;
    if (byte(t, &b) != 0)
        return -1;
    uint64_t n = b >> 4;
    if (n == 15 && varint(t, &n) != 0)
        return -1;
    *elem = b & 0x0f;
    if (*elem < ORDO__TT_TRUE || *elem > ORDO__TT_STRUCT)
        return fail(t, "a list of an unknown element type");
    if (n > (uint64_t)(t->end - t->at)) {
        t->short_input = 1; /* more bytes may hold it: page headers are read piece by piece */
        return fail(t, "a list longer than the bytes left");
    }
    *size = (size_t)n;
    return 0;
}

/* A list header; see parquet.h. */
int ordo__pq_list(ordo__pq_thrift *t, int type, int *elem, size_t *size)
{
    if (type != ORDO__TT_LIST && type != ORDO__TT_SET)
        return fail(t, "a field of the wrong type");
    return list_header(t, elem, size);
}

static int skip_struct(ordo__pq_thrift *t)
{
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    int last = 0, id = 0, type = 0, r;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1)
        if (ordo__pq_skip(t, type) != 0)
            return -1;
    ordo__pq_struct_end(t);
    return r;
}

static int skip_elements(ordo__pq_thrift *t, int elem, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (elem == ORDO__TT_TRUE || elem == ORDO__TT_FALSE) {
            unsigned char b = 0; /* in lists a bool takes a byte */
            if (byte(t, &b) != 0)
                return -1;
        } else if (ordo__pq_skip(t, elem) != 0) {
            return -1;
        }
    }
    return 0;
}

static int skip_container(ordo__pq_thrift *t, int type)
{
    if (ordo__pq_struct_begin(t) != 0) /* containers count as nesting */
        return -1;
    int r = -1;
    if (type == ORDO__TT_MAP) {
        uint64_t n = 0;
        unsigned char kinds = 0;
        if (varint(t, &n) == 0) {
            if (n > (uint64_t)(t->end - t->at))
                r = (t->short_input = 1, fail(t, "a map longer than the bytes left"));
            else if (n == 0)
                r = 0;
            else if (byte(t, &kinds) == 0)
                for (r = 0; r == 0 && n > 0; n--)
                    r = skip_elements(t, kinds >> 4, 1) != 0 ||
                                skip_elements(t, kinds & 0x0f, 1) != 0
                            ? -1
                            : 0;
        }
    } else {
        int elem = 0;
        size_t n = 0;
        r = list_header(t, &elem, &n) == 0 ? skip_elements(t, elem, n) : -1;
    }
    ordo__pq_struct_end(t);
    return r;
}

/* Skips a value by type; see parquet.h. */
int ordo__pq_skip(ordo__pq_thrift *t, int type)
{
    uint64_t v = 0;
    unsigned char b = 0;
    const unsigned char *bytes = NULL;
    size_t len = 0;
    switch (type) {
    case ORDO__TT_TRUE:
    case ORDO__TT_FALSE: return 0;
    case ORDO__TT_BYTE: return byte(t, &b);
    case ORDO__TT_I16:
    case ORDO__TT_I32:
    case ORDO__TT_I64: return varint(t, &v);
    case ORDO__TT_DOUBLE:
        if (t->end - t->at < 8)
            return ran_out(t);
        t->at += 8;
        return 0;
    case ORDO__TT_BINARY: return ordo__pq_binary(t, type, &bytes, &len);
    case ORDO__TT_LIST:
    case ORDO__TT_SET:
    case ORDO__TT_MAP: return skip_container(t, type);
    case ORDO__TT_STRUCT: return skip_struct(t);
    default: return fail(t, "a value of an unknown type");
    }
}
