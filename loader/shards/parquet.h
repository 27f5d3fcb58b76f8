/* Parquet inside shards/ (internal to the module): the value decoders of
 * a data page's encodings (parquet_encodings.c) and the column scan the
 * reader is built on (parquet_*.c). Errors from the decoders name the
 * encoding and what is wrong with its bytes; the caller prefixes file,
 * column and page. Every decoder reads only [in, in + len) and never
 * writes more than it is asked for. */
#ifndef ORDO_SHARDS_PARQUET_H
#define ORDO_SHARDS_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "shards.h"

/* Byte-array values: value i is data[offset[i], offset[i + 1]), count
 * values (count + 1 offsets). Grown by ordo__pq_bytes_push; freed by
 * ordo__pq_bytes_free. When `limit` is not 0, data never grows past it
 * (a push beyond is ORDO_INVALID): DELTA_BYTE_ARRAY's values can be far
 * larger than the page holding them. */
typedef struct ordo__pq_bytes {
    char *data;
    size_t size, cap;
    size_t *offset;
    size_t count, offset_cap;
    size_t limit;
} ordo__pq_bytes;

ordo_status ordo__pq_bytes_push(ordo__pq_bytes *values, const void *bytes, size_t len,
                                ordo_error *err);
void ordo__pq_bytes_free(ordo__pq_bytes *values);

/* The RLE / bit-packed hybrid (levels, dictionary indices, booleans):
 * `count` values of `bit_width` bits (0..32) into out; *used gets the
 * bytes consumed. */
ordo_status ordo__pq_rle_hybrid(const unsigned char *in, size_t len, int bit_width, size_t count,
                                uint32_t *out, size_t *used, ordo_error *err);

/* DELTA_BINARY_PACKED: `count` values into out (INT32 values are
 * returned widened, wrapping as the format's 32-bit arithmetic does when
 * `int32` is set); *used gets the bytes consumed (the DELTA byte-array
 * encodings need where the block ends). */
ordo_status ordo__pq_delta_binary(const unsigned char *in, size_t len, size_t count, int int32,
                                  int64_t *out, size_t *used, ordo_error *err);

/* DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY: `count` byte arrays
 * appended to *out. */
ordo_status ordo__pq_delta_length(const unsigned char *in, size_t len, size_t count,
                                  ordo__pq_bytes *out, ordo_error *err);
ordo_status ordo__pq_delta_byte_array(const unsigned char *in, size_t len, size_t count,
                                      ordo__pq_bytes *out, ordo_error *err);

/* BYTE_STREAM_SPLIT: `count` values of `width` bytes (4: FLOAT or INT32,
 * 8: DOUBLE or INT64) reassembled into out (count * width bytes, each
 * value little-endian as PLAIN would hold it). */
ordo_status ordo__pq_byte_stream_split(const unsigned char *in, size_t len, size_t count, int width,
                                       unsigned char *out, ordo_error *err);

/* One row's values of the columns a scan asked for, in the order asked
 * (kind MISSING where the file has no such column, NULL for a null). */
typedef int (*ordo__pq_row_fn)(void *context, uint64_t row, const ordo__field_value *values);

/* Reads every row of a Parquet file, giving the values of `columns`
 * (dotted paths of leaf columns; struct columns' leaves by their path)
 * to `fn` in row order: what the conformance tests and the fuzz target
 * compare with a real writer's files, through the same decoding the
 * chunk reader uses. */
ordo_status ordo__pq_scan_columns(const char *path, const char *const *columns, size_t count,
                                  ordo__pq_row_fn fn, void *context, ordo_error *err);

#endif
