/* Parquet value decoders: the format's own examples, real pages the Rust
 * parquet writer wrote (tests/parquet_vectors.h), and hostile bytes —
 * each a clear error, never a read outside the input (ASan builds). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "parquet_vectors.h"
#include "testing.h"

#define BYTES(...)                                                                                 \
    ((const unsigned char[]){__VA_ARGS__}), sizeof((const unsigned char[]){__VA_ARGS__})

/* A small DELTA_BINARY_PACKED encoder, written from the format's text
 * alone (blocks of 128 values in 4 miniblocks of 32, bit by bit). */
static size_t put_uleb(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        p[n++] = (unsigned char)(b | (v ? 0x80 : 0));
    } while (v);
    return n;
}

static uint64_t zigzag(uint64_t v)
{
    return (v << 1) ^ (v >> 63 ? UINT64_MAX : 0);
}

static size_t put_delta(unsigned char *p, const int64_t *values, size_t n)
{
    size_t at = put_uleb(p, 128);
    at += put_uleb(p + at, 4);
    at += put_uleb(p + at, n);
    at += put_uleb(p + at, n ? zigzag((uint64_t)values[0]) : 0);
    for (size_t i = 1; i < n; i += 128) {
        size_t k = n - i < 128 ? n - i : 128;
        uint64_t delta[128], min = 0;
        for (size_t j = 0; j < k; j++) {
            delta[j] = (uint64_t)values[i + j] - (uint64_t)values[i + j - 1];
            if (j == 0 || (int64_t)delta[j] < (int64_t)min)
                min = delta[j];
        }
        at += put_uleb(p + at, zigzag(min));
        unsigned char *widths = p + at;
        at += 4;
        for (size_t m = 0; m < 4; m++) {
            widths[m] = 0;
            if (m * 32 >= k)
                continue;
            uint64_t most = 0;
            for (size_t j = m * 32; j < k && j < m * 32 + 32; j++)
                most |= delta[j] - min;
            while (widths[m] < 64 && most >> widths[m])
                widths[m]++;
            size_t bytes = 32 * (size_t)widths[m] / 8;
            memset(p + at, 0, bytes);
            for (size_t j = m * 32; j < k && j < m * 32 + 32; j++)
                for (unsigned b = 0; b < widths[m]; b++)
                    if ((delta[j] - min) >> b & 1) {
                        size_t bit = (j - m * 32) * widths[m] + b;
                        p[at + bit / 8] |= (unsigned char)(1u << (bit % 8));
                    }
            at += bytes;
        }
    }
    return at;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Decodes `in` with the vector's encoding; 0 when it matches, else fails. */
static ordo_status decode(const pq_vector *v, const unsigned char *in, size_t len, size_t *used,
                          ordo_error *err)
{
    ordo_status status;
    if (!strcmp(v->encoding, "DELTA_BINARY_PACKED")) {
        int64_t *out = calloc(v->count + 1, sizeof *out);
        status = ordo__pq_delta_binary(in, len, v->count, v->int32, out, used, err);
        if (status == ORDO_OK && v->ints)
            for (size_t i = 0; i < v->count; i++)
                if (out[i] != v->ints[i])
                    test_fail(__FILE__, __LINE__, "%s: value %zu is %lld, not %lld", v->name, i,
                              (long long)out[i], (long long)v->ints[i]);
        free(out);
    } else if (!strcmp(v->encoding, "BYTE_STREAM_SPLIT")) {
        unsigned char *out = malloc(v->count * (size_t)v->width + 1);
        status = ordo__pq_byte_stream_split(in, len, v->count, v->width, out, err);
        if (status == ORDO_OK && v->raw && memcmp(out, v->raw, v->count * (size_t)v->width))
            test_fail(__FILE__, __LINE__, "%s: values differ", v->name);
        free(out);
    } else {
        ordo__pq_bytes out = {0};
        status = !strcmp(v->encoding, "DELTA_BYTE_ARRAY")
                     ? ordo__pq_delta_byte_array(in, len, v->count, &out, err)
                     : ordo__pq_delta_length(in, len, v->count, &out, err);
        if (status == ORDO_OK && v->blob) {
            ASSERT_EQ_INT(out.count, v->count);
            size_t at = 0;
            for (size_t i = 0; i < v->count; i++) {
                size_t n = out.offset[i + 1] - out.offset[i];
                if (n != v->lens[i] || memcmp(out.data + out.offset[i], v->blob + at, n))
                    test_fail(__FILE__, __LINE__, "%s: value %zu differs", v->name, i);
                at += n;
            }
        }
        ordo__pq_bytes_free(&out);
    }
    return status;
}

/* The format's DELTA_BINARY_PACKED example 7, 5, 3, 1, 2, 3, 4, 5 (deltas
 * -2 -2 -2 1 1 1 1: min delta -2, one miniblock of 2-bit values; the
 * example's block of 8 values made the smallest legal one, 128 in 4
 * miniblocks of 32). */
static const unsigned char example[] = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 0x02, 0x00, 0x00,
                                        0x00, 0xc0, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

TEST(parquet_delta_binary_decodes_the_format_example)
{
    ordo_error err;
    int64_t out[8];
    size_t used = 0;
    ASSERT_OK(ordo__pq_delta_binary(example, sizeof example, 8, 0, out, &used, &err), &err);
    const int64_t want[8] = {7, 5, 3, 1, 2, 3, 4, 5};
    for (int i = 0; i < 8; i++)
        ASSERT_EQ_INT(out[i], want[i]);
    ASSERT_EQ_INT(used, sizeof example);
    /* bytes after the run are the caller's: used says where it ends */
    unsigned char longer[sizeof example + 3];
    memcpy(longer, example, sizeof example);
    memset(longer + sizeof example, 0xee, 3);
    ASSERT_OK(ordo__pq_delta_binary(longer, sizeof longer, 8, 1, out, &used, &err), &err);
    ASSERT_EQ_INT(used, sizeof example);
    /* 1, 2, 3, 4, 5: deltas of 1, bit width 0, no miniblock bytes */
    const unsigned char ones[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x07, 0x07, 0x07};
    ASSERT_OK(ordo__pq_delta_binary(ones, sizeof ones, 5, 0, out, &used, &err), &err);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ_INT(out[i], i + 1);
    ASSERT_EQ_INT(used, sizeof ones); /* unused miniblocks' widths (7) are read over */
}

/* The format's examples of the byte-array encodings: "Hello", "World",
 * "Foobar", "ABCDEF" (lengths 5 5 6 6) and "axis", "axle", "babble",
 * "babyhood" (prefixes 0 2 0 3, suffixes "axis" "le" "babble" "yhood"). */
TEST(parquet_delta_byte_arrays_decode_the_format_examples)
{
    ordo_error err;
    const unsigned char length[] = {0x80, 0x01, 0x04, 0x04, 0x0a, 0x00, 0x01, 0x00, 0x00,
                                    0x00, 0x02, 0x00, 0x00, 0x00, 'H',  'e',  'l',  'l',
                                    'o',  'W',  'o',  'r',  'l',  'd',  'F',  'o',  'o',
                                    'b',  'a',  'r',  'A',  'B',  'C',  'D',  'E',  'F'};
    ordo__pq_bytes out = {0};
    ASSERT_OK(ordo__pq_delta_length(length, sizeof length, 4, &out, &err), &err);
    ASSERT_EQ_INT(out.count, 4);
    ASSERT_EQ_INT(out.size, 22);
    ASSERT(!memcmp(out.data, "HelloWorldFoobarABCDEF", 22));
    ASSERT_EQ_INT(out.offset[1], 5);
    ASSERT_EQ_INT(out.offset[3], 16);
    ordo__pq_bytes_free(&out);

    unsigned char dba[128];
    size_t n = 0;
    const unsigned char prefixes[] = {0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 0x03, 0x00,
                                      0x00, 0x00, 0x44, 0x01, 0,    0,    0,    0,
                                      0,    0,    0,    0,    0,    0};
    const unsigned char suffixes[] = {0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 0x03, 0x00,
                                      0x00, 0x00, 0x70, 0x00, 0,    0,    0,    0,
                                      0,    0,    0,    0,    0,    0};
    memcpy(dba + n, prefixes, sizeof prefixes), n += sizeof prefixes;
    memcpy(dba + n, suffixes, sizeof suffixes), n += sizeof suffixes;
    memcpy(dba + n, "axislebabbleyhood", 17), n += 17;
    ASSERT_OK(ordo__pq_delta_byte_array(dba, n, 4, &out, &err), &err);
    ASSERT_EQ_INT(out.count, 4);
    ASSERT(!memcmp(out.data, "axisaxlebabblebabyhood", 22));
    ASSERT_EQ_INT(out.offset[2], 8);
    /* appended after what the list already holds: the first value's
     * prefix is still empty, not the list's last value */
    ASSERT_OK(ordo__pq_delta_byte_array(dba, n, 4, &out, &err), &err);
    ASSERT_EQ_INT(out.count, 8);
    ASSERT(!memcmp(out.data + 22, "axisaxlebabblebabyhood", 22));
    ordo__pq_bytes_free(&out);
    ordo__pq_bytes_free(NULL);
}

/* Every page of the real writer's files decodes to the values written,
 * using exactly the page's bytes. */
TEST(parquet_encodings_decode_the_writers_pages)
{
    ordo_error err;
    size_t count = sizeof pq_vectors / sizeof pq_vectors[0];
    ASSERT(count >= 8);
    for (size_t i = 0; i < count; i++) {
        const pq_vector *v = &pq_vectors[i];
        size_t used = 0;
        ordo_status status = decode(v, v->in, v->len, &used, &err);
        if (status != ORDO_OK)
            test_fail(__FILE__, __LINE__, "%s: %s", v->name, err.message);
        if (!strcmp(v->encoding, "DELTA_BINARY_PACKED"))
            ASSERT_EQ_INT(used, v->len);
    }
}

/* Every page cut short, and every page with one byte changed, is an error
 * or (a changed value byte) other values: never a read past the input. */
TEST(parquet_encodings_refuse_every_cut_page)
{
    ordo_error err;
    size_t count = sizeof pq_vectors / sizeof pq_vectors[0];
    for (size_t i = 0; i < count; i++) {
        const pq_vector *v = &pq_vectors[i];
        size_t step = v->len > 600 ? v->len / 300 : 1;
        for (size_t cut = 0; cut < v->len; cut += step) {
            unsigned char *copy = malloc(cut + 1); /* exactly cut bytes are readable */
            memcpy(copy, v->in, cut);
            size_t used = 0;
            pq_vector unchecked = *v;
            unchecked.ints = NULL, unchecked.blob = NULL, unchecked.raw = NULL;
            ordo_status status = decode(&unchecked, copy, cut, &used, &err);
            if (status == ORDO_OK)
                test_fail(__FILE__, __LINE__, "%s cut to %zu of %zu bytes was read", v->name, cut,
                          v->len);
            ASSERT_CONTAINS(err.message, v->encoding);
            free(copy);
        }
        for (size_t at = 0; at < v->len; at += step) {
            unsigned char *copy = malloc(v->len);
            memcpy(copy, v->in, v->len);
            copy[at] ^= 0x5a;
            size_t used = 0;
            pq_vector unchecked = *v;
            unchecked.ints = NULL, unchecked.blob = NULL, unchecked.raw = NULL;
            decode(&unchecked, copy, v->len, &used, &err);
            ASSERT(used <= v->len);
            free(copy);
        }
    }
}

TEST(parquet_delta_binary_refuses_bad_headers)
{
    ordo_error err;
    int64_t out[8];
    size_t used;
    /* the format example's block of 8 values: not a multiple of 128 */
    ASSERT_STATUS(
        ordo__pq_delta_binary(BYTES(0x08, 0x01, 0x05, 0x02, 0x02, 0x00), 5, 0, out, &used, &err),
        ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "block size 8 with 1 miniblocks");
    /* 128 values in 3 miniblocks; in 8 (16 values each) */
    ASSERT_STATUS(
        ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x03, 0x01, 0x00), 1, 0, out, &used, &err),
        ORDO_INVALID, &err);
    ASSERT_STATUS(
        ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x08, 0x01, 0x00), 1, 0, out, &used, &err),
        ORDO_INVALID, &err);
    ASSERT_STATUS(
        ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x00, 0x01, 0x00), 1, 0, out, &used, &err),
        ORDO_INVALID, &err);
    /* a huge value count against the page's 3 */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00),
                                        3, 0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "the header holds 4294967295 values, the page 3");
    /* a varint longer than 64 bits, and one of 10 bytes over 64 bits */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
                                              0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
                                        1, 0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "first value at byte 4 is longer than 64 bits");
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
                                              0xff, 0xff, 0xff, 0xff, 0x02),
                                        1, 0, out, &used, &err),
                  ORDO_INVALID, &err);
    /* ... while the largest one is read: zigzag 2^64 - 1 is INT64_MIN */
    ASSERT_OK(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x01),
                                    1, 0, out, &used, &err),
              &err);
    ASSERT(out[0] == INT64_MIN);
    ASSERT_EQ_INT(used, 14);
    /* cut inside the header */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x81), 1, 0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "value count at byte 3 is cut short");
    /* no values in no bytes (a page of nulls) */
    ASSERT_OK(ordo__pq_delta_binary(NULL, 0, 0, 0, out, &used, &err), &err);
    ASSERT_EQ_INT(used, 0);
}

