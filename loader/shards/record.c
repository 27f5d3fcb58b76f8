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
                       "shard '%s': %s, %s at byte %llu, record at byte %llu of its "
                       "content: %s%s",
                       origin->path, where, origin->kind ? origin->kind : "zstd frame",
                       (unsigned long long)origin->frame,
                       (unsigned long long)(origin->base + offset), what, detail);
}

static int blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return 0;
    return 1;
}

/* Decides one record; see shards.h. */
ordo_status ordo__record_decide(const ordo__read_spec *spec, const char *text, size_t len,
                                ordo__field_fn get, void *context, int *keep, ordo__counts *counts,
                                ordo_error *err)
{
    *keep = 0;
    counts->read++;
    if (!text || len == 0) {
        counts->empty++;
        return ORDO_OK;
    }
    int pass = 1;
    if (spec->filter) {
        ordo_status status = ordo__filter_eval(spec->filter, len, get, context, &pass, err);
        if (status != ORDO_OK)
            return status;
    }
    if (pass)
        counts->passed++;
    else
        counts->filtered++;
    *keep = pass;
    return ORDO_OK;
}

/* A JSON record's fields for the filter. */
typedef struct {
    const json_t *record;
    const ordo__filter *filter;
} json_fields;

static ordo_status json_field(void *context, uint32_t field, ordo__field_value *out,
                              ordo_error *err)
{
    (void)err;
    const json_fields *f = context;
    ordo__json_value(ordo__json_path(f->record, ordo__filter_field(f->filter, field)), out);
    return ORDO_OK;
}

static ordo_status no_fields(void *context, uint32_t field, ordo__field_value *out, ordo_error *err)
{
    (void)context, (void)field, (void)err;
    *out = (ordo__field_value){.kind = ORDO__VALUE_MISSING};
    return ORDO_OK;
}

/* The decoded text of the fast path, kept across the lines of one scan. */
typedef struct {
    char *data;
    size_t capacity;
} ordo__scratch;

/* One JSON line: its text field, or why not. */
static ordo_status scan_line(const char *line, size_t len, uint64_t offset, uint64_t number,
                             const ordo__read_spec *spec, const ordo__origin *origin,
                             ordo__doc_fn fn, void *context, ordo__counts *counts, int *stop,
                             ordo__scratch *scratch, ordo_error *err)
{
    if (blank(line, len)) {
        counts->read++;
        counts->empty++;
        return ORDO_OK;
    }
    const char *fast = NULL;
    size_t fast_len = 0;
    if (!spec->filter && ordo__json_text_fast(line, len, spec->text_field, &scratch->data,
                                              &scratch->capacity, &fast, &fast_len)) {
        int keep = 0;
        ordo_status status =
            ordo__record_decide(spec, fast, fast_len, no_fields, NULL, &keep, counts, err);
        if (status == ORDO_OK && keep)
            *stop = fn && fn(context, fast, fast_len, counts->read - 1);
        return status;
    }
    json_error_t jerr;
    /* \u0000 is valid JSON and occurs in crawled text: texts are kept with
     * their length, never as C strings */
    json_t *record = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
    if (!record) {
        char detail[200];
        snprintf(detail, sizeof detail, " (column %d: %s)", jerr.column, jerr.text);
        return record_error(origin, offset, number, err, "invalid JSON", detail);
    }
    const json_t *text = ordo__json_path(record, spec->text_field);
    ordo_status status = ORDO_OK;
    if (!json_is_object(record))
        status = record_error(origin, offset, number, err, "not a JSON object", "");
    else if (!text)
        status = record_error(origin, offset, number, err, "no text field ", spec->text_field);
    else if (!json_is_string(text) && !json_is_null(text))
        status = record_error(origin, offset, number, err,
                              "text field is not a string: ", spec->text_field);
    int keep = 0;
    json_fields fields = {record, spec->filter};
    if (status == ORDO_OK) {
        const char *value = json_is_string(text) ? json_string_value(text) : NULL;
        size_t bytes = value ? json_string_length(text) : 0;
        status = ordo__record_decide(spec, value, bytes, json_field, &fields, &keep, counts, err);
        if (status != ORDO_OK) {
            char detail[ORDO_ERROR_MESSAGE_SIZE];
            snprintf(detail, sizeof detail, "%s", err->message);
            status = record_error(origin, offset, number, err, "filter: ", detail);
        } else if (keep) {
            *stop = fn && fn(context, value, bytes, counts->read - 1);
        }
    }
    json_decref(record);
    return status;
}

static ordo_status scan_lines(const char *data, size_t len, const ordo__read_spec *spec,
                              const ordo__origin *origin, ordo__doc_fn fn, void *context,
                              ordo__counts *counts, ordo_error *err)
{
    size_t start = 0;
    uint64_t number = 0; /* lines before this one in the buffer */
    int stop = 0;
    ordo__scratch scratch = {NULL, 0};
    ordo_status status = ORDO_OK;
    while (start < len && !stop) {
        const char *newline = memchr(data + start, '\n', len - start);
        size_t end = newline ? (size_t)(newline - data) : len;
        if (number < spec->skip_records) { /* see ordo__read_spec */
            counts->read++;
            start = end + 1;
            number++;
            continue;
        }
        status = scan_line(data + start, end - start, start, number, spec, origin, fn, context,
                           counts, &stop, &scratch, err);
        if (status != ORDO_OK)
            break;
        start = end + 1;
        number++;
    }
    free(scratch.data);
    return status;
}

/* Splits a buffer into documents; see shards.h. Record numbers passed to
 * `fn` count from the first record of this call. */
ordo_status ordo__scan_records(enum ordo__format format, const char *data, size_t len,
                               const ordo__read_spec *spec, const ordo__origin *origin,
                               ordo__doc_fn fn, void *context, ordo__counts *counts,
                               ordo_error *err)
{
    ordo__counts here = {0};
    ordo_status status = ORDO_OK;
    if (format != ORDO_FORMAT_TXT) {
        status = scan_lines(data, len, spec, origin, fn, context, &here, err);
    } else {
        json_t *probe = len ? json_stringn(data, len) : NULL; /* NULL: not valid UTF-8 */
        if (len && !probe)
            status =
                ordo__error(err, ORDO_INVALID, "shard '%s': not valid UTF-8 text", origin->path);
        json_decref(probe);
        int keep = 0;
        if (status == ORDO_OK)
            status = ordo__record_decide(spec, data, len, no_fields, NULL, &keep, &here, err);
        if (status == ORDO_OK && keep && fn)
            fn(context, data, len, 0);
    }
    if (counts) {
        counts->read += here.read;
        counts->passed += here.passed;
        counts->filtered += here.filtered;
        counts->empty += here.empty;
    }
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
 * chunks"); see shards.h. */
ordo_status ordo__chunk_check(const char *path, const ordo__chunk *chunk, uint32_t index,
                              const unsigned char *raw, ordo_error *err)
{
    if (!ordo__verify_chunk_digests)
        return ORDO_OK;
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
    if (status == ORDO_OK)
        status = ordo__chunk_check(path, chunk, index, (const unsigned char *)raw, err);
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
