/* Indexing one shard: its chunk table, validating every record. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "record.h"
#include "shard_index.h"

typedef struct {
    ordo__chunk *chunks;
    uint32_t count, capacity;
} chunk_list;

static ordo_status push_chunk(chunk_list *list, ordo__chunk chunk, ordo_error *err)
{
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

/* Plain .jsonl: every `per_chunk` lines (blank ones included) are a chunk. */
static ordo_status index_jsonl(const char *path, const char *data, size_t size,
                               const char *field, int per_chunk, chunk_list *list,
                               uint64_t *records, uint64_t *skipped, ordo_error *err)
{
    size_t start = 0;
    while (start < size) {
        size_t end = start;
        for (int lines = 0; lines < per_chunk && end < size; lines++) {
            const char *newline = memchr(data + end, '\n', size - end);
            end = newline ? (size_t)(newline - data) + 1 : size;
        }
        ordo__origin origin = {path, UINT64_MAX, start};
        uint64_t kept = 0, dropped = 0;
        ordo_status status = ordo__scan_records(ORDO_FORMAT_JSONL, data + start, end - start,
                                                field, &origin, NULL, NULL, &kept, &dropped, err);
        if (status == ORDO_OK && kept > 0)
            status = push_chunk(list, (ordo__chunk){start, end - start, end - start,
                                                    (uint32_t)kept}, err);
        if (status != ORDO_OK)
            return status;
        *records += kept;
        *skipped += dropped;
        start = end;
    }
    return ORDO_OK;
}

/* Decompresses one frame; ordo's shards record their content size. */
static ordo_status frame_content(const char *path, const char *frame, size_t csize,
                                 uint64_t offset, char **out, size_t *len, ordo_error *err)
{
    unsigned long long size = ZSTD_getFrameContentSize(frame, csize);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size >= (1ull << 34))
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': zstd frame at byte %llu does not record its content "
                           "size (write shards with 'ordo shard')", path,
                           (unsigned long long)offset);
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
    uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24;
    return (magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* .jsonl.zst: every zstd frame is a chunk; skippable frames are passed. */
static ordo_status index_zst(const char *path, const char *data, size_t size, const char *field,
                             chunk_list *list, uint64_t *records, uint64_t *skipped,
                             ordo_error *err)
{
    size_t offset = 0;
    while (offset < size) {
        size_t csize = ZSTD_findFrameCompressedSize(data + offset, size - offset);
        if (ZSTD_isError(csize))
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': zstd frame at byte %zu is truncated or corrupt (%s)",
                               path, offset, ZSTD_getErrorName(csize));
        if (skippable(data + offset, size - offset)) {
            offset += csize;
            continue;
        }
        char *content = NULL;
        size_t len = 0;
        ordo_status status = frame_content(path, data + offset, csize, offset, &content, &len, err);
        ordo__origin origin = {path, offset, 0};
        uint64_t kept = 0, dropped = 0;
        if (status == ORDO_OK)
            status = ordo__scan_records(ORDO_FORMAT_JSONL_ZST, content, len, field, &origin, NULL,
                                        NULL, &kept, &dropped, err);
        free(content);
        if (status == ORDO_OK && kept > 0)
            status = push_chunk(list, (ordo__chunk){offset, csize, len, (uint32_t)kept}, err);
        if (status != ORDO_OK)
            return status;
        *records += kept;
        *skipped += dropped;
        offset += csize;
    }
    return ORDO_OK;
}

static ordo_status index_mapped(const char *path, const char *data, size_t size,
                                enum ordo__format format, const char *field, int per_chunk,
                                ordo__shard *shard, ordo_error *err)
{
    chunk_list list = {0};
    uint64_t records = 0, skipped = 0;
    ordo_status status = ORDO_OK;
    if (format == ORDO_FORMAT_JSONL)
        status = index_jsonl(path, data, size, field, per_chunk, &list, &records, &skipped, err);
    else if (format == ORDO_FORMAT_JSONL_ZST)
        status = index_zst(path, data, size, field, &list, &records, &skipped, err);
    else {
        ordo__origin origin = {path, UINT64_MAX, 0};
        status = ordo__scan_records(ORDO_FORMAT_TXT, data, size, field, &origin, NULL, NULL,
                                    &records, &skipped, err);
        if (status == ORDO_OK && records)
            status = push_chunk(&list, (ordo__chunk){0, size, size, 1}, err);
    }
    if (status != ORDO_OK) {
        free(list.chunks);
        return status;
    }
    free(shard->chunks);
    shard->chunks = list.chunks;
    shard->chunk_count = list.count;
    shard->records = records;
    shard->skipped = skipped;
    return ORDO_OK;
}

/* Indexes a shard file; see shard_index.h. */
ordo_status ordo__shard_index(const char *path, ordo__shard *shard, const char *field,
                              int per_chunk, ordo_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ordo__error(err, ORDO_IO, "cannot open shard '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return ordo__error(err, ORDO_IO, "cannot stat shard '%s': %s", path, strerror(errno));
    }
    size_t size = (size_t)st.st_size;
    if ((uint64_t)st.st_size != shard->size) {
        close(fd);
        return ordo__error(err, ORDO_CONFLICT, "shard '%s' changed while being read (%llu bytes, "
                                               "was %llu)", path, (unsigned long long)st.st_size,
                           (unsigned long long)shard->size);
    }
    const char *data = "";
    if (size > 0) {
        data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
            close(fd);
            return ordo__error(err, ORDO_IO, "cannot map shard '%s': %s", path, strerror(errno));
        }
    }
    close(fd);
    ordo_status status = index_mapped(path, data, size, shard->format, field, per_chunk, shard, err);
    if (size > 0)
        munmap((void *)data, size);
    return status;
}
