/* Parquet values: a data page's values section in PLAIN, dictionary
 * (PLAIN_DICTIONARY, RLE_DICTIONARY), RLE (booleans) or the DELTA and
 * BYTE_STREAM_SPLIT encodings (parquet_encodings.c), appended to a column
 * reader; a dictionary page's PLAIN values. Nothing a reader holds grows
 * past its limit. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

/* The bytes a value of a fixed-width type takes; see parquet.h. */
int ordo__pq_width(int type)
{
    switch (type) {
    case ORDO__PQ_BOOLEAN: return 1;
    case ORDO__PQ_INT32:
    case ORDO__PQ_FLOAT: return 4;
    case ORDO__PQ_INT64:
    case ORDO__PQ_DOUBLE: return 8;
    default: return 0;
    }
}

static ordo_status too_many(const ordo__pq_reader *r, const char *what, ordo_error *err)
{
    return ordo__error(
        err, ORDO_INVALID,
        "%s: its values take more than the %llu bytes its column may hold (6 × the chunk limit)",
        what, (unsigned long long)r->limit);
}

/* Room for `count` more fixed-width values of `width` bytes. */
static ordo_status fixed_room(ordo__pq_reader *r, size_t count, size_t width, const char *what,
                              ordo_error *err)
{
    if (count > r->limit / (width ? width : 1) ||
        (r->fixed_count + count) * width > r->limit) /* bounded before allocating */
        return too_many(r, what, err);
    size_t need = (r->fixed_count + count) * width;
    if (need > r->fixed_cap || !r->fixed) { /* never a null buffer, even for no values */
        size_t cap = r->fixed_cap ? r->fixed_cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *grown = realloc(r->fixed, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
        r->fixed = grown;
        r->fixed_cap = cap;
    }
    return ORDO_OK;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Room for `count` more views, bounded before allocating (every value
 * takes at least a byte of its page, or an index of one). */
static ordo_status view_room(ordo__pq_reader *r, size_t count, const char *what, ordo_error *err)
{
    if (count > r->limit || r->view_count + count > r->limit)
        return too_many(r, what, err);
    if (r->view_count + count > r->view_cap) {
        size_t cap = r->view_cap ? r->view_cap : 1024;
        while (cap < r->view_count + count)
            cap *= 2;
        ordo__pq_view *grown = realloc(r->views, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
        r->views = grown;
        r->view_cap = cap;
    }
    return ORDO_OK;
}

/* One more value (room made), its bytes counted against the limit. */
static ordo_status view_add(ordo__pq_reader *r, const void *s, size_t len, const char *what,
                            ordo_error *err)
{
    if (len > r->limit - r->text_bytes)
        return too_many(r, what, err);
    r->views[r->view_count++] = (ordo__pq_view){(const char *)s, len};
    r->text_bytes += len;
    return ORDO_OK;
}

/* PLAIN byte arrays as views into the page. */
static ordo_status plain_views(ordo__pq_reader *r, const unsigned char *in, size_t len,
                               size_t count, const char *what, ordo_error *err)
{
    ordo_status status = view_room(r, count, what, err);
    size_t at = 0;
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        if (len - at < 4 || le32(in + at) > len - at - 4)
            return ordo__error(err, ORDO_INVALID, "%s: PLAIN value %zu of %zu beyond the page",
                               what, i, count);
        size_t n = le32(in + at);
        status = view_add(r, in + at + 4, n, what, err);
        at += 4 + n;
    }
    return status;
}

static ordo_status plain_bytes(ordo__pq_reader *r, ordo__pq_bytes *out, const unsigned char *in,
                               size_t len, size_t count, const char *what, ordo_error *err)
{
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        if (len - at < 4 || le32(in + at) > len - at - 4)
            return ordo__error(err, ORDO_INVALID, "%s: PLAIN value %zu of %zu beyond the page",
                               what, i, count);
        size_t n = le32(in + at);
        if (out->size + n > r->limit)
            return too_many(r, what, err);
        ordo_status status = ordo__pq_bytes_push(out, in + at + 4, n, err);
        if (status != ORDO_OK)
            return status;
        at += 4 + n;
    }
    return ORDO_OK;
}

static ordo_status plain_fixed(ordo__pq_reader *r, unsigned char *out, const unsigned char *in,
                               size_t len, size_t count, const char *what, ordo_error *err)
{
    size_t width = (size_t)ordo__pq_width(r->type);
    if (r->type == ORDO__PQ_BOOLEAN) {
        if ((count + 7) / 8 > len)
            return ordo__error(err, ORDO_INVALID, "%s: PLAIN booleans beyond the page", what);
        for (size_t i = 0; i < count; i++)
            out[i] = (in[i / 8] >> (i % 8)) & 1;
        return ORDO_OK;
    }
    if (count > len / width)
        return ordo__error(err, ORDO_INVALID, "%s: PLAIN values beyond the page", what);
    memcpy(out, in, count * width);
    return ORDO_OK;
}

static ordo_status with_context(ordo_status status, const char *what, const char *encoding,
                                ordo_error *err)
{
    if (status == ORDO_OK || status == ORDO_NOMEM)
        return status;
    char detail[ORDO_ERROR_MESSAGE_SIZE];
    snprintf(detail, sizeof detail, "%s", err->message);
    size_t named = strlen(encoding); /* the decoder's message may name it already */
    if (strncmp(detail, encoding, named) == 0 && detail[named] == ':')
        return ordo__error(err, status, "%s: %s", what, detail);
    return ordo__error(err, status, "%s: %s: %s", what, encoding, detail);
}

static ordo_status dictionary_values(ordo__pq_reader *r, const unsigned char *in, size_t len,
                                     size_t count, const char *what, ordo_error *err)
{
    if (!r->has_dict)
        return ordo__error(err, ORDO_INVALID, "%s: dictionary indices without a dictionary page",
                           what);
    if (len < 1 || in[0] > 32)
        return ordo__error(err, ORDO_INVALID, "%s: dictionary indices of a bad bit width", what);
    uint32_t *index = malloc((count ? count : 1) * sizeof *index);
    if (!index)
        return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    ordo_status status = ordo__pq_rle_hybrid(in + 1, len - 1, in[0], count, index, NULL, err);
    status = with_context(status, what, "dictionary indices", err);
    size_t width = (size_t)ordo__pq_width(r->type);
    if (status == ORDO_OK)
        status = r->type != ORDO__PQ_BYTE_ARRAY ? fixed_room(r, count, width, what, err)
                                                : view_room(r, count, what, err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        if (index[i] >= r->dict_count) {
            status = ordo__error(err, ORDO_INVALID, "%s: dictionary index %u of %zu entries", what,
                                 index[i], r->dict_count);
        } else if (r->type == ORDO__PQ_BYTE_ARRAY) {
            const ordo__pq_bytes *d = &r->dict_bytes; /* views into the dictionary */
            size_t n = d->offset[index[i] + 1] - d->offset[index[i]];
            status = view_add(r, d->data ? d->data + d->offset[index[i]] : "", n, what, err);
        } else {
            memcpy(r->fixed + (r->fixed_count + i) * width, r->dict_fixed + index[i] * width,
                   width);
        }
    }
    if (status == ORDO_OK && r->type != ORDO__PQ_BYTE_ARRAY)
        r->fixed_count += count;
    free(index);
    return status;
}

static ordo_status rle_booleans(ordo__pq_reader *r, const unsigned char *in, size_t len,
                                size_t count, const char *what, ordo_error *err)
{
    if (len < 4 || le32(in) > len - 4)
        return ordo__error(err, ORDO_INVALID, "%s: RLE booleans beyond the page", what);
    uint32_t *bits = malloc((count ? count : 1) * sizeof *bits);
    ordo_status status = bits ? fixed_room(r, count, 1, what, err)
                              : ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    if (status == ORDO_OK)
        status = with_context(ordo__pq_rle_hybrid(in + 4, le32(in), 1, count, bits, NULL, err),
                              what, "RLE", err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++)
        r->fixed[r->fixed_count + i] = (unsigned char)bits[i];
    if (status == ORDO_OK)
        r->fixed_count += count;
    free(bits);
    return status;
}

static ordo_status delta_ints(ordo__pq_reader *r, const unsigned char *in, size_t len, size_t count,
                              const char *what, ordo_error *err)
{
    size_t width = (size_t)ordo__pq_width(r->type);
    ordo_status status = fixed_room(r, count, 8, what, err); /* the int64s, then narrowed */
    int64_t *values = status == ORDO_OK ? malloc((count ? count : 1) * sizeof *values) : NULL;
    if (status == ORDO_OK && !values)
        status = ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    size_t used = 0;
    if (status == ORDO_OK)
        status = with_context(
            ordo__pq_delta_binary(in, len, count, r->type == ORDO__PQ_INT32, values, &used, err),
            what, "DELTA_BINARY_PACKED", err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        unsigned char *at = r->fixed + (r->fixed_count + i) * width;
        uint64_t v = (uint64_t)values[i];
        for (size_t b = 0; b < width; b++)
            at[b] = (unsigned char)(v >> (8 * b));
    }
    if (status == ORDO_OK)
        r->fixed_count += count;
    free(values);
    return status;
}

/* The DELTA byte arrays decode into a list of their own (within what the
 * limit leaves), which the reader keeps and the views point into. */
static ordo_status delta_bytes(ordo__pq_reader *r, int encoding, const unsigned char *in,
                               size_t len, size_t count, const char *what, ordo_error *err)
{
    size_t room = (size_t)(r->limit - r->text_bytes); /* a list limit of 0 is none */
    ordo__pq_bytes values = {.limit = room ? room : 1};
    ordo_status status = view_room(r, count, what, err);
    if (status == ORDO_OK)
        status = encoding == ORDO__PQ_DELTA_LENGTH_BYTE_ARRAY
                     ? ordo__pq_delta_length(in, len, count, &values, err)
                     : ordo__pq_delta_byte_array(in, len, count, &values, err);
    status = with_context(status, what, ordo__pq_encoding_name(encoding), err);
    for (size_t i = 0; status == ORDO_OK && i < values.count; i++)
        status = view_add(r, values.data ? values.data + values.offset[i] : "",
                          values.offset[i + 1] - values.offset[i], what, err);
    if (status == ORDO_OK && values.count != count)
        status = ordo__error(err, ORDO_INVALID, "%s: %s gave %zu values of %zu", what,
                             ordo__pq_encoding_name(encoding), values.count, count);
    free(values.offset);
    if (status != ORDO_OK || !values.data) {
        free(values.data);
        return status;
    }
    return ordo__pq_reader_own(r, values.data, err);
}

static ordo_status refused(const ordo__pq_reader *r, int encoding, const char *what,
                           ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID, "%s: encoding %s of a %s column is not read", what,
                       ordo__pq_encoding_name(encoding), ordo__pq_type_name(r->type));
}