TEST(parquet_delta_binary_refuses_bad_blocks)
{
    ordo_error err;
    int64_t out[8];
    size_t used;
    /* a bit width over 64 */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 65, 0, 0, 0), 2,
                                        0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "bit width 65 at byte 6 is over 64");
    /* a miniblock of 32 values of 2 bits needs 8 bytes: 7 are there */
    ASSERT_STATUS(ordo__pq_delta_binary(
                      BYTES(0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7), 2,
                      0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a miniblock of 32 values of 2 bits at byte 10, 7 bytes left");
    /* the bit widths cut short */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 0, 0), 2, 0, out,
                                        &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "4 bit widths at byte 6, 2 bytes left");
    /* a block of 2^40 values in 4 miniblocks of 1 bit: never allocated,
     * refused for its size */
    ASSERT_STATUS(ordo__pq_delta_binary(BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x04, 0x02, 0x00,
                                              0x00, 1, 0, 0, 0, 0xff),
                                        2, 0, out, &used, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a miniblock of 274877906944 values of 1 bits");
    /* the same with width 0 holds 2^40 deltas in no bytes: read */
    ASSERT_OK(ordo__pq_delta_binary(
                  BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x04, 0x03, 0x00, 0x02, 0, 0, 0, 0), 3,
                  0, out, &used, &err),
              &err);
    ASSERT_EQ_INT(out[2], 2);
}

