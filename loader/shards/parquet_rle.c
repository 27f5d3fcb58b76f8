/* Parquet's RLE / bit-packed hybrid (levels, dictionary indices,
 * booleans), UTF-8 checks and the names of the
 * format's numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

static ordo_status rle_error(ordo_error *err, const char *what, size_t at)
{
    return ordo__error(err, ORDO_INVALID, "RLE/bit-packed data at its byte %zu: %s", at, what);
}

static int varint32(const unsigned char *in, size_t len, size_t *at, uint32_t *out)
{
    uint32_t value = 0;
    for (int shift = 0; shift < 35 && *at < len; shift += 7) {
        unsigned char b = in[(*at)++];
        if (shift == 28 && b > 15)
            return -1;
        value |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return -1;
}

/* `n` values of a bit-packed run starting at in[*at] (LSB first). */
static void unpack(const unsigned char *in, int width, size_t n, uint32_t *out)
{
    uint64_t acc = 0;
    int bits = 0;
    size_t byte = 0;
    uint32_t mask = width == 32 ? 0xffffffffu : ((uint32_t)1 << width) - 1;
    for (size_t i = 0; i < n; i++) {
        while (bits < width) {
            acc |= (uint64_t)in[byte++] << bits;
            bits += 8;
        }
        out[i] = (uint32_t)acc & mask;
        acc >>= width;
        bits -= width;
    }
}

/* The hybrid decoder; see parquet.h. A last bit-packed run may stop at the
 * bytes its needed values take (writers pad it to 8 values). */
ordo_status ordo__pq_rle_hybrid(const unsigned char *in, size_t len, int bit_width, size_t count,
                                uint32_t *out, size_t *used, ordo_error *err)
{
    if (bit_width < 0 || bit_width > 32)
        return ordo__error(err, ORDO_INVALID, "RLE/bit-packed data: bit width %d", bit_width);
    size_t at = 0, done = 0;
    size_t value_bytes = ((size_t)bit_width + 7) / 8;
    while (done < count) {
        size_t start = at;
        uint32_t header = 0;
        if (varint32(in, len, &at, &header) != 0)
            return rle_error(err, "a run header beyond the data", start);
        size_t left = count - done;
        if (header & 1) {
            size_t values = (size_t)(header >> 1) * 8;
            size_t bytes = (size_t)(header >> 1) * (size_t)bit_width;
            size_t take = values < left ? values : left;
            size_t need = (take * (size_t)bit_width + 7) / 8;
            if (need > len - at)
                return rle_error(err, "a bit-packed run beyond the data", start);
            unpack(in + at, bit_width, take, out + done);
            at += bytes < len - at ? bytes : len - at;
            done += take;
        } else {
            size_t run = header >> 1;
            if (value_bytes > len - at)
                return rle_error(err, "a run's value beyond the data", start);
            uint32_t value = 0;
            for (size_t b = 0; b < value_bytes; b++)
                value |= (uint32_t)in[at + b] << (8 * b);
            at += value_bytes;
            if (bit_width < 32 && value >> bit_width)
                return rle_error(err, "a run's value wider than its bit width", start);
            size_t take = run < left ? run : left;
            for (size_t i = 0; i < take; i++)
                out[done + i] = value;
            done += take;
        }
    }
    if (used)
        *used = at;
    return ORDO_OK;
}

/* Whether bytes are UTF-8; see parquet.h. */
int ordo__pq_utf8(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t word;
        if (len - i >= 8 && (memcpy(&word, s + i, 8), (word & 0x8080808080808080u) == 0)) {
            i += 8; /* eight ASCII bytes at once */
            continue;
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        if (n == 0 || c > 0xf4 || len - i < n)
            return 0;
        for (size_t k = 1; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
        unsigned char d = s[i + 1];
        if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) ||
            (c == 0xf4 && d > 0x8f))
            return 0;
        i += n;
    }
    return 1;
}

/* A name, or for a value no name is known for "unknown (N)" in one of a
 * few per-thread buffers, so a message may name two. */
static const char *name_of(const char *const *names, size_t n, int value)
{
    if (value >= 0 && (size_t)value < n && names[value])
        return names[value];
    static _Thread_local char unknown[4][32];
    static _Thread_local unsigned next;
    char *buf = unknown[next++ % 4];
    snprintf(buf, sizeof unknown[0], "unknown (%d)", value);
    return buf;
}

/* A physical type's name ("BYTE_ARRAY"); see parquet.h. */
const char *ordo__pq_type_name(int type)
{
    static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return name_of(names, sizeof names / sizeof *names, type);
}

/* A codec's name ("ZSTD"); see parquet.h. */
const char *ordo__pq_codec_name(int codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                        "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return name_of(names, sizeof names / sizeof *names, codec);
}

/* An encoding's name ("RLE_DICTIONARY"); see parquet.h. */
const char *ordo__pq_encoding_name(int encoding)
{
    static const char *const names[] = {
        "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
        "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
        "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return name_of(names, sizeof names / sizeof *names, encoding);
}