/* Decodes a data page's values; see parquet.h. */
ordo_status ordo__pq_decode_values(ordo__pq_reader *r, int encoding, const unsigned char *in,
                                   size_t len, size_t count, const char *what, ordo_error *err)
{
    int bytes = r->type == ORDO__PQ_BYTE_ARRAY;
    size_t width = (size_t)ordo__pq_width(r->type);
    if (!bytes && width == 0)
        return refused(r, encoding, what, err);
    if (encoding == ORDO__PQ_PLAIN_DICTIONARY || encoding == ORDO__PQ_RLE_DICTIONARY)
        return dictionary_values(r, in, len, count, what, err);
    if (encoding == ORDO__PQ_PLAIN && bytes)
        return plain_views(r, in, len, count, what, err);
    if (encoding == ORDO__PQ_PLAIN) {
        ordo_status status = fixed_room(r, count, width, what, err);
        if (status == ORDO_OK)
            status = plain_fixed(r, r->fixed + r->fixed_count * width, in, len, count, what, err);
        if (status == ORDO_OK)
            r->fixed_count += count;
        return status;
    }
    if (encoding == ORDO__PQ_RLE && r->type == ORDO__PQ_BOOLEAN)
        return rle_booleans(r, in, len, count, what, err);
    if (encoding == ORDO__PQ_DELTA_BINARY_PACKED &&
        (r->type == ORDO__PQ_INT32 || r->type == ORDO__PQ_INT64))
        return delta_ints(r, in, len, count, what, err);
    if (bytes &&
        (encoding == ORDO__PQ_DELTA_LENGTH_BYTE_ARRAY || encoding == ORDO__PQ_DELTA_BYTE_ARRAY))
        return delta_bytes(r, encoding, in, len, count, what, err);
    if (encoding == ORDO__PQ_BYTE_STREAM_SPLIT && !bytes && r->type != ORDO__PQ_BOOLEAN) {
        ordo_status status = fixed_room(r, count, width, what, err);
        if (status == ORDO_OK)
            status =
                with_context(ordo__pq_byte_stream_split(in, len, count, (int)width,
                                                        r->fixed + r->fixed_count * width, err),
                             what, "BYTE_STREAM_SPLIT", err);
        if (status == ORDO_OK)
            r->fixed_count += count;
        return status;
    }
    return refused(r, encoding, what, err);
}

/* Decodes a dictionary page's values; see parquet.h. */
ordo_status ordo__pq_decode_dictionary(ordo__pq_reader *r, const unsigned char *in, size_t len,
                                       size_t count, const char *what, ordo_error *err)
{
    if (r->type == ORDO__PQ_BYTE_ARRAY) {
        ordo_status status = plain_bytes(r, &r->dict_bytes, in, len, count, what, err);
        r->dict_count = status == ORDO_OK ? count : 0;
        return status;
    }
    size_t width = (size_t)ordo__pq_width(r->type);
    if (width == 0 || r->type == ORDO__PQ_BOOLEAN)
        return refused(r, ORDO__PQ_PLAIN_DICTIONARY, what, err);
    if (count > len / width)
        return ordo__error(err, ORDO_INVALID, "%s: PLAIN values beyond the page", what);
    r->dict_fixed = malloc(count * width + 1);
    if (!r->dict_fixed)
        return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    memcpy(r->dict_fixed, in, count * width);
    r->dict_count = count;
    return ORDO_OK;
}
