/* The chunks of a gzip shard being indexed, from the output of inflate:
 * an access point every span of output, the lines that start between two
 * points as one chunk (the line a point cuts belongs to the earlier one),
 * each chunk's compressed bytes from its point to the first block boundary
 * after its last record, hashed as they stream by. */
#include <stdlib.h>
#include <string.h>

#include "gzip_index.h"

/* Chunks one shard may have (as shard_index.c: one ledger value). */
#define MAX_SHARD_CHUNKS ((uint32_t)1 << 24)

/* The file byte just before the next one inflate takes. */
static unsigned char byte_before(const gz_index *ix)
{
    return ix->z.next_in > ix->in ? ix->z.next_in[-1] : ix->last;
}

static gz_pending *acquire(gz_index *ix, ordo_error *err)
{
    for (int i = 0; i < GZ_PENDING; i++) {
        gz_pending *p = &ix->slot[i];
        if (p->live)
            continue;
        if (!p->sha && !(p->sha = EVP_MD_CTX_new()))
            break;
        if (!p->point && !(p->point = malloc(sizeof *p->point)))
            break;
        if (!EVP_DigestInit_ex2(p->sha, EVP_sha256(), NULL))
            break;
        p->live = 1;
        p->len = 0;
        return p;
    }
    ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", ix->path);
    return NULL;
}

static ordo_status push_chunk(gz_index *ix, const ordo__chunk *chunk, ordo_error *err)
{
    if (ix->count == MAX_SHARD_CHUNKS)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s' has more than %u chunks; split it into several files",
                           ix->path, MAX_SHARD_CHUNKS);
    if (ix->count == ix->capacity) {
        uint32_t capacity = ix->capacity ? 2 * ix->capacity : 64;
        ordo__chunk *grown = realloc(ix->chunks, capacity * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", ix->path);
        ix->chunks = grown;
        ix->capacity = capacity;
    }
    ix->chunks[ix->count++] = *chunk;
    return ORDO_OK;
}

/* A chunk's compressed bytes end at `pos`, the first block boundary after
 * its last record: its digest and point are taken, and it joins the table
 * when it keeps a document. */
static ordo_status finalize(gz_index *ix, gz_pending *p, uint64_t pos, ordo_error *err)
{
    ordo__gz_hash_to(ix, p, pos);
    p->live = 0;
    if (ix->closing == p)
        ix->closing = NULL;
    uint64_t length = pos - p->offset;
    if (length > 2 * ix->limit)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': the chunk of lines from line %llu (gzip access point at "
                           "byte %llu) takes %llu compressed bytes for %llu bytes of records, "
                           "more than twice the chunk limit of %llu",
                           ix->path, (unsigned long long)p->point->line,
                           (unsigned long long)p->offset, (unsigned long long)length,
                           (unsigned long long)p->raw, (unsigned long long)ix->limit);
    if (p->counts.passed == 0)
        return ORDO_OK;
    ordo__chunk chunk = {.offset = p->offset,
                         .length = length,
                         .raw_length = p->raw,
                         .records = (uint32_t)p->counts.passed,
                         .first_record = p->first_record,
                         .aux_offset = ix->aux.size};
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(p->sha, chunk.digest, &n))
        return ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", ix->path);
    ordo_status status = ordo__gz_point_encode(p->point, &ix->aux, &chunk.aux_length, err);
    return status == ORDO_OK ? push_chunk(ix, &chunk, err) : status;
}

static uint64_t newlines(const char *data, size_t len)
{
    uint64_t lines = 0;
    for (size_t at = 0; at < len; at++) {
        const char *newline = memchr(data + at, '\n', len - at);
        if (!newline)
            break;
        lines++;
        at = (size_t)(newline - data);
    }
    return lines;
}

/* The current chunk's records are complete: they are validated and
 * counted, and it waits for the block boundary where its bytes end. */
static ordo_status close_current(gz_index *ix, ordo_error *err)
{
    gz_pending *p = ix->cur;
    ordo__origin origin = {ix->path, p->offset, p->point->skip, p->point->line,
                           "gzip access point"};
    p->counts = (ordo__counts){0};
    p->first_record = ix->counts.read;
    ordo_status status = ordo__scan_records(ORDO_FORMAT_JSONL_GZ, p->buf, p->len, &ix->spec->read,
                                            &origin, NULL, NULL, &p->counts, err);
    ix->counts.read += p->counts.read;
    ix->counts.passed += p->counts.passed;
    ix->counts.filtered += p->counts.filtered;
    ix->counts.empty += p->counts.empty;
    ix->line = p->point->line + newlines(p->buf, p->len);
    p->raw = p->len;
    p->point->crc = (uint32_t)crc32(0L, (const Bytef *)p->buf, (uInt)p->len);
    ix->closing = p;
    ix->cur = NULL;
    return status;
}

/* The next point's chunk begins: its first line starts now. */
static void promote(gz_index *ix)
{
    ix->cur = ix->next;
    ix->next = NULL;
    ix->cur->point->skip = ix->out - ix->cur->point->out;
    ix->cur->point->line = ix->line;
}

/* The chunk is full (limit bytes) and more comes: names the line the
 * limit falls in, which alone is too long when it starts the chunk, else
 * the deflate block too large to end a chunk in, or the chunk's lines. */
