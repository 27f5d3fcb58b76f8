/* gzip shards (internal to shards/gzip_*.c, and to tests and the fuzz
 * target through testing.h): access points, as zlib's examples/zran.c
 * keeps them, and their encoding in a shard's aux (docs/gzip.md). */
#ifndef ORDO_SHARDS_GZIP_H
#define ORDO_SHARDS_GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "shards.h"

/* Bytes of output between access points: a point is made at the first
 * deflate block boundary or gzip member start at least this many output
 * bytes after the previous one. Part of the data (it fixes the chunks):
 * 1 MiB, so a chunk (a span, the rest of its block and its last line's
 * tail) fits the smallest chunk limit (4 MiB) for records up to about
 * 2 MiB. Only tests and the fuzz target change it, to reach several
 * points with small files. */
#define ORDO__GZ_SPAN ((uint64_t)1 << 20)
extern uint64_t ordo__gz_span;

/* The most window bytes a point holds: deflate's 32 KiB of history. */
#define ORDO__GZ_WINDOW 32768

/* One access point: where inflating a chunk starts. */
typedef struct ordo__gz_point {
    int member;          /* 1: at a gzip member's first byte (no window needed) */
    int bits;            /* 0-7: bits of the chunk's first byte that begin the block */
    uint64_t out;        /* offset of the point in the shard's decompressed records */
    uint64_t skip;       /* output bytes a read skips: the rest of the line the point cuts */
    uint64_t line;       /* line number (from 1) of the chunk's first record */
    uint32_t crc;        /* CRC32 of the chunk's records: a read checks what it inflated */
    uint32_t window_len; /* bytes of window: the member's output just before the point */
    unsigned char window[ORDO__GZ_WINDOW];
} ordo__gz_point;

/* A growable byte buffer (a shard's aux while it is indexed). */
typedef struct ordo__gz_bytes {
    unsigned char *data;
    uint64_t size, cap;
} ordo__gz_bytes;

/* Bytes of an encoded point before its compressed window. */
#define ORDO__GZ_POINT_HEADER 38

/* Appends the encoding of `point` to *aux (its window compressed with
 * zstd); *length gets the bytes added. *aux stays the caller's. */
ordo_status ordo__gz_point_encode(const ordo__gz_point *point, ordo__gz_bytes *aux,
                                  uint32_t *length, ordo_error *err);

/* Decodes the `len` aux bytes of chunk `chunk` of shard `path` into
 * *point, refusing anything malformed (a bad kind, bits, window size or
 * compressed window, a skip beyond the largest chunk) with ORDO_INVALID
 * naming shard and chunk. */
ordo_status ordo__gz_point_decode(const char *path, uint32_t chunk, const unsigned char *bytes,
                                  size_t len, ordo__gz_point *point, ordo_error *err);

#endif