/* INT32 values wrap as 32-bit arithmetic does, whatever width the writer
 * gave the deltas (33 bits when it subtracted in 64 bits). */
TEST(parquet_delta_binary_wraps_int32)
{
    ordo_error err;
    int64_t out[3];
    size_t used;
    /* first INT32_MAX (zigzag 2^32 - 2), then +1 (min delta 1, width 0):
     * INT32_MIN as INT32, 2^31 as INT64 */
    const unsigned char up[] = {0x80, 0x01, 0x04, 0x02, 0xfe, 0xff, 0xff,
                                0xff, 0x0f, 0x02, 0x00, 0,    0,    0};
    ASSERT_OK(ordo__pq_delta_binary(up, sizeof up, 2, 1, out, &used, &err), &err);
    ASSERT_EQ_INT(out[0], INT32_MAX);
    ASSERT_EQ_INT(out[1], INT32_MIN);
    ASSERT_OK(ordo__pq_delta_binary(up, sizeof up, 2, 0, out, &used, &err), &err);
    ASSERT_EQ_INT(out[1], (int64_t)INT32_MAX + 1);
    /* INT32_MIN, INT32_MAX, INT32_MIN with deltas in 64 bits: min delta
     * -(2^32 - 1) (zigzag 2^33 - 3), deltas 2^33 - 2 and 0 over it: 33 bits */
    unsigned char wide[160] = {0x80, 0x01, 0x04, 0x03, 0xff, 0xff, 0xff, 0xff, 0x0f,
                               0xfd, 0xff, 0xff, 0xff, 0x1f, 33,   0,    0,    0};
    /* 32 values of 33 bits: value 0 = 2^33 - 2, value 1 = 0 */
    unsigned char *bits = wide + 18;
    memset(bits, 0, 32 * 33 / 8);
    uint64_t v0 = (UINT64_C(1) << 33) - 2;
    for (int b = 0; b < 33; b++)
        if (v0 >> b & 1)
            bits[b / 8] |= (unsigned char)(1u << (b % 8));
    ASSERT_OK(ordo__pq_delta_binary(wide, 18 + 32 * 33 / 8, 3, 1, out, &used, &err), &err);
    ASSERT_EQ_INT(out[0], INT32_MIN);
    ASSERT_EQ_INT(out[1], INT32_MAX);
    ASSERT_EQ_INT(out[2], INT32_MIN);
    ASSERT_EQ_INT(used, 18 + 132);
}