static ordo_status too_big(const gz_index *ix, const gz_pending *p, ordo_error *err)
{
    size_t start = p->len; /* of the line in progress, in p->buf */
    while (start > 0 && p->buf[start - 1] != '\n')
        start--;
    unsigned long long line = p->point->line + newlines(p->buf, start),
                       at = p->point->out + p->point->skip + start, point = p->offset,
                       limit = ix->limit;
    const char *why = "split its long records";
    if (start == 0)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': line %llu, at byte %llu of the decompressed records "
                           "(gzip access point at byte %llu), is longer than %llu bytes, the "
                           "most a chunk may hold with %d lanes (256 MiB / lanes, at least "
                           "4 MiB); split the record",
                           ix->path, line, at, point, limit, ix->spec->lanes);
    if (!ix->next) /* still within its own point's span: the block is too long */
        why = "its deflate block inflates to more before it ends: recompress the file with "
              "smaller blocks (bgzip, or gzip of pieces) or use fewer lanes";
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': the chunk of lines from line %llu (gzip access point at "
                       "byte %llu) holds more than %llu bytes, the most a chunk may hold with "
                       "%d lanes (256 MiB / lanes, at least 4 MiB), at line %llu (byte %llu of "
                       "the decompressed records); %s",
                       ix->path, (unsigned long long)p->point->line, point, limit, ix->spec->lanes,
                       line, at, why);
}

static ordo_status append(gz_index *ix, gz_pending *p, const unsigned char *data, size_t n,
                          ordo_error *err)
{
    size_t fits = p->len + n > ix->limit ? (size_t)(ix->limit - p->len) : n;
    if (p->cap - p->len < fits) {
        size_t cap = p->cap ? p->cap : OUT_BLOCK;
        while (cap - p->len < fits)
            cap *= 2;
        if (cap > ix->limit) /* never more than a chunk holds */
            cap = (size_t)ix->limit;
        char *grown = realloc(p->buf, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", ix->path);
        p->buf = grown;
        p->cap = cap;
    }
    if (fits)
        memcpy(p->buf + p->len, data, fits);
    p->len += fits;
    return fits < n ? too_big(ix, p, err) : ORDO_OK;
}

/* Output bytes go to the current chunk; once a newer point waits, only up
 * to the end of the line in progress (the line a point cuts belongs to
 * the earlier chunk), and the next line starts the newer point's chunk. */
ordo_status ordo__gz_take_output(gz_index *ix, const unsigned char *data, size_t n, ordo_error *err)
{
    while (n > 0) {
        if (ix->next && ix->at_line_start) {
            ordo_status status = close_current(ix, err);
            if (status != ORDO_OK)
                return status;
            promote(ix);
        }
        size_t take = n;
        if (ix->next) {
            const unsigned char *newline = memchr(data, '\n', n);
            take = newline ? (size_t)(newline - data) + 1 : n;
        }
        ordo_status status = append(ix, ix->cur, data, take, err);
        if (status != ORDO_OK)
            return status;
        ix->at_line_start = data[take - 1] == '\n';
        ix->out += take;
        data += take;
        n -= take;
    }
    return ORDO_OK;
}

/* Makes an access point here: at a member's first byte, or at the block
 * boundary inflate stands at (with the member's window before it). */
static ordo_status new_point(gz_index *ix, int member, ordo_error *err)
{
    uint64_t pos = ordo__gz_in_pos(ix);
    if (ix->next) { /* no line started in its span: no chunk */
        ix->next->live = 0;
        ix->next = NULL;
    }
    gz_pending *p = acquire(ix, err);
    if (!p)
        return ORDO_NOMEM;
    ordo__gz_point *point = p->point;
    point->member = member;
    point->bits = member ? 0 : ix->z.data_type & 7;
    point->out = ix->out;
    point->skip = 0;
    point->line = ix->line;
    point->window_len = 0;
    if (!member) {
        uInt len = 0;
        if (inflateGetDictionary(&ix->z, point->window, &len) != Z_OK)
            return ordo__error(err, ORDO_NOMEM, "cannot take a gzip window of '%s'", ix->path);
        point->window_len = len;
    }
    p->offset = pos - (point->bits ? 1 : 0);
    if (point->bits) {
        unsigned char byte = byte_before(ix);
        EVP_DigestUpdate(p->sha, &byte, 1);
    }
    p->hashed = pos;
    ix->next = p;
    ix->since_point = 0;
    if (!ix->cur) {
        promote(ix);
    } else if (ix->at_line_start) { /* the current chunk's lines all end here */
        ordo_status status = close_current(ix, err);
        if (status == ORDO_OK)
            status = finalize(ix, ix->closing, pos, err);
        if (status != ORDO_OK)
            return status;
        promote(ix);
    }
    return ORDO_OK;
}

/* At a block boundary or a member's end; see gzip_index.h. A chunk
 * waiting for its bytes' end gets it, and a point is made once a span of
 * output has passed since the last one. */
ordo_status ordo__gz_boundary(gz_index *ix, int candidate, ordo_error *err)
{
    ordo_status status =
        ix->closing ? finalize(ix, ix->closing, ordo__gz_in_pos(ix), err) : ORDO_OK;
    if (status == ORDO_OK && candidate && ix->since_point >= ordo__gz_span && ix->member_out > 0)
        status = new_point(ix, 0, err);
    return status;
}

/* A member starts; see gzip_index.h. */
ordo_status ordo__gz_member_point(gz_index *ix, ordo_error *err)
{
    return new_point(ix, 1, err);
}

/* After the last member; see gzip_index.h. */
ordo_status ordo__gz_finish(gz_index *ix, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    if (ix->next) { /* no line started after the last point */
        ix->next->live = 0;
        ix->next = NULL;
    }
    if (ix->cur)
        status = close_current(ix, err);
    if (status == ORDO_OK && ix->closing)
        status = finalize(ix, ix->closing, ordo__gz_in_pos(ix), err);
    return status;
}
