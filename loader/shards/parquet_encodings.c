/* Parquet value encodings (the format's Encodings.md): DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, and the
 * byte-array value lists they fill. Strict: every count, width and length
 * is checked against the bytes left before it is used, arithmetic on
 * values is unsigned (wrapping as the format says), and a page's values
 * must use its bytes exactly. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

/* Inputs of no bytes may be NULL: arithmetic on a null pointer, even +0,
 * is undefined, so they read from here instead. */
static const unsigned char no_bytes[1];
#define INPUT(in) ((in) ? (in) : no_bytes)

/* ---- byte-array value lists ---- */

static ordo_status bytes_reserve(ordo__pq_bytes *values, size_t extra, ordo_error *err)
{
    if (!values->offset) {
        values->offset = malloc(16 * sizeof *values->offset);
        if (!values->offset)
            return ordo__error(err, ORDO_NOMEM, "out of memory for byte-array values");
        values->offset[0] = 0;
        values->offset_cap = 16;
        values->count = values->size = 0;
    }
    if (values->count + 2 > values->offset_cap) {
        size_t cap = values->offset_cap * 2;
        size_t *grown =
            cap > SIZE_MAX / sizeof *grown ? NULL : realloc(values->offset, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory for %zu byte-array values", cap);
        values->offset = grown;
        values->offset_cap = cap;
    }
    if (extra > SIZE_MAX - values->size || (values->limit && values->size + extra > values->limit))
        return ordo__error(err, ORDO_INVALID, "byte-array values exceed %zu bytes",
                           values->limit ? values->limit : SIZE_MAX);
    size_t need = values->size + extra;
    if (need > values->cap) {
        size_t cap = values->cap ? values->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *grown = realloc(values->data, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory for %zu bytes of values", cap);
        values->data = grown;
        values->cap = cap;
    }
    return ORDO_OK;
}

/* Appends one value of `len` bytes (copied; `bytes` may be NULL when len
 * is 0, and may not point into values->data). The list is the caller's,
 * freed with ordo__pq_bytes_free; a {0} list is an empty one. */
ordo_status ordo__pq_bytes_push(ordo__pq_bytes *values, const void *bytes, size_t len,
                                ordo_error *err)
{
    ordo_status status = bytes_reserve(values, len, err);
    if (status != ORDO_OK)
        return status;
    if (len)
        memcpy(values->data + values->size, bytes, len);
    values->size += len;
    values->offset[++values->count] = values->size;
    return ORDO_OK;
}

/* Frees a list's buffers and empties it (its limit stays); NULL is fine. */
void ordo__pq_bytes_free(ordo__pq_bytes *values)
{
    if (!values)
        return;
    size_t limit = values->limit;
    free(values->data);
    free(values->offset);
    *values = (ordo__pq_bytes){.limit = limit};
}

/* ---- DELTA_BINARY_PACKED ---- */

/* Reads an unsigned LEB128 of at most 64 bits; 0, or -1 truncated, -2 too
 * long for 64 bits. */
static int uleb128(const unsigned char **at, const unsigned char *end, uint64_t *out)
{
    uint64_t value = 0;
    for (unsigned shift = 0; *at < end; shift += 7) {
        unsigned byte = *(*at)++;
        if (shift == 63 && (byte & 0x7e))
            return -2;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            return 0;
        }
        if (shift == 63)
            return -2;
    }
    return -1;
}

static uint64_t unzigzag(uint64_t v)
{
    return (v >> 1) ^ (0 - (v & 1));
}

static int64_t as_signed(uint64_t v)
{
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

/* A DELTA_BINARY_PACKED run being read: header, then blocks of a min
 * delta, one bit width per miniblock and the miniblocks. */
typedef struct delta_run {
    const unsigned char *start, *at, *end; /* at: past the current miniblock */
    uint64_t left;                         /* values not given yet */
    uint64_t per_mini, minis;              /* values per miniblock, miniblocks per block */
    uint64_t value, min_delta;             /* the last value given; the block's min delta */
    const unsigned char *widths, *bits;    /* the block's bit widths; the miniblock's bytes */
    uint64_t mini, taken;                  /* miniblock index in the block; values taken of it */
    size_t bytes;                          /* the miniblock's byte length */
    unsigned width;
    int int32, first_pending;
} delta_run;

static ordo_status delta_uleb(delta_run *run, const char *what, uint64_t *out, ordo_error *err)
{
    size_t at = (size_t)(run->at - run->start);
    int rc = uleb128(&run->at, run->end, out);
    if (rc == -1)
        return ordo__error(err, ORDO_INVALID, "DELTA_BINARY_PACKED: %s at byte %zu is cut short",
                           what, at);
    if (rc == -2)
        return ordo__error(err, ORDO_INVALID,
                           "DELTA_BINARY_PACKED: %s at byte %zu is longer than 64 bits", what, at);
    return ORDO_OK;
}

/* Reads the header and checks it against `count` values. */
static ordo_status delta_open(delta_run *run, const unsigned char *in, size_t len, size_t count,
                              int int32, ordo_error *err)
{
    *run = (delta_run){.start = in, .at = in, .end = in + len, .int32 = int32};
    uint64_t block, total, first;
    ordo_status status;
    if ((status = delta_uleb(run, "block size", &block, err)) != ORDO_OK ||
        (status = delta_uleb(run, "miniblock count", &run->minis, err)) != ORDO_OK ||
        (status = delta_uleb(run, "value count", &total, err)) != ORDO_OK ||
        (status = delta_uleb(run, "first value", &first, err)) != ORDO_OK)
        return status;
    if (block == 0 || block % 128 || run->minis == 0 || block % run->minis ||
        (block / run->minis) % 32)
        return ordo__error(err, ORDO_INVALID,
                           "DELTA_BINARY_PACKED: block size %llu with %llu miniblocks (a block "
                           "holds a multiple of 128 values, a miniblock a multiple of 32)",
                           (unsigned long long)block, (unsigned long long)run->minis);
    if (total != count)
        return ordo__error(err, ORDO_INVALID,
                           "DELTA_BINARY_PACKED: the header holds %llu values, the page %zu",
                           (unsigned long long)total, count);
    run->per_mini = block / run->minis;
    run->left = total;
    run->value = unzigzag(first);
    run->first_pending = total > 0;
    run->mini = run->minis;     /* the first delta starts a block */
    run->taken = run->per_mini; /* ... and a miniblock */
    return ORDO_OK;
}

/* Moves to the next miniblock (and block), checking its bytes are there. */
static ordo_status delta_next_mini(delta_run *run, ordo_error *err)
{
    ordo_status status;
    if (run->mini == run->minis) {
        uint64_t zigzag;
        if ((status = delta_uleb(run, "min delta", &zigzag, err)) != ORDO_OK)
            return status;
        run->min_delta = unzigzag(zigzag);
        if (run->minis > (uint64_t)(run->end - run->at))
            return ordo__error(err, ORDO_INVALID,
                               "DELTA_BINARY_PACKED: %llu bit widths at byte %zu, %zu bytes left",
                               (unsigned long long)run->minis, (size_t)(run->at - run->start),
                               (size_t)(run->end - run->at));
        run->widths = run->at;
        run->at += run->minis;
        run->mini = 0;
    }
    unsigned width = run->widths[run->mini];
    size_t left = (size_t)(run->end - run->at);
    if (width > 64)
        return ordo__error(err, ORDO_INVALID,
                           "DELTA_BINARY_PACKED: bit width %u at byte %zu is over 64", width,
                           (size_t)(run->widths + run->mini - run->start));
    if (width && run->per_mini / 8 > left / width)
        return ordo__error(err, ORDO_INVALID,
                           "DELTA_BINARY_PACKED: a miniblock of %llu values of %u bits at byte "
                           "%zu, %zu bytes left",
                           (unsigned long long)run->per_mini, width, (size_t)(run->at - run->start),
                           left);
    run->width = width;
    run->bytes = (size_t)(run->per_mini / 8) * width;
    run->bits = run->at;
    run->at += run->bytes;
    run->mini++;
    run->taken = 0;
    return ORDO_OK;
}

static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Value `index` of `width` bits of a miniblock of `bytes` bytes. */
static uint64_t unpack(const unsigned char *bits, size_t bytes, uint64_t index, unsigned width)
{
    if (width == 0)
        return 0;
    uint64_t bit = index * width;
    size_t byte = (size_t)(bit >> 3);
    unsigned shift = (unsigned)(bit & 7);
    if (width <= 56 && byte + 8 <= bytes)
        return (load_le64(bits + byte) >> shift) & ((UINT64_C(1) << width) - 1);
    uint64_t v = 0;
    for (unsigned got = 0; got < width; got += 8 - shift, shift = 0, byte++)
        v |= (uint64_t)(bits[byte] >> shift) << got;
    return width == 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

static uint64_t wrap(const delta_run *run, uint64_t v)
{
    return run->int32 ? ((v & 0xffffffffu) ^ 0x80000000u) - 0x80000000u : v;
}

/* Gives the next n values (n <= run->left) into out, or only walks over
 * them when out is NULL (to find where the run ends). */
static ordo_status delta_take(delta_run *run, int64_t *out, size_t n, ordo_error *err)
{
    size_t i = 0;
    if (n && run->first_pending) {
        run->value = wrap(run, run->value);
        if (out)
            out[i] = as_signed(run->value);
        run->first_pending = 0;
        run->left--;
        i++;
    }
    while (i < n) {
        if (run->taken == run->per_mini) {
            ordo_status status = delta_next_mini(run, err);
            if (status != ORDO_OK)
                return status;
        }
        uint64_t k = run->per_mini - run->taken;
        if (k > n - i)
            k = n - i;
        if (out)
            for (uint64_t j = 0; j < k; j++) {
                uint64_t packed = unpack(run->bits, run->bytes, run->taken + j, run->width);
                run->value = wrap(run, run->value + run->min_delta + packed);
                out[i + j] = as_signed(run->value);
            }
        run->taken += k;
        run->left -= k;
        i += (size_t)k;
    }
    return ORDO_OK;
}

/* Where a run of `count` values starting at `in` ends (checking it all). */
static ordo_status delta_end(const unsigned char *in, size_t len, size_t count, size_t *used,
                             ordo_error *err)
{
    delta_run run;
    if (count == 0 && len == 0) {
        *used = 0;
        return ORDO_OK;
    }
    ordo_status status = delta_open(&run, in, len, count, 1, err);
    if (status == ORDO_OK)
        status = delta_take(&run, NULL, count, err);
    if (status == ORDO_OK)
        *used = (size_t)(run.at - in);
    return status;
}

/* DELTA_BINARY_PACKED: see parquet.h. The header must hold `count`
 * values. out holds count values (the caller's). */
ordo_status ordo__pq_delta_binary(const unsigned char *in, size_t len, size_t count, int int32,
                                  int64_t *out, size_t *used, ordo_error *err)
{
    delta_run run;
    in = INPUT(in);
    if (count == 0 && len == 0) { /* a page of nulls may hold no run at all */
        if (used)
            *used = 0;
        return ORDO_OK;
    }
    ordo_status status = delta_open(&run, in, len, count, int32, err);
    if (status == ORDO_OK)
        status = delta_take(&run, out, count, err);
    if (status == ORDO_OK && used)
        *used = (size_t)(run.at - in);
    return status;
}

/* ---- DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY ---- */

#define DELTA_BATCH 256

/* The lengths of a DELTA_LENGTH_BYTE_ARRAY run and where its bytes start. */
typedef struct length_run {
    delta_run lengths;
    const unsigned char *data, *end;
    int64_t batch[DELTA_BATCH];
    size_t have, next;
} length_run;

/* Names the byte-array encoding and which lengths before a DELTA_BINARY_PACKED
 * error's message. */
static ordo_status in_lengths(ordo_status status, const char *encoding, const char *what,
                              ordo_error *err)
{
    if (status != ORDO_OK && err) {
        char inner[sizeof err->message];
        memcpy(inner, err->message, sizeof inner);
        ordo__error(err, status, "%s: %s: %s", encoding, what, inner);
    }
    return status;
}

static ordo_status length_open(length_run *run, const unsigned char *in, size_t len, size_t count,
                               ordo_error *err)
{
    size_t used = 0;
    ordo_status status = delta_end(in, len, count, &used, err);
    run->lengths = (delta_run){0};
    if (status == ORDO_OK && used) /* used is 0 only for no values in no bytes */
        status = delta_open(&run->lengths, in, len, count, 1, err);
    run->data = in + used;
    run->end = in + len;
    run->have = run->next = 0;
    return status;
}

/* The next length (value `index`, for messages), checked to be >= 0. */
static ordo_status length_next(length_run *run, const char *encoding, const char *what,
                               size_t index, size_t *out, ordo_error *err)
{
    if (run->next == run->have) {
        size_t n = run->lengths.left < DELTA_BATCH ? (size_t)run->lengths.left : DELTA_BATCH;
        ordo_status status = delta_take(&run->lengths, run->batch, n, err);
        if (status != ORDO_OK)
            return in_lengths(status, encoding, what, err);
        run->have = n;
        run->next = 0;
    }
    int64_t length = run->batch[run->next++];
    if (length < 0)
        return ordo__error(err, ORDO_INVALID, "%s: value %zu has %s %lld", encoding, index, what,
                           (long long)length);
    *out = (size_t)length;
    return ORDO_OK;
}

/* The next `len` bytes of the run's data. */
static ordo_status length_bytes(length_run *run, const char *encoding, size_t index, size_t len,
                                const unsigned char **out, ordo_error *err)
{
    if (len > (size_t)(run->end - run->data))
        return ordo__error(err, ORDO_INVALID, "%s: value %zu of %zu bytes, %zu bytes left",
                           encoding, index, len, (size_t)(run->end - run->data));
    *out = run->data;
    run->data += len;
    return ORDO_OK;
}

static ordo_status length_close(const length_run *run, const char *encoding, ordo_error *err)
{
    if (run->data != run->end)
        return ordo__error(err, ORDO_INVALID, "%s: %zu bytes past the last value", encoding,
                           (size_t)(run->end - run->data));
    return ORDO_OK;
}

/* DELTA_LENGTH_BYTE_ARRAY: see parquet.h (the lengths, then the bytes,
 * which must end where `in + len` does). Afterwards out->offset holds
 * out->count + 1 entries, also when there were no values. */
ordo_status ordo__pq_delta_length(const unsigned char *in, size_t len, size_t count,
                                  ordo__pq_bytes *out, ordo_error *err)
{
    static const char name[] = "DELTA_LENGTH_BYTE_ARRAY";
    in = INPUT(in);
    length_run *run = malloc(sizeof *run);
    if (!run)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status status = bytes_reserve(out, 0, err); /* offset[0] is there even for no values */
    if (status == ORDO_OK)
        status = in_lengths(length_open(run, in, len, count, err), name, "lengths", err);
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        size_t n = 0;
        const unsigned char *bytes = NULL;
        if ((status = length_next(run, name, "length", i, &n, err)) == ORDO_OK &&
            (status = length_bytes(run, name, i, n, &bytes, err)) == ORDO_OK)
            status = ordo__pq_bytes_push(out, bytes, n, err);
    }
    if (status == ORDO_OK)
        status = length_close(run, name, err);
    free(run);
    return status;
}

/* Appends a value made of the previous value's first `prefix` bytes (at
 * `previous` in out->data) and a suffix. */
static ordo_status push_prefixed(ordo__pq_bytes *out, size_t previous, size_t prefix,
                                 const unsigned char *suffix, size_t len, ordo_error *err)
{
    ordo_status status = bytes_reserve(out, prefix + len, err); /* both <= the page's size */
    if (status != ORDO_OK)
        return status;
    if (prefix)
        memcpy(out->data + out->size, out->data + previous, prefix);
    if (len)
        memcpy(out->data + out->size + prefix, suffix, len);
    out->size += prefix + len;
    out->offset[++out->count] = out->size;
    return ORDO_OK;
}

/* DELTA_BYTE_ARRAY: see parquet.h (prefix lengths, then the suffixes as
 * DELTA_LENGTH_BYTE_ARRAY; the first value's prefix is empty). out->offset
 * is there afterwards as for DELTA_LENGTH_BYTE_ARRAY. */
ordo_status ordo__pq_delta_byte_array(const unsigned char *in, size_t len, size_t count,
                                      ordo__pq_bytes *out, ordo_error *err)
{
    static const char name[] = "DELTA_BYTE_ARRAY";
    in = INPUT(in);
    length_run *prefixes = malloc(sizeof *prefixes), *suffixes = malloc(sizeof *suffixes);
    ordo_status status = ORDO_OK;
    if (!prefixes || !suffixes)
        status = ordo__error(err, ORDO_NOMEM, "out of memory");
    if (status == ORDO_OK)
        status = bytes_reserve(out, 0, err); /* offset[0] is there even for no values */
    if (status == ORDO_OK)
        status =
            in_lengths(length_open(prefixes, in, len, count, err), name, "prefix lengths", err);
    if (status == ORDO_OK) {
        size_t at = (size_t)(prefixes->data - in);
        status = in_lengths(length_open(suffixes, in + at, len - at, count, err), name,
                            "suffix lengths", err);
    }
    size_t previous = 0, previous_len = 0;
    for (size_t i = 0; status == ORDO_OK && i < count; i++) {
        size_t prefix = 0, n = 0;
        const unsigned char *suffix = NULL;
        if ((status = length_next(prefixes, name, "prefix length", i, &prefix, err)) != ORDO_OK ||
            (status = length_next(suffixes, name, "suffix length", i, &n, err)) != ORDO_OK ||
            (status = length_bytes(suffixes, name, i, n, &suffix, err)) != ORDO_OK)
            break;
        if (prefix > previous_len) {
            status = ordo__error(err, ORDO_INVALID,
                                 "%s: value %zu has a prefix of %zu bytes, the value before it "
                                 "%zu bytes",
                                 name, i, prefix, previous_len);
            break;
        }
        size_t start = out->size;
        status = push_prefixed(out, previous, prefix, suffix, n, err);
        previous = start;
        previous_len = prefix + n;
    }
    if (status == ORDO_OK)
        status = length_close(suffixes, name, err);
    free(prefixes);
    free(suffixes);
    return status;
}

/* ---- BYTE_STREAM_SPLIT ---- */

/* BYTE_STREAM_SPLIT: see parquet.h; `in` holds exactly count * width
 * bytes (stream k: byte k of every value). */
ordo_status ordo__pq_byte_stream_split(const unsigned char *in, size_t len, size_t count, int width,
                                       unsigned char *out, ordo_error *err)
{
    in = INPUT(in);
    if (width != 4 && width != 8)
        return ordo__error(err, ORDO_INVALID,
                           "BYTE_STREAM_SPLIT: values of %d bytes (4 or 8 are read)", width);
    size_t w = (size_t)width;
    if (count > len / w || count * w != len)
        return ordo__error(err, ORDO_INVALID,
                           "BYTE_STREAM_SPLIT: %zu bytes for %zu values of %zu bytes", len, count,
                           w);
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < w; k++)
            out[i * w + k] = in[k * count + i];
    return ORDO_OK;
}
