/* Indexing one shard: its chunk table, validating every record. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <zstd.h>

#include "shards.h"

typedef struct {
    ordo__chunk *chunks;
    uint32_t count, capacity;
} chunk_list;

/* Chunks one shard may have: its chunk table (32 bytes a chunk) is one
 * ledger value, and SQLite values stay below 1 GB. */
#define MAX_SHARD_CHUNKS ((uint32_t)1 << 24)

/* Adds a chunk whose file bytes are `bytes` (chunk.length of them): its
 * digest is taken from the same buffer the records were validated in. */
static ordo_status push_chunk(const char *path, chunk_list *list, ordo__chunk chunk,
                              const char *bytes, ordo_error *err)
{
    ordo_sha256(bytes, (size_t)chunk.length, chunk.digest);
    if (list->count == MAX_SHARD_CHUNKS)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s' has more than %u chunks; split it into "
                           "several files",
                           path, MAX_SHARD_CHUNKS);
    if (list->count == list->capacity) {
        uint32_t capacity = list->capacity ? 2 * list->capacity : 64;
        ordo__chunk *grown = realloc(list->chunks, capacity * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing a shard");
        list->chunks = grown;
        list->capacity = capacity;
    }
    list->chunks[list->count++] = chunk;
    return ORDO_OK;
}

/* The shard streamed through a window: every byte is read once, hashed
 * and indexed from the same buffer, so the index always belongs to the
 * bytes the hash names, and a file that shrinks gives an error, not a
 * fault. */
typedef struct {
    const char *path;
    int fd, eof;
    char *buf;
    size_t start, end, cap; /* unconsumed bytes are buf[start, end) */
    uint64_t base;          /* file offset of buf[0] */
    uint64_t total;
    EVP_MD_CTX *sha;
    uint64_t limit; /* the most bytes a chunk may hold */
    int lanes;      /* of the recipe, which the limit depends on */
} window;

#define READ_BLOCK ((size_t)1 << 20)

/* Makes at least `need` unconsumed bytes available, or all that is left. */
static ordo_status window_fill(window *w, size_t need, ordo_error *err)
{
    while (!w->eof && w->end - w->start < need) {
        if (w->start > 0) {
            memmove(w->buf, w->buf + w->start, w->end - w->start);
            w->base += w->start;
            w->end -= w->start;
            w->start = 0;
        }
        if (w->cap - w->end < READ_BLOCK) {
            size_t cap = w->cap ? 2 * w->cap : 2 * READ_BLOCK;
            while (cap - w->end < READ_BLOCK)
                cap *= 2;
            char *grown = realloc(w->buf, cap);
            if (!grown)
                return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", w->path);
            w->buf = grown;
            w->cap = cap;
        }
        ssize_t n = read(w->fd, w->buf + w->end, READ_BLOCK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ordo__error(err, ORDO_IO, "cannot read shard '%s' at byte %llu (errno %d)",
                               w->path, (unsigned long long)w->total, errno);
        if (n == 0)
            w->eof = 1;
        EVP_DigestUpdate(w->sha, w->buf + w->end, (size_t)n);
        w->end += (size_t)n;
        w->total += (uint64_t)n;
    }
    return ORDO_OK;
}

static void add_counts(ordo__counts *to, const ordo__counts *more)
{
    to->read += more->read;
    to->passed += more->passed;
    to->filtered += more->filtered;
    to->empty += more->empty;
}

static void progress(const window *w, const ordo__index_spec *spec)
{
    if (spec->progress)
        spec->progress(spec->progress_context, w->base + w->start);
}

static size_t window_avail(const window *w)
{
    return w->end - w->start;
}

static uint64_t window_offset(const window *w)
{
    return w->base + w->start;
}

static ordo_status too_big(const window *w, const char *what, uint64_t offset, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': %s at byte %llu is larger than %llu bytes, the most a chunk "
                       "may hold with %d lanes (256 MiB / lanes, at least 4 MiB: every lane "
                       "holds its chunks in memory); write smaller frames with 'ordo shard "
                       "--docs-per-frame', lower chunk_records or split the record",
                       w->path, what, (unsigned long long)offset, (unsigned long long)w->limit,
                       w->lanes);
}

/* Lines in a chunk's records (a last line without '\n' counts): chunks
 * always end at a line's end, so the next chunk starts a new line. */
static uint64_t lines_in(const char *data, size_t len)
{
    uint64_t lines = 0;
    for (const char *at = data, *end = data + len; at < end; lines++) {
        const char *newline = memchr(at, '\n', (size_t)(end - at));
        at = newline ? newline + 1 : end;
    }
    return lines;
}

