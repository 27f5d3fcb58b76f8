/* Reading one chunk of a gzip shard: its compressed bytes (from its
 * access point to the block boundary after its last record) are read and
 * checked against the chunk's digest, then inflated from the point — a
 * member's start, or a block boundary primed with its bits and window —
 * skipping the rest of the line the point cuts, into the chunk's records. */
#define _DEFAULT_SOURCE /* pread */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gzip.h"

/* Where a read stands, for its checks and messages. */
typedef struct {
    const char *path;
    uint32_t index;
    const ordo__chunk *chunk;
    const ordo__gz_point *point;
    const unsigned char *in;
} gz_reader;

static ordo_status mismatch(const gz_reader *r, const char *what, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': chunk %u: its gzip access point at byte %llu %s; the index "
                       "does not match the file: index it again",
                       r->path, r->index, (unsigned long long)r->chunk->offset, what);
}

/* Reads the chunk's compressed bytes, checked against the file's size
 * first and against the chunk's digest after. */
static ordo_status load(const gz_reader *r, unsigned char **in, ordo_error *err)
{
    const ordo__chunk *chunk = r->chunk;
    if (chunk->length == 0 || chunk->length > 2 * ORDO__CHUNK_MAX ||
        chunk->raw_length > ORDO__CHUNK_MAX)
        return mismatch(r, "has sizes out of range", err);
    int fd = -1;
    ordo_status status = ordo__open_regular(r->path, "shard", &fd, err);
    if (status != ORDO_OK)
        return status;
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < chunk->offset ||
        (uint64_t)st.st_size - chunk->offset < chunk->length) {
        close(fd);
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': chunk %u (%llu bytes at byte %llu) lies beyond the end "
                           "of the file (%llu bytes); the index does not match the file",
                           r->path, r->index, (unsigned long long)chunk->length,
                           (unsigned long long)chunk->offset, (unsigned long long)st.st_size);
    }
    unsigned char *raw = malloc((size_t)chunk->length);
    status = raw ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", r->path);
    for (uint64_t got = 0; status == ORDO_OK && got < chunk->length;) {
        ssize_t n =
            pread(fd, raw + got, (size_t)(chunk->length - got), (off_t)(chunk->offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            status = ordo__error(err, ORDO_IO, "shard '%s': cannot read %llu bytes at byte %llu",
                                 r->path, (unsigned long long)chunk->length,
                                 (unsigned long long)chunk->offset);
        else
            got += (uint64_t)n;
    }
    close(fd);
    if (status == ORDO_OK)
        status = ordo__chunk_check(r->path, chunk, r->index, raw, err);
    if (status != ORDO_OK) {
        free(raw);
        return status;
    }
    *in = raw;
    return ORDO_OK;
}

/* Starts inflating at the point: a gzip member, or raw deflate primed with
 * the bits of the first byte and the window. */
static ordo_status start(const gz_reader *r, z_stream *z, ordo_error *err)
{
    const ordo__gz_point *point = r->point;
    if (inflateInit2(z, point->member ? 31 : -15) != Z_OK)
        return ordo__error(err, ORDO_NOMEM, "cannot inflate '%s'", r->path);
    z->next_in = (unsigned char *)r->in;
    z->avail_in = (uInt)r->chunk->length;
    if (point->member)
        return ORDO_OK;
    if (point->bits) {
        if (inflatePrime(z, point->bits, r->in[0] >> (8 - point->bits)) != Z_OK)
            return mismatch(r, "cannot be primed", err);
        z->next_in++;
        z->avail_in--;
    }
    if (point->window_len && inflateSetDictionary(z, point->window, point->window_len) != Z_OK)
        return mismatch(r, "has a window inflate refuses", err);
    return ORDO_OK;
}

/* After a member's deflate data: its trailer (zlib read it in gzip mode)
 * and the next member's header must follow. */
static ordo_status next_member(const gz_reader *r, z_stream *z, int *raw, ordo_error *err)
{
    if (*raw) {
        if (z->avail_in < 8)
            return mismatch(r, "ends before its records do", err);
        z->next_in += 8;
        z->avail_in -= 8;
    }
    if (z->avail_in < 2 || z->next_in[0] != 0x1f || z->next_in[1] != 0x8b)
        return mismatch(r, "ends before its records do", err);
    *raw = 0;
    return inflateReset2(z, 31) == Z_OK ? ORDO_OK : mismatch(r, "cannot go on", err);
}

/* Inflates into `records` (chunk->raw_length bytes) after skipping
 * point->skip bytes, which must be the rest of one line. */
static ordo_status inflate_records(const gz_reader *r, z_stream *z, char *records, ordo_error *err)
{
    unsigned char scratch[16384];
    uint64_t skip = r->point->skip, got = 0, want = r->chunk->raw_length, newlines = 0;
    unsigned char last = '\n';
    int raw = !r->point->member;
    while (got < want) {
        uint64_t room = skip ? (skip < sizeof scratch ? skip : sizeof scratch) : want - got;
        z->next_out = skip ? scratch : (unsigned char *)records + got;
        z->avail_out = (uInt)room;
        int ret = inflate(z, Z_NO_FLUSH);
        size_t produced = (size_t)(room - z->avail_out);
        if (skip && produced) {
            for (size_t i = 0; i < produced; i++)
                newlines += scratch[i] == '\n';
            last = scratch[produced - 1];
            skip -= produced;
            if (skip == 0 && (newlines != 1 || last != '\n'))
                return mismatch(r, "does not skip exactly the rest of a line", err);
        } else {
            got += produced;
        }
        ordo_status status = ORDO_OK;
        if (ret == Z_STREAM_END && (got < want || skip))
            status = next_member(r, z, &raw, err);
        else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
            status =
                ordo__error(err, ORDO_INVALID,
                            "shard '%s': chunk %u: gzip data from the access point at byte "
                            "%llu is corrupt at byte %llu (%s)",
                            r->path, r->index, (unsigned long long)r->chunk->offset,
                            (unsigned long long)(r->chunk->offset + (uint64_t)(z->next_in - r->in)),
                            z->msg ? z->msg : "invalid data");
        else if (ret == Z_MEM_ERROR)
            status = ordo__error(err, ORDO_NOMEM, "out of memory inflating '%s'", r->path);
        else if ((ret == Z_BUF_ERROR || z->avail_in == 0) && produced == 0)
            status = mismatch(r, "ends before its records do", err);
        if (status != ORDO_OK)
            return status;
    }
    if ((uint32_t)crc32(0L, (const Bytef *)records, (uInt)want) != r->point->crc)
        return mismatch(r, "yields other records than it did when indexed (CRC32 differs)", err);
    return ORDO_OK;
}

/* Reads one chunk of a gzip shard; see shards.h. */
ordo_status ordo__gz_chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                                const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                ordo__counts *counts, ordo_error *err)
{
    const ordo__chunk *chunk = &shard->chunks[index];
    gz_reader r = {path, index, chunk, NULL, NULL};
    if (chunk->aux_offset > shard->aux_size ||
        chunk->aux_length > shard->aux_size - chunk->aux_offset)
        return mismatch(&r, "lies outside the shard's access points", err);
    ordo__gz_point *point = malloc(sizeof *point);
    if (!point)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    ordo_status status = ordo__gz_point_decode(path, index, shard->aux + chunk->aux_offset,
                                               chunk->aux_length, point, err);
    r.point = point;
    unsigned char *in = NULL;
    if (status == ORDO_OK)
        status = load(&r, &in, err);
    r.in = in;
    char *records = NULL;
    if (status == ORDO_OK && !(records = malloc(chunk->raw_length ? chunk->raw_length : 1)))
        status = ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    z_stream z = {0};
    if (status == ORDO_OK)
        status = start(&r, &z, err);
    if (status == ORDO_OK)
        status = inflate_records(&r, &z, records, err);
    inflateEnd(&z);
    free(in);
    ordo__origin origin = {path, chunk->offset, point->skip, point->line, "gzip access point"};
    if (status == ORDO_OK)
        status = ordo__scan_records(ORDO_FORMAT_JSONL_GZ, records, (size_t)chunk->raw_length, spec,
                                    &origin, fn, context, counts, err);
    free(records);
    free(point);
    return status;
}