TEST(parquet_delta_byte_arrays_refuse_bad_lengths)
{
    ordo_error err;
    ordo__pq_bytes out = {0};
    /* lengths 5 and -3 (first 5 = zigzag 10, delta -8 = min delta, width 0) */
    ASSERT_STATUS(ordo__pq_delta_length(BYTES(0x80, 0x01, 0x04, 0x02, 0x0a, 0x0f, 0, 0, 0, 0, 'a',
                                              'b', 'c', 'd', 'e'),
                                        2, &out, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "DELTA_LENGTH_BYTE_ARRAY: value 1 has length -3");
    ordo__pq_bytes_free(&out);
    /* a length past the bytes there */
    ASSERT_STATUS(
        ordo__pq_delta_length(BYTES(0x80, 0x01, 0x04, 0x01, 0x0a, 'a', 'b'), 1, &out, &err),
        ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "value 0 of 5 bytes, 2 bytes left");
    ordo__pq_bytes_free(&out);
    /* bytes after the last value */
    ASSERT_STATUS(
        ordo__pq_delta_length(BYTES(0x80, 0x01, 0x04, 0x01, 0x04, 'a', 'b', 'c'), 1, &out, &err),
        ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "1 bytes past the last value");
    ordo__pq_bytes_free(&out);
    /* an INT32 length past 2^31 wraps negative: refused, not allocated */
    ASSERT_STATUS(ordo__pq_delta_length(BYTES(0x80, 0x01, 0x04, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10),
                                        1, &out, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "value 0 has length -2147483648");
    ordo__pq_bytes_free(&out);
}

TEST(parquet_delta_byte_array_refuses_a_prefix_longer_than_the_value_before)
{
    ordo_error err;
    ordo__pq_bytes out = {0};
    /* one value, prefix 1 (zigzag 2): there is no value before it */
    ASSERT_STATUS(ordo__pq_delta_byte_array(
                      BYTES(0x80, 0x01, 0x04, 0x01, 0x02, 0x80, 0x01, 0x04, 0x01, 0x02, 'a', 'b'),
                      1, &out, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message,
                    "DELTA_BYTE_ARRAY: value 0 has a prefix of 1 bytes, the value before it 0");
    ordo__pq_bytes_free(&out);
    /* "ab" then prefix 3 of it */
    ASSERT_STATUS(
        ordo__pq_delta_byte_array(BYTES(0x80, 0x01, 0x04, 0x02, 0x00, 0x06, 0, 0, 0, 0, 0x80, 0x01,
                                        0x04, 0x02, 0x04, 0x03, 0, 0, 0, 0, 'a', 'b'),
                                  2, &out, &err),
        ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "value 1 has a prefix of 3 bytes, the value before it 2 bytes");
    ordo__pq_bytes_free(&out);
    /* the same with prefix 2 is "ab", "ab" */
    ASSERT_OK(ordo__pq_delta_byte_array(BYTES(0x80, 0x01, 0x04, 0x02, 0x00, 0x04, 0, 0, 0, 0, 0x80,
                                              0x01, 0x04, 0x02, 0x04, 0x03, 0, 0, 0, 0, 'a', 'b'),
                                        2, &out, &err),
              &err);
    ASSERT_EQ_INT(out.size, 4);
    ordo__pq_bytes_free(&out);
}

/* Prefixes can make values far larger than their page: the list's limit
 * bounds them. 200 copies of a 64-byte value in ~250 bytes. */
TEST(parquet_delta_byte_array_stays_within_the_limit)
{
    ordo_error err;
    int64_t prefix[200], suffix[200];
    for (int i = 0; i < 200; i++)
        prefix[i] = i ? 64 : 0, suffix[i] = i ? 0 : 64;
    unsigned char page[4096];
    size_t n = put_delta(page, prefix, 200);
    n += put_delta(page + n, suffix, 200);
    memset(page + n, 'x', 64), n += 64;
    ASSERT(n < 400);
    ordo__pq_bytes out = {.limit = 4096};
    ASSERT_STATUS(ordo__pq_delta_byte_array(page, n, 200, &out, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "byte-array values exceed 4096 bytes");
    ordo__pq_bytes_free(&out);
    ASSERT_EQ_INT(out.limit, 4096);
    out.limit = 0;
    ASSERT_OK(ordo__pq_delta_byte_array(page, n, 200, &out, &err), &err);
    ASSERT_EQ_INT(out.size, 200 * 64);
    ordo__pq_bytes_free(&out);
    ordo__pq_bytes small = {.limit = 10};
    ASSERT_OK(ordo__pq_bytes_push(&small, "0123456789", 10, &err), &err);
    ASSERT_STATUS(ordo__pq_bytes_push(&small, "0", 1, &err), ORDO_INVALID, &err);
    ASSERT_EQ_INT(small.count, 1);
    ordo__pq_bytes_free(&small);
}

/* Random runs of every shape through the small encoder above (blocks of
 * 128 in 4 miniblocks, widths 0 to 64) decode to what was encoded. */
TEST(parquet_delta_binary_round_trips_random_runs)
{
    ordo_error err;
    uint64_t state = 42;
    int64_t *values = malloc(1000 * sizeof *values), *out = malloc(1000 * sizeof *out);
    unsigned char *page = malloc(16 + 1000 * 10);
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(splitmix(&state) % 1000);
        int shape = round % 4, bits = (int)(splitmix(&state) % 64) + 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = splitmix(&state);
            if (shape == 0) /* small values */
                values[i] = (int64_t)(r % 17) - 8;
            else if (shape == 1) /* sorted */
                values[i] = (i ? values[i - 1] : 0) + (int64_t)(r % 1000);
            else if (shape == 2) /* any 64-bit value */
                values[i] = (int64_t)r;
            else /* `bits` wide */
                values[i] = (int64_t)(bits == 64 ? r : r & ((UINT64_C(1) << bits) - 1));
        }
        size_t len = put_delta(page, values, n), used = 0;
        ASSERT_OK(ordo__pq_delta_binary(page, len, n, 0, out, &used, &err), &err);
        ASSERT_EQ_INT(used, len);
        for (size_t i = 0; i < n; i++)
            if (out[i] != values[i])
                test_fail(__FILE__, __LINE__, "round %d value %zu: %lld, not %lld", round, i,
                          (long long)out[i], (long long)values[i]);
    }
    free(values);
    free(out);
    free(page);
}

TEST(parquet_byte_stream_split_refuses_bad_sizes)
{
    ordo_error err;
    unsigned char out[16];
    const unsigned char in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_OK(ordo__pq_byte_stream_split(in, 8, 2, 4, out, &err), &err);
    const unsigned char want[8] = {1, 3, 5, 7, 2, 4, 6, 8};
    ASSERT(!memcmp(out, want, 8));
    ASSERT_STATUS(ordo__pq_byte_stream_split(in, 7, 2, 4, out, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "BYTE_STREAM_SPLIT: 7 bytes for 2 values of 4 bytes");
    ASSERT_STATUS(ordo__pq_byte_stream_split(in, 8, 1, 4, out, &err), ORDO_INVALID, &err);
    ASSERT_STATUS(ordo__pq_byte_stream_split(in, 8, SIZE_MAX / 2, 8, out, &err), ORDO_INVALID,
                  &err);
    ASSERT_STATUS(ordo__pq_byte_stream_split(in, 6, 2, 3, out, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "values of 3 bytes");
}

TEST(parquet_bytes_grow_and_free)
{
    ordo_error err;
    ordo__pq_bytes out = {0};
    char text[40];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(text, sizeof text, "value %d", i);
        ASSERT_OK(ordo__pq_bytes_push(&out, text, (size_t)n, &err), &err);
    }
    ASSERT_OK(ordo__pq_bytes_push(&out, NULL, 0, &err), &err);
    ASSERT_EQ_INT(out.count, 10001);
    ASSERT_EQ_INT(out.offset[out.count], out.size);
    ASSERT_EQ_INT(out.offset[10000], out.offset[10001]);
    ASSERT(!memcmp(out.data + out.offset[9999], "value 9999", 10));
    ordo__pq_bytes_free(&out);
    ASSERT(!out.data && !out.offset && out.count == 0);
}

/* No values in no bytes (a page of nulls) is an empty list whose offsets
 * are there: offset[0] == 0 (found by the fuzz target). */
TEST(parquet_delta_byte_arrays_of_no_values_have_offsets)
{
    ordo_error err;
    ordo__pq_bytes out = {0};
    ASSERT_OK(ordo__pq_delta_length(NULL, 0, 0, &out, &err), &err);
    ASSERT(out.offset && out.offset[out.count] == 0);
    ordo__pq_bytes_free(&out);
    ASSERT_OK(ordo__pq_delta_byte_array(NULL, 0, 0, &out, &err), &err);
    ASSERT(out.offset && out.offset[out.count] == 0);
    ordo__pq_bytes_free(&out);
    ASSERT_STATUS(ordo__pq_delta_length(NULL, 0, 1, &out, &err), ORDO_INVALID, &err);
    ordo__pq_bytes_free(&out);
}