/* Plain .jsonl: every `per_chunk` lines (blank ones included) are a chunk. */
static ordo_status index_jsonl(window *w, const ordo__index_spec *spec, chunk_list *list,
                               ordo__counts *counts, ordo_error *err)
{
    int per_chunk = spec->per_chunk;
    ordo_status status = window_fill(w, READ_BLOCK, err);
    uint64_t line = 1; /* of the chunk's first line */
    while (status == ORDO_OK && window_avail(w) > 0) {
        size_t end = 0, complete = 0; /* relative to w->start; complete: whole lines */
        for (int lines = 0; lines < per_chunk && status == ORDO_OK;) {
            const char *at = w->buf + w->start;
            const char *newline = memchr(at + end, '\n', window_avail(w) - end);
            if (newline) {
                end = complete = (size_t)(newline - at) + 1;
                lines++;
            } else if (w->eof) {
                end = window_avail(w);
                break;
            } else if (window_avail(w) > w->limit) {
                char what[112];
                snprintf(what, sizeof what, "line %llu, in a chunk of lines from byte %llu,",
                         (unsigned long long)(line + (uint64_t)lines),
                         (unsigned long long)window_offset(w));
                return too_big(w, what, window_offset(w) + complete, err);
            } else {
                end = window_avail(w);
                status = window_fill(w, window_avail(w) + READ_BLOCK, err);
            }
        }
        if (status != ORDO_OK)
            return status;
        if (end > w->limit) {
            char what[112];
            snprintf(what, sizeof what, "the chunk of lines %llu to %llu", (unsigned long long)line,
                     (unsigned long long)(line + lines_in(w->buf + w->start, end) - 1));
            return too_big(w, what, window_offset(w), err);
        }
        uint64_t offset = window_offset(w), first = counts->read;
        ordo__origin origin = {w->path, UINT64_MAX, offset, line, NULL};
        ordo__counts here = {0};
        status = ordo__scan_records(ORDO_FORMAT_JSONL, w->buf + w->start, end, &spec->read, &origin,
                                    NULL, NULL, &here, err);
        line += lines_in(w->buf + w->start, end);
        if (status == ORDO_OK && here.passed > 0)
            status = push_chunk(w->path, list,
                                (ordo__chunk){.offset = offset,
                                              .length = end,
                                              .raw_length = end,
                                              .records = (uint32_t)here.passed,
                                              .first_record = first},
                                w->buf + w->start, err);
        add_counts(counts, &here);
        w->start += end;
        progress(w, spec);
        if (status == ORDO_OK)
            status = window_fill(w, READ_BLOCK, err);
    }
    return status;
}

/* Decompresses one frame; ordo's shards record their content size. */
static ordo_status frame_content(const window *w, const char *frame, size_t csize, uint64_t offset,
                                 char **out, size_t *len, ordo_error *err)
{
    const char *path = w->path;
    unsigned long long size = ZSTD_getFrameContentSize(frame, csize);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': zstd frame at byte %llu does not record its content "
                           "size (write shards with 'ordo shard')",
                           path, (unsigned long long)offset);
    if (size > w->limit) /* refused before anything that size is allocated */
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': zstd frame at byte %llu holds %llu bytes; with %d lanes "
                           "a chunk may hold at most %llu (256 MiB / lanes, at least 4 MiB: "
                           "every lane holds its chunks in memory; write smaller frames with "
                           "'ordo shard --docs-per-frame')",
                           path, (unsigned long long)offset, size, w->lanes,
                           (unsigned long long)w->limit);
    char *data = malloc(size ? size : 1);
    if (!data)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    size_t n = ZSTD_decompress(data, size, frame, csize);
    if (ZSTD_isError(n) || n != size) {
        free(data);
        return ordo__error(err, ORDO_INVALID, "shard '%s': zstd frame at byte %llu: %s", path,
                           (unsigned long long)offset,
                           ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong content size");
    }
    *out = data;
    *len = n;
    return ORDO_OK;
}

