/* Records: JSON lines and plain text documents, and reading one chunk. */
#define _DEFAULT_SOURCE /* pread */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "shards.h"

static ordo_status record_error(const ordo__origin *origin, uint64_t offset, uint64_t line,
                                ordo_error *err, const char *what, const char *detail)
{
    char where[64];
    if (origin->line)
        snprintf(where, sizeof where, "line %llu", (unsigned long long)(origin->line + line));
    else
        snprintf(where, sizeof where, "line %llu of the chunk", (unsigned long long)(line + 1));
    if (origin->frame == UINT64_MAX)
        return ordo__error(err, ORDO_INVALID, "shard '%s': %s, record at byte %llu: %s%s",
                           origin->path, where, (unsigned long long)(origin->base + offset), what,
                           detail);
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': %s, zstd frame at byte %llu, record at byte %llu of its "
                       "content: %s%s",
                       origin->path, where, (unsigned long long)origin->frame,
                       (unsigned long long)(origin->base + offset), what, detail);
}

static int blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return 0;
    return 1;
}

/* One JSON line: its text field, or why not. */
static ordo_status scan_line(const char *line, size_t len, uint64_t offset, uint64_t number,
                             const char *field, const ordo__origin *origin, ordo__doc_fn fn,
                             void *context, uint64_t *kept, uint64_t *skipped, int *stop,
                             ordo_error *err)
{
    if (blank(line, len)) {
        (*skipped)++;
        return ORDO_OK;
    }
    json_error_t jerr;
    json_t *record = json_loadb(line, len, 0, &jerr);
    if (!record) {
        char detail[200];
        snprintf(detail, sizeof detail, " (column %d: %s)", jerr.column, jerr.text);
        return record_error(origin, offset, number, err, "invalid JSON", detail);
    }
    json_t *text = json_object_get(record, field);
    ordo_status status = ORDO_OK;
    if (!json_is_object(record))
        status = record_error(origin, offset, number, err, "not a JSON object", "");
    else if (!text)
        status = record_error(origin, offset, number, err, "no text field ", field);
    else if (!json_is_string(text))
        status = record_error(origin, offset, number, err, "text field is not a string: ", field);
    else if (json_string_length(text) == 0)
        (*skipped)++;
    else {
        (*kept)++;
        *stop = fn && fn(context, json_string_value(text), json_string_length(text));
    }
    json_decref(record);
    return status;
}

static ordo_status scan_lines(const char *data, size_t len, const char *field,
                              const ordo__origin *origin, ordo__doc_fn fn, void *context,
                              uint64_t *kept, uint64_t *skipped, ordo_error *err)
{
    size_t start = 0;
    uint64_t number = 0; /* lines before this one in the buffer */
    int stop = 0;
    while (start < len && !stop) {
        const char *newline = memchr(data + start, '\n', len - start);
        size_t end = newline ? (size_t)(newline - data) : len;
        ordo_status status = scan_line(data + start, end - start, start, number, field, origin, fn,
                                       context, kept, skipped, &stop, err);
        if (status != ORDO_OK)
            return status;
        start = end + 1;
        number++;
    }
    return ORDO_OK;
}

/* Splits a buffer into documents; see shards.h. */
ordo_status ordo__scan_records(enum ordo__format format, const char *data, size_t len,
                               const char *text_field, const ordo__origin *origin, ordo__doc_fn fn,
                               void *context, uint64_t *records, uint64_t *skipped, ordo_error *err)
{
    uint64_t kept = 0, dropped = 0;
    ordo_status status = ORDO_OK;
    if (format != ORDO_FORMAT_TXT) {
        status = scan_lines(data, len, text_field, origin, fn, context, &kept, &dropped, err);
    } else if (len == 0) {
        dropped = 1;
    } else {
        json_t *probe = json_stringn(data, len); /* NULL: not valid UTF-8 */
        if (!probe)
            status =
                ordo__error(err, ORDO_INVALID, "shard '%s': not valid UTF-8 text", origin->path);
        json_decref(probe);
        if (status == ORDO_OK) {
            kept = 1;
            if (fn)
                fn(context, data, len);
        }
    }
    if (records)
        *records = kept;
    if (skipped)
        *skipped = dropped;
    return status;
}

static ordo_status decompress(const char *path, const ordo__chunk *chunk, const char *in,
                              char **data, size_t *len, ordo_error *err)
{
    char *out = malloc(chunk->raw_length ? chunk->raw_length : 1);
    if (!out)
        return ordo__error(err, ORDO_NOMEM, "out of memory decompressing '%s'", path);
    size_t n = ZSTD_decompress(out, chunk->raw_length, in, chunk->length);
    if (ZSTD_isError(n) || n != chunk->raw_length) {
        free(out);
        return ordo__error(err, ORDO_INVALID, "shard '%s': zstd frame at byte %llu: %s", path,
                           (unsigned long long)chunk->offset,
                           ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from its index");
    }
    *data = out;
    *len = n;
    return ORDO_OK;
}

int ordo__verify_chunk_digests = 1;

/* The bytes read must be the bytes indexed (docs/recipe.md, "Shards and
 * chunks"). */
static ordo_status same_chunk(const char *path, const ordo__chunk *chunk, uint32_t index,
                              const char *raw, ordo_error *err)
{
    unsigned char now[ORDO_DIGEST_SIZE];
    ordo_sha256(raw, (size_t)chunk->length, now);
    if (memcmp(now, chunk->digest, ORDO_DIGEST_SIZE) == 0)
        return ORDO_OK;
    char was[ORDO_DIGEST_HEX_SIZE], is[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(chunk->digest, was);
    ordo_digest_to_hex(now, is);
    return ordo__error(err, ORDO_CONFLICT, "shard '%s" ORDO__CHUNK_CHANGED ORDO__CHUNK_CHANGED_REST,
                       path, index, (unsigned long long)chunk->length,
                       (unsigned long long)chunk->offset, was, is);
}

/* pread of the chunk's bytes, checked, decompressed when zstd. */
ordo_status ordo__chunk_load(const char *path, enum ordo__format format, const ordo__chunk *chunk,
                             uint32_t index, char **data, size_t *len, ordo_error *err)
{
    *data = NULL;
    *len = 0;
    int fd = -1;
    ordo_status opened = ordo__open_regular(path, "shard", &fd, err);
    if (opened != ORDO_OK)
        return opened;
    char *raw = malloc(chunk->length ? chunk->length : 1);
    ordo_status status = raw ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory");
    size_t got = 0;
    while (status == ORDO_OK && got < chunk->length) {
        ssize_t n = pread(fd, raw + got, chunk->length - got, (off_t)(chunk->offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            status =
                ordo__error(err, ORDO_IO, "shard '%s': cannot read %llu bytes at %llu%s", path,
                            (unsigned long long)chunk->length, (unsigned long long)chunk->offset,
                            n == 0 ? " (file is shorter than its index)" : "");
        else
            got += (size_t)n;
    }
    close(fd);
    if (status == ORDO_OK && ordo__verify_chunk_digests)
        status = same_chunk(path, chunk, index, raw, err);
    if (status == ORDO_OK && format == ORDO_FORMAT_JSONL_ZST) {
        status = decompress(path, chunk, raw, data, len, err);
        free(raw);
        return status;
    }
    if (status != ORDO_OK) {
        free(raw);
        return status;
    }
    *data = raw;
    *len = chunk->length;
    return ORDO_OK;
}
