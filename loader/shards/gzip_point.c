/* gzip access points in a shard's aux: a fixed header, then the window
 * compressed with zstd. At these byte offsets, integers little-endian:
 *   0   kind: 1 member start, 2 deflate block boundary
 *   1   bits (0-7; 0 at a member start)
 *   2   out   (u64)
 *   10  skip  (u64)
 *   18  line  (u64)
 *   26  window_len (u32, at most 32768; 0 at a member start)
 *   30  window_zlen (u32): the compressed window that follows, which
 *       makes up the rest of the chunk's aux exactly
 *   34  crc (u32): CRC32 of the chunk's records. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gzip.h"

uint64_t ordo__gz_span = ORDO__GZ_SPAN;

/* zstd level of the windows: fast (a point every MiB of output while
 * indexing), and 32 KiB of text still shrinks to about a third. */
#define WINDOW_LEVEL 3

static ordo_status reserve(ordo__gz_bytes *aux, uint64_t more, ordo_error *err)
{
    if (aux->cap - aux->size >= more)
        return ORDO_OK;
    uint64_t cap = aux->cap ? aux->cap : 4096;
    while (cap - aux->size < more)
        cap *= 2;
    unsigned char *grown = realloc(aux->data, (size_t)cap);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory keeping gzip access points");
    aux->data = grown;
    aux->cap = cap;
    return ORDO_OK;
}

/* Encodes a point; see gzip.h. */
ordo_status ordo__gz_point_encode(const ordo__gz_point *point, ordo__gz_bytes *aux,
                                  uint32_t *length, ordo_error *err)
{
    size_t bound = ZSTD_compressBound(point->window_len);
    ordo_status status = reserve(aux, ORDO__GZ_POINT_HEADER + bound, err);
    if (status != ORDO_OK)
        return status;
    unsigned char *at = aux->data + aux->size;
    size_t zlen = 0;
    if (point->window_len) {
        zlen = ZSTD_compress(at + ORDO__GZ_POINT_HEADER, bound, point->window, point->window_len,
                             WINDOW_LEVEL);
        if (ZSTD_isError(zlen))
            return ordo__error(err, ORDO_NOMEM, "cannot compress a gzip window: %s",
                               ZSTD_getErrorName(zlen));
    }
    at[0] = point->member ? 1 : 2;
    at[1] = (unsigned char)point->bits;
    ordo__put_le(at + 2, point->out, 8);
    ordo__put_le(at + 10, point->skip, 8);
    ordo__put_le(at + 18, point->line, 8);
    ordo__put_le(at + 26, point->window_len, 4);
    ordo__put_le(at + 30, zlen, 4);
    ordo__put_le(at + 34, point->crc, 4);
    *length = (uint32_t)(ORDO__GZ_POINT_HEADER + zlen);
    aux->size += *length;
    return ORDO_OK;
}

static ordo_status bad_point(const char *path, uint32_t chunk, const char *what, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': chunk %u: its gzip access point is malformed (%s); the "
                       "index does not match the file: index it again",
                       path, chunk, what);
}

/* Decodes a point; see gzip.h. */
ordo_status ordo__gz_point_decode(const char *path, uint32_t chunk, const unsigned char *bytes,
                                  size_t len, ordo__gz_point *point, ordo_error *err)
{
    if (len < ORDO__GZ_POINT_HEADER)
        return bad_point(path, chunk, "too short", err);
    int kind = bytes[0], bits = bytes[1];
    uint64_t window_len = ordo__get_le(bytes + 26, 4), zlen = ordo__get_le(bytes + 30, 4);
    point->member = kind == 1;
    point->bits = bits;
    point->out = ordo__get_le(bytes + 2, 8);
    point->skip = ordo__get_le(bytes + 10, 8);
    point->line = ordo__get_le(bytes + 18, 8);
    point->crc = (uint32_t)ordo__get_le(bytes + 34, 4);
    point->window_len = 0;
    if (kind != 1 && kind != 2)
        return bad_point(path, chunk, "unknown kind", err);
    if (bits > 7 || (kind == 1 && bits != 0))
        return bad_point(path, chunk, "bit count out of range", err);
    if (window_len > ORDO__GZ_WINDOW || (kind == 1 && window_len != 0))
        return bad_point(path, chunk, "window size out of range", err);
    if (zlen != len - ORDO__GZ_POINT_HEADER || (window_len == 0) != (zlen == 0))
        return bad_point(path, chunk, "compressed window size differs from its bytes", err);
    if (point->skip > ORDO__CHUNK_MAX || point->line == 0)
        return bad_point(path, chunk, "skip or line out of range", err);
    if (window_len) {
        size_t n = ZSTD_decompress(point->window, sizeof point->window,
                                   bytes + ORDO__GZ_POINT_HEADER, (size_t)zlen);
        if (ZSTD_isError(n) || n != window_len)
            return bad_point(path, chunk, "compressed window does not decode", err);
    }
    point->window_len = (uint32_t)window_len;
    return ORDO_OK;
}