static int skippable(const char *frame, size_t size)
{
    if (size < 4)
        return 0;
    const unsigned char *b = (const unsigned char *)frame;
    uint32_t magic =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return (magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* The next whole frame in the window: its compressed size. */
static ordo_status next_frame(window *w, size_t *csize, ordo_error *err)
{
    size_t want = READ_BLOCK;
    for (;;) {
        ordo_status status = window_fill(w, want, err);
        if (status != ORDO_OK)
            return status;
        size_t n = ZSTD_findFrameCompressedSize(w->buf + w->start, window_avail(w));
        if (!ZSTD_isError(n)) {
            *csize = n;
            return ORDO_OK;
        }
        if (w->eof || window_avail(w) < want)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': zstd frame at byte %llu is truncated or corrupt (%s)",
                               w->path, (unsigned long long)window_offset(w), ZSTD_getErrorName(n));
        if (want > w->limit)
            return too_big(w, "zstd frame", window_offset(w), err);
        want *= 2;
    }
}

/* .jsonl.zst: every zstd frame is a chunk; skippable frames are passed. */
static ordo_status index_zst(window *w, const ordo__index_spec *spec, chunk_list *list,
                             ordo__counts *counts, ordo_error *err)
{
    ordo_status status = window_fill(w, READ_BLOCK, err);
    uint64_t line = 1; /* in the decompressed records, of this frame's first line */
    while (status == ORDO_OK && window_avail(w) > 0) {
        size_t csize = 0;
        uint64_t offset = window_offset(w);
        status = next_frame(w, &csize, err);
        if (status != ORDO_OK)
            return status;
        const char *frame = w->buf + w->start;
        w->start += csize;
        if (skippable(frame, csize))
            continue;
        char *content = NULL;
        size_t len = 0;
        status = frame_content(w, frame, csize, offset, &content, &len, err);
        ordo__origin origin = {w->path, offset, 0, line, NULL};
        ordo__counts here = {0};
        uint64_t first = counts->read;
        if (status == ORDO_OK)
            status = ordo__scan_records(ORDO_FORMAT_JSONL_ZST, content, len, &spec->read, &origin,
                                        NULL, NULL, &here, err);
        if (status == ORDO_OK)
            line += lines_in(content, len);
        free(content);
        if (status == ORDO_OK && here.passed > 0)
            status = push_chunk(w->path, list,
                                (ordo__chunk){.offset = offset,
                                              .length = csize,
                                              .raw_length = len,
                                              .records = (uint32_t)here.passed,
                                              .first_record = first},
                                frame, err);
        add_counts(counts, &here);
        progress(w, spec);
        if (status == ORDO_OK)
            status = window_fill(w, READ_BLOCK, err);
    }
    return status;
}

/* .txt: the whole file is one document. */
static ordo_status index_txt(window *w, const ordo__index_spec *spec, chunk_list *list,
                             ordo__counts *counts, ordo_error *err)
{
    ordo_status status = window_fill(w, w->limit + 1, err);
    if (status == ORDO_OK && window_avail(w) > w->limit)
        return too_big(w, "a text file", 0, err);
    ordo__origin origin = {w->path, UINT64_MAX, 0, 1, NULL};
    size_t size = window_avail(w);
    if (status == ORDO_OK)
        status = ordo__scan_records(ORDO_FORMAT_TXT, w->buf + w->start, size, &spec->read, &origin,
                                    NULL, NULL, counts, err);
    if (status == ORDO_OK && counts->passed)
        status = push_chunk(w->path, list,
                            (ordo__chunk){.length = size, .raw_length = size, .records = 1},
                            w->buf + w->start, err);
    w->start += size;
    return status;
}

static ordo_status index_stream(window *w, enum ordo__format format, const ordo__index_spec *spec,
                                chunk_list *list, ordo__counts *counts, ordo_error *err)
{
    if (format == ORDO_FORMAT_JSONL)
        return index_jsonl(w, spec, list, counts, err);
    if (format == ORDO_FORMAT_JSONL_ZST)
        return index_zst(w, spec, list, counts, err);
    return index_txt(w, spec, list, counts, err);
}

/* The bytes indexed must be the bytes hashed when the recipe was read. */
static ordo_status same_bytes(window *w, const ordo__shard *shard, ordo_error *err)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(w->sha, digest, &n))
        return ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", w->path);
    if (w->total != shard->size || memcmp(digest, shard->sha256, sizeof digest) != 0)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s' changed while being indexed (%llu "
                           "bytes, was %llu; SHA-256 %s)",
                           w->path, (unsigned long long)w->total, (unsigned long long)shard->size,
                           memcmp(digest, shard->sha256, sizeof digest) ? "differs" : "same");
    return ORDO_OK;
}

/* Indexes a shard file; see shards.h. */
ordo_status ordo__shard_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                              ordo_error *err)
{
    if (shard->format == ORDO_FORMAT_JSONL_GZ)
        return ordo__gz_index(path, shard, spec, err);
    if (shard->format == ORDO_FORMAT_PARQUET)
        return ordo__parquet_index(path, shard, spec, err);
    window w = {.path = path, .limit = spec->chunk_limit, .lanes = spec->lanes};
    ordo_status status = ordo__open_regular(path, "shard", &w.fd, err);
    if (status != ORDO_OK)
        return status;
    w.sha = EVP_MD_CTX_new();
    if (!w.sha || !EVP_DigestInit_ex2(w.sha, EVP_sha256(), NULL))
        status = ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", path);
    chunk_list list = {0};
    ordo__counts counts = {0};
    if (status == ORDO_OK)
        status = index_stream(&w, shard->format, spec, &list, &counts, err);
    if (status == ORDO_OK)
        status = same_bytes(&w, shard, err);
    close(w.fd);
    free(w.buf);
    EVP_MD_CTX_free(w.sha);
    if (status != ORDO_OK) {
        free(list.chunks);
        return status;
    }
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = list.chunks;
    shard->chunk_count = list.count;
    shard->counts = counts;
    shard->records = counts.passed;
    shard->skipped = counts.empty;
    shard->aux = NULL;
    shard->aux_size = 0;
    return ORDO_OK;
}
