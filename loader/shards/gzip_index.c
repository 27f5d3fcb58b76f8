/* Indexing a gzip shard (.jsonl.gz, .json.gz): one pass over the file,
 * hashing it, inflating every member with its CRC32 and ISIZE checked,
 * making an access point every ordo__gz_span bytes of output (at a deflate
 * block boundary with the window before it, or a member start), and a
 * chunk of the lines that start between two points (docs/gzip.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <zlib.h>

#include "gzip.h"

#define READ_BLOCK ((size_t)1 << 20)
#define OUT_BLOCK ((size_t)1 << 18)

/* Chunks one shard may have (as shard_index.c: one ledger value). */
#define MAX_SHARD_CHUNKS ((uint32_t)1 << 24)

/* A chunk on its way: from its access point, through its records, to the
 * first block boundary after its last record, where its bytes end. */
typedef struct {
    int live;
    ordo__gz_point *point;
    uint64_t offset; /* file offset of the point's first byte */
    EVP_MD_CTX *sha; /* of the file's bytes from `offset` */
    uint64_t hashed; /* file offset hashed up to */
    char *buf;       /* its records so far (from its first line) */
    size_t len, cap;
    uint64_t raw, first_record; /* once its records are complete */
    ordo__counts counts;
} gz_pending;

/* At most three chunks are pending at once: the one taking records, the
 * newest point's (waiting for its first line), and one whose records are
 * complete waiting for the block boundary where its bytes end. */
#define GZ_PENDING 3

typedef struct {
    const char *path;
    const ordo__index_spec *spec;
    uint64_t limit;
    int fd, eof;
    EVP_MD_CTX *file_sha;
    unsigned char *in;       /* READ_BLOCK bytes; z.next_in points into it */
    uint64_t in_base, total; /* file offset of in[0]; bytes read */
    unsigned char last;      /* the file byte before in[0] */
    z_stream z;
    unsigned char *out_buf;
    uint64_t member, member_out; /* the current member's file offset and output */
    uint64_t out, since_point;   /* output bytes: all, since the last point */
    int at_line_start;           /* the next output byte starts a line */
    uint64_t line;               /* the number of the next line to start */
    gz_pending slot[GZ_PENDING];
    gz_pending *cur, *next, *closing;
    ordo__chunk *chunks;
    uint32_t count, capacity;
    ordo__gz_bytes aux;
    ordo__counts counts;
} gz_index;

static uint64_t in_pos(const gz_index *ix)
{
    return ix->in_base + (uint64_t)(ix->z.next_in - ix->in);
}

/* The file byte just before the next one inflate takes. */
static unsigned char byte_before(const gz_index *ix)
{
    return ix->z.next_in > ix->in ? ix->z.next_in[-1] : ix->last;
}

/* Hashes a pending chunk's file bytes up to `pos` (all in the buffer). */
static void hash_to(gz_index *ix, gz_pending *p, uint64_t pos)
{
    if (p->hashed < pos)
        EVP_DigestUpdate(p->sha, ix->in + (p->hashed - ix->in_base), (size_t)(pos - p->hashed));
    p->hashed = pos;
}

/* Makes at least `need` unconsumed bytes available, or all that is left;
 * consumed bytes are hashed into the pending chunks first. */
static ordo_status fill(gz_index *ix, size_t need, ordo_error *err)
{
    while (!ix->eof && ix->z.avail_in < need) {
        uint64_t pos = in_pos(ix);
        for (int i = 0; i < GZ_PENDING; i++)
            if (ix->slot[i].live)
                hash_to(ix, &ix->slot[i], pos);
        if (ix->z.next_in > ix->in)
            ix->last = ix->z.next_in[-1];
        memmove(ix->in, ix->z.next_in, ix->z.avail_in);
        ix->in_base = pos;
        ix->z.next_in = ix->in;
        ssize_t n = read(ix->fd, ix->in + ix->z.avail_in, READ_BLOCK - ix->z.avail_in);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ordo__error(err, ORDO_IO, "cannot read shard '%s' at byte %llu (errno %d)",
                               ix->path, (unsigned long long)ix->total, errno);
        if (n == 0)
            ix->eof = 1;
        EVP_DigestUpdate(ix->file_sha, ix->in + ix->z.avail_in, (size_t)n);
        ix->z.avail_in += (uInt)n;
        ix->total += (uint64_t)n;
        if (ix->spec->progress)
            ix->spec->progress(ix->spec->progress_context, ix->total);
    }
    return ORDO_OK;
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
    hash_to(ix, p, pos);
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
    for (const char *at = data, *end = data + len; (at = memchr(at, '\n', (size_t)(end - at)));
         at++)
        lines++;
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
    memcpy(p->buf + p->len, data, fits);
    p->len += fits;
    return fits < n ? too_big(ix, p, err) : ORDO_OK;
}

/* Output bytes go to the current chunk; once a newer point waits, only up
 * to the end of the line in progress (the line a point cuts belongs to
 * the earlier chunk), and the next line starts the newer point's chunk. */
static ordo_status take_output(gz_index *ix, const unsigned char *data, size_t n, ordo_error *err)
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
    uint64_t pos = in_pos(ix);
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

/* Inflate stands at a block boundary or a member's end: a chunk waiting
 * for its bytes' end gets it, and a point is made once a span of output
 * has passed since the last one. */
static ordo_status boundary(gz_index *ix, int candidate, ordo_error *err)
{
    ordo_status status = ix->closing ? finalize(ix, ix->closing, in_pos(ix), err) : ORDO_OK;
    if (status == ORDO_OK && candidate && ix->since_point >= ordo__gz_span && ix->member_out > 0)
        status = new_point(ix, 0, err);
    return status;
}

static ordo_status inflate_error(gz_index *ix, int ret, ordo_error *err)
{
    if (ret == Z_MEM_ERROR)
        return ordo__error(err, ORDO_NOMEM, "out of memory inflating '%s'", ix->path);
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': gzip member at byte %llu is corrupt at byte %llu (%s)",
                       ix->path, (unsigned long long)ix->member, (unsigned long long)in_pos(ix),
                       ix->z.msg ? ix->z.msg : "invalid data");
}

/* Inflates one member to its end (its CRC32 and ISIZE checked by zlib). */
static ordo_status inflate_member(gz_index *ix, ordo_error *err)
{
    for (;;) {
        ordo_status status = ix->z.avail_in ? ORDO_OK : fill(ix, 1, err);
        if (status != ORDO_OK)
            return status;
        if (ix->z.avail_in == 0)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': gzip member at byte %llu is truncated: the file "
                               "ends at byte %llu",
                               ix->path, (unsigned long long)ix->member,
                               (unsigned long long)ix->total);
        ix->z.next_out = ix->out_buf;
        ix->z.avail_out = OUT_BLOCK;
        int ret = inflate(&ix->z, Z_BLOCK);
        if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
            return inflate_error(ix, ret, err);
        size_t produced = OUT_BLOCK - ix->z.avail_out;
        status = take_output(ix, ix->out_buf, produced, err);
        ix->member_out += produced;
        ix->since_point += produced;
        if (status == ORDO_OK && ret == Z_STREAM_END)
            return boundary(ix, 0, err);
        if (status == ORDO_OK && (ix->z.data_type & 128) && !(ix->z.data_type & 64))
            status = boundary(ix, 1, err);
        if (status != ORDO_OK)
            return status;
    }
}

/* Every member in turn, then nothing but the end of the file. */
static ordo_status inflate_file(gz_index *ix, ordo_error *err)
{
    ordo_status status = fill(ix, 2, err);
    if (status == ORDO_OK && ix->z.avail_in == 0)
        return ordo__error(err, ORDO_INVALID, "shard '%s' is empty: not a gzip file", ix->path);
    while (status == ORDO_OK && ix->z.avail_in > 0) {
        uint64_t pos = in_pos(ix);
        if (ix->z.avail_in < 2 || ix->z.next_in[0] != 0x1f || ix->z.next_in[1] != 0x8b)
            return ordo__error(err, ORDO_INVALID,
                               pos == 0 ? "shard '%s': not a gzip file (no gzip header at byte "
                                          "%llu)"
                                        : "shard '%s': trailing garbage at byte %llu, after the "
                                          "last gzip member",
                               ix->path, (unsigned long long)pos);
        ix->member = pos;
        ix->member_out = 0;
        if (inflateReset(&ix->z) != Z_OK)
            return ordo__error(err, ORDO_NOMEM, "cannot inflate '%s'", ix->path);
        if (!ix->cur || ix->since_point >= ordo__gz_span)
            status = new_point(ix, 1, err);
        if (status == ORDO_OK)
            status = inflate_member(ix, err);
        if (status == ORDO_OK)
            status = fill(ix, 2, err);
    }
    if (status == ORDO_OK && ix->next) { /* no line started after the last point */
        ix->next->live = 0;
        ix->next = NULL;
    }
    if (status == ORDO_OK && ix->cur)
        status = close_current(ix, err);
    if (status == ORDO_OK && ix->closing)
        status = finalize(ix, ix->closing, in_pos(ix), err);
    return status;
}

/* The bytes indexed must be the bytes hashed when the recipe was read. */
static ordo_status same_bytes(gz_index *ix, const ordo__shard *shard, ordo_error *err)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(ix->file_sha, digest, &n))
        return ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", ix->path);
    int differs = memcmp(digest, shard->sha256, sizeof digest) != 0;
    if (ix->total != shard->size || differs)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s' changed while being indexed (%llu bytes, was %llu; "
                           "SHA-256 %s)",
                           ix->path, (unsigned long long)ix->total, (unsigned long long)shard->size,
                           differs ? "differs" : "same");
    return ORDO_OK;
}

static ordo_status setup(gz_index *ix, ordo_error *err)
{
    ix->in = malloc(READ_BLOCK);
    ix->out_buf = malloc(OUT_BLOCK);
    ix->file_sha = EVP_MD_CTX_new();
    if (!ix->in || !ix->out_buf || !ix->file_sha ||
        !EVP_DigestInit_ex2(ix->file_sha, EVP_sha256(), NULL))
        return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", ix->path);
    if (inflateInit2(&ix->z, 31) != Z_OK)
        return ordo__error(err, ORDO_NOMEM, "cannot inflate '%s'", ix->path);
    ix->z.next_in = ix->in;
    return ORDO_OK;
}

static void teardown(gz_index *ix)
{
    inflateEnd(&ix->z);
    for (int i = 0; i < GZ_PENDING; i++) {
        EVP_MD_CTX_free(ix->slot[i].sha);
        free(ix->slot[i].point);
        free(ix->slot[i].buf);
    }
    EVP_MD_CTX_free(ix->file_sha);
    free(ix->in);
    free(ix->out_buf);
    if (ix->fd >= 0)
        close(ix->fd);
}

/* Indexes a gzip shard; see shards.h. The chunk table and the access
 * points (shard->aux) replace the shard's only when all went well. */
ordo_status ordo__gz_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                           ordo_error *err)
{
    gz_index ix = {.path = path,
                   .spec = spec,
                   .limit = spec->chunk_limit,
                   .fd = -1,
                   .line = 1,
                   .at_line_start = 1};
    ordo_status status = ordo__open_regular(path, "shard", &ix.fd, err);
    if (status == ORDO_OK)
        status = setup(&ix, err);
    if (status == ORDO_OK)
        status = inflate_file(&ix, err);
    if (status == ORDO_OK)
        status = same_bytes(&ix, shard, err);
    teardown(&ix);
    if (status != ORDO_OK) {
        free(ix.chunks);
        free(ix.aux.data);
        return status;
    }
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = ix.chunks;
    shard->chunk_count = ix.count;
    shard->counts = ix.counts;
    shard->records = ix.counts.passed;
    shard->skipped = ix.counts.empty;
    shard->aux = ix.aux.data;
    shard->aux_size = ix.aux.size;
    return ORDO_OK;
}
