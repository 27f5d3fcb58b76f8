/* Writing shards (`ordo shard`): .txt, .jsonl, .jsonl.gz / .json.gz and
 * .parquet inputs to multi-frame .jsonl.zst shards, each zstd frame a
 * chunk the readers of this module can read on its own (docs/recipe.md). */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet.h"
#include "shards.h"

typedef struct {
    char **paths;
    size_t count, capacity;
} path_list;

typedef struct {
    ordo_error *err;
    const char *out_dir, *text_field;
    long per_frame, per_shard;
    int level;
    char *frame; /* JSON lines of the frame being filled */
    size_t frame_len, frame_cap;
    long frame_docs, shard_docs, shards, frames, docs, skipped;
    FILE *file;
    char path[4096], temp[4200];
} sharder;

/* nftw has no context pointer: one walk at a time, under walk_lock. */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;
static path_list inputs;
static ordo_error *walk_err;

/* The largest document (a .txt file or a JSON line) the loader can read as
 * one chunk (256 MiB). */
#define MAX_DOC_BYTES ((uint64_t)256 << 20)

/* Inputs are the formats a recipe reads, except shards already zstd
 * compressed (.jsonl.zst: give them to a recipe as they are). */
static int is_input(const char *path)
{
    enum ordo__format format;
    return ordo__format_of(path, &format) == 0 && format != ORDO_FORMAT_JSONL_ZST;
}

static int add_path(const char *path)
{
    if (inputs.count == inputs.capacity) {
        size_t cap = inputs.capacity ? 2 * inputs.capacity : 64;
        char **grown = realloc(inputs.paths, cap * sizeof *grown);
        if (!grown)
            return ordo__error(walk_err, ORDO_NOMEM, "out of memory"), -1;
        inputs.paths = grown;
        inputs.capacity = cap;
    }
    if (!(inputs.paths[inputs.count] = strdup(path)))
        return ordo__error(walk_err, ORDO_NOMEM, "out of memory"), -1;
    inputs.count++;
    return 0;
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_SL || flag == FTW_SLN)
        return ordo__error(walk_err, ORDO_INVALID,
                           "'%s' is a symbolic link; give its target as an "
                           "input instead",
                           path),
               -1;
    if (flag == FTW_DNR || flag == FTW_NS)
        return ordo__error(walk_err, ORDO_IO, "cannot read '%s'", path), -1;
    if (flag == FTW_F && is_input(path) && !S_ISREG(st->st_mode))
        return ordo__error(walk_err, ORDO_INVALID, "input '%s' is not a regular file", path), -1;
    return flag == FTW_F && is_input(path) ? add_path(path) : 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the inputs and refuses a file reached twice (by any path). */
static int no_duplicates(void)
{
    char why[ORDO__ERRNO_TEXT_SIZE];
    char **real = calloc(inputs.count ? inputs.count : 1, sizeof *real);
    int rc = real ? 0 : (ordo__error(walk_err, ORDO_NOMEM, "out of memory"), -1);
    for (size_t i = 0; rc == 0 && i < inputs.count; i++)
        if (!(real[i] = realpath(inputs.paths[i], NULL)))
            rc = (ordo__error(walk_err, ORDO_IO, "cannot read '%s': %s", inputs.paths[i],
                              ordo__errno_text(errno, why)),
                  -1);
    for (size_t i = 0; rc == 0 && i < inputs.count; i++) {
        free(inputs.paths[i]);
        inputs.paths[i] = real[i];
        real[i] = NULL;
    }
    if (rc == 0)
        qsort(inputs.paths, inputs.count, sizeof *inputs.paths, by_path);
    for (size_t i = 1; rc == 0 && i < inputs.count; i++)
        if (strcmp(inputs.paths[i - 1], inputs.paths[i]) == 0)
            rc = (ordo__error(walk_err, ORDO_INVALID, "'%s' is given twice", inputs.paths[i]), -1);
    for (size_t i = 0; real && i < inputs.count; i++)
        free(real[i]);
    free(real);
    return rc;
}

static int collect(const char *const *argv, size_t argc)
{
    char why[ORDO__ERRNO_TEXT_SIZE];
    for (size_t i = 0; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0)
            return ordo__error(walk_err, ORDO_IO, "cannot read '%s': %s", argv[i],
                               ordo__errno_text(errno, why)),
                   -1;
        /* A FIFO or a device (a link to /dev/zero) is refused before any
         * shard is written; opening checks again (ordo_open_regular). */
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
            return ordo__error(walk_err, ORDO_INVALID, "input '%s' is not a regular file", argv[i]),
                   -1;
        if (S_ISDIR(st.st_mode) ? nftw(argv[i], visit, 32, FTW_PHYS) != 0
                                : (!is_input(argv[i]) ? (ordo__error(walk_err, ORDO_INVALID,
                                                                     "'%s' is not "
                                                                     ".txt, .jsonl, .jsonl.gz, "
                                                                     ".json.gz or .parquet",
                                                                     argv[i]),
                                                         1)
                                                      : add_path(argv[i]) != 0))
            return -1;
    }
    return no_duplicates();
}

static int finish_frame(sharder *s)
{
    if (s->frame_docs == 0)
        return 0;
    size_t bound = ZSTD_compressBound(s->frame_len);
    char *out = malloc(bound);
    size_t n = out ? ZSTD_compress(out, bound, s->frame, s->frame_len, s->level) : 0;
    int failed = !out || ZSTD_isError(n) || fwrite(out, 1, n, s->file) != n;
    free(out);
    if (failed)
        return ordo__error(s->err, ORDO_IO, "cannot write '%s'", s->temp), -1;
    s->frames++;
    s->frame_len = 0;
    s->frame_docs = 0;
    return 0;
}

static int close_shard(sharder *s)
{
    if (!s->file)
        return 0;
    int rc = finish_frame(s);
    int closed = fclose(s->file);
    s->file = NULL; /* closed either way: the failure path removes s->temp */
    if (closed != 0 || rc != 0 || rename(s->temp, s->path) != 0)
        return ordo__error(s->err, ORDO_IO, "cannot write '%s'", s->path), -1;
    s->shard_docs = 0;
    s->shards++;
    return 0;
}

static int add_line(sharder *s, const char *line, size_t len)
{
    char why[ORDO__ERRNO_TEXT_SIZE];
    if (!s->file) {
        snprintf(s->path, sizeof s->path, "%s/shard-%05ld.jsonl.zst", s->out_dir, s->shards);
        snprintf(s->temp, sizeof s->temp, "%s.partial", s->path);
        if (!(s->file = fopen(s->temp, "wb")))
            return ordo__error(s->err, ORDO_IO, "cannot create '%s': %s", s->temp,
                               ordo__errno_text(errno, why)),
                   -1;
    }
    if (s->frame_len + len + 1 > s->frame_cap) {
        size_t cap = s->frame_cap ? s->frame_cap : 1 << 16;
        while (cap < s->frame_len + len + 1)
            cap *= 2;
        char *grown = realloc(s->frame, cap);
        if (!grown)
            return ordo__error(s->err, ORDO_NOMEM, "out of memory"), -1;
        s->frame = grown;
        s->frame_cap = cap;
    }
    memcpy(s->frame + s->frame_len, line, len);
    s->frame[s->frame_len + len] = '\n';
    s->frame_len += len + 1;
    s->docs++;
    if (++s->frame_docs == s->per_frame && finish_frame(s) != 0)
        return -1;
    if (++s->shard_docs == s->per_shard)
        return close_shard(s);
    return 0;
}

static int add_text(sharder *s, const char *path, const char *data, size_t len)
{
    json_t *text = json_stringn(data, len);
    if (!text)
        return ordo__error(s->err, ORDO_INVALID, "'%s' is not valid UTF-8 text", path), -1;
    json_t *doc = json_pack("{s:o}", "text", text);
    char *line = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    int rc = line ? add_line(s, line, strlen(line))
                  : (ordo__error(s->err, ORDO_NOMEM, "out of memory"), -1);
    free(line);
    return rc;
}

/* One JSON line: an object whose text field is a string; empty texts
 * are counted and left out. */
static int add_record(sharder *s, const char *path, const char *line, size_t len, uint64_t offset)
{
    json_error_t jerr;
    json_t *doc = json_loadb(line, len, JSON_ALLOW_NUL, &jerr); /* as record.c reads it */
    const json_t *text = ordo__json_path(doc, s->text_field);
    const char *problem = !doc                    ? jerr.text
                          : !json_is_object(doc)  ? "not a JSON object"
                          : !text                 ? "no text field"
                          : json_is_null(text)    ? NULL
                          : !json_is_string(text) ? "its text field is not a string"
                                                  : NULL;
    int empty = !problem && (json_is_null(text) || json_string_length(text) == 0);
    json_decref(doc);
    if (problem)
        return ordo__error(s->err, ORDO_INVALID, "'%s': line at byte %llu: %s%s%s%s", path,
                           (unsigned long long)offset, problem, text || !doc ? "" : " ('",
                           text || !doc ? "" : s->text_field, text || !doc ? "" : "')"),
               -1;
    if (empty)
        return s->skipped++, 0;
    return add_line(s, line, len);
}

/* One line of a .jsonl input (offset: of its first byte in the records). */
static int add_jsonl_line(sharder *s, const char *path, char *line, size_t n, uint64_t offset)
{
    size_t stop = n;
    while (stop > 0 && (line[stop - 1] == '\n' || line[stop - 1] == '\r' || line[stop - 1] == ' ' ||
                        line[stop - 1] == '\t'))
        stop--;
    if ((uint64_t)stop > MAX_DOC_BYTES)
        return ordo__error(s->err, ORDO_INVALID,
                           "'%s': line at byte %llu is longer than %llu bytes", path,
                           (unsigned long long)offset, (unsigned long long)MAX_DOC_BYTES),
               -1;
    if (stop > 0)
        return add_record(s, path, line, stop, offset);
    s->skipped++;
    return 0;
}

/* .jsonl.gz / .json.gz: the decompressed lines (every member in turn),
 * with memory bounded by the longest line allowed. */
/* The gzip file checked whole first, as a recipe's reader checks it
 * (every member's CRC32 and length, nothing after the last member): zlib's
 * gzread below would pass over bytes after the last member unseen. */
static int gzip_whole(sharder *s, const char *path)
{
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_JSONL_GZ};
    ordo__index_spec spec = {
        .read = {s->text_field, NULL, 0, 0}, .chunk_limit = ORDO__CHUNK_MAX, .lanes = 1};
    ordo_status status = ordo__sha256_file(path, shard.sha256, &shard.size, s->err);
    if (status == ORDO_OK)
        status = ordo__shard_index(path, &shard, &spec, s->err);
    free(shard.chunks);
    free(shard.aux);
    return status == ORDO_OK ? 0 : -1;
}

static int add_gzip(sharder *s, const char *path, FILE *f)
{
    if (gzip_whole(s, path) != 0)
        return -1;
    gzFile gz = gzdopen(dup(fileno(f)), "rb");
    if (!gz)
        return ordo__error(s->err, ORDO_NOMEM, "out of memory reading '%s'", path), -1;
    gzbuffer(gz, 1 << 17);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    uint64_t offset = 0; /* of buf[0] in the decompressed records */
    int rc = buf ? 0 : (ordo__error(s->err, ORDO_NOMEM, "out of memory"), -1), eof = 0;
    while (rc == 0 && !eof) {
        if (len == cap) {
            if ((uint64_t)cap > MAX_DOC_BYTES + 2) {
                rc = (ordo__error(s->err, ORDO_INVALID,
                                  "'%s': line at byte %llu of its content is longer than %llu "
                                  "bytes",
                                  path, (unsigned long long)offset,
                                  (unsigned long long)MAX_DOC_BYTES),
                      -1);
                break;
            }
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                rc = (ordo__error(s->err, ORDO_NOMEM, "out of memory"), -1);
                break;
            }
            buf = grown;
        }
        int got = gzread(gz, buf + len, (unsigned)(cap - len > (1u << 30) ? 1u << 30 : cap - len));
        int zerr = Z_OK;
        const char *why = gzerror(gz, &zerr);
        if (got < 0 || zerr != Z_OK || (got == 0 && !gzeof(gz))) {
            rc = (ordo__error(s->err, ORDO_INVALID,
                              "'%s': corrupt gzip data near byte %lld of the file (%s)", path,
                              (long long)gzoffset(gz), why ? why : "truncated"),
                  -1);
            break;
        }
        eof = got == 0;
        len += (size_t)(got > 0 ? got : 0);
        size_t start = 0;
        for (;;) {
            char *nl = memchr(buf + start, '\n', len - start);
            if (!nl && !(eof && start < len))
                break;
            size_t end = nl ? (size_t)(nl - buf) + 1 : len;
            rc = add_jsonl_line(s, path, buf + start, end - start, offset + start);
            start = end;
            if (rc != 0 || start == len)
                break;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        offset += start;
    }
    free(buf);
    gzclose(gz);
    return rc;
}

/* .parquet: every row becomes a JSON line holding all its columns that
 * JSON can hold (not under a repeated field), struct columns as nested
 * objects, nulls as null; a row whose text (at the text field) is null
 * or empty is counted and left out. */
typedef struct {
    sharder *s;
    const char *path;
    const char *const *columns;
    size_t count;
    int rc;
} parquet_rows;

static int parquet_fail(parquet_rows *p, uint64_t row, const char *column, const char *what)
{
    ordo__error(p->s->err, ORDO_INVALID, "'%s': row %llu, column '%s': %s", p->path,
                (unsigned long long)row, column, what);
    return p->rc = -1;
}

/* Sets `value` (stolen) at a dotted path of `object`, making the objects
 * on the way. */
static int set_path(json_t *object, const char *path, json_t *value)
{
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        json_t *inner = json_object_getn(object, path, (size_t)(dot - path));
        if (!inner) {
            inner = json_object();
            if (!inner || json_object_setn_new(object, path, (size_t)(dot - path), inner) != 0)
                return json_decref(value), -1;
        }
        if (!json_is_object(inner))
            return json_decref(value), -1;
        object = inner;
        path = dot + 1;
    }
    return json_object_set_new(object, path, value);
}

static json_t *value_json(const ordo__field_value *v)
{
    switch (v->kind) {
    case ORDO__VALUE_BOOL: return json_boolean(v->b);
    case ORDO__VALUE_INT: return json_integer((json_int_t)v->i);
    case ORDO__VALUE_DOUBLE:
        return json_real(v->d); /* NULL for NaN and infinities: JSON has none */
    case ORDO__VALUE_STRING:
        return json_stringn(v->s, v->len); /* NULL for bytes that are not UTF-8 */
    default: return json_null();
    }
}

static int add_parquet_row(void *context, uint64_t row, const ordo__field_value *values)
{
    parquet_rows *p = context;
    json_t *record = json_object();
    if (!record)
        return parquet_fail(p, row, p->columns[0], "out of memory");
    for (size_t c = 0; c < p->count; c++) {
        json_t *value = value_json(&values[c]);
        if (!value || set_path(record, p->columns[c], value) != 0) {
            json_decref(record);
            return parquet_fail(p, row, p->columns[c],
                                values[c].kind == ORDO__VALUE_STRING ? "not valid UTF-8"
                                : values[c].kind == ORDO__VALUE_DOUBLE
                                    ? "a NaN or an infinity, which JSON cannot hold"
                                    : "cannot be written as JSON");
        }
    }
    const json_t *text = ordo__json_path(record, p->s->text_field);
    if (!json_is_string(text) || json_string_length(text) == 0) {
        json_decref(record);
        p->s->skipped++;
        return 0;
    }
    char *line = json_dumps(record, JSON_COMPACT);
    json_decref(record);
    p->rc = line ? add_line(p->s, line, strlen(line))
                 : parquet_fail(p, row, p->columns[0], "out of memory");
    free(line);
    return p->rc != 0;
}

static int add_parquet(sharder *s, const char *path)
{
    int fd = -1;
    uint64_t size = 0;
    ordo__pq_meta meta = {0};
    ordo_status status = ordo__pq_open(path, &fd, &size, &meta, s->err);
    if (fd >= 0)
        close(fd);
    const char **columns = status == ORDO_OK ? calloc(meta.leaf_count + 1, sizeof *columns) : NULL;
    size_t count = 0;
    int has_text = 0;
    for (size_t i = 0; columns && i < meta.leaf_count; i++) {
        const ordo__pq_leaf *leaf = &meta.leaves[i];
        if (leaf->repeated || leaf->type == ORDO__PQ_INT96 ||
            leaf->type == ORDO__PQ_FIXED_LEN_BYTE_ARRAY)
            continue;
        has_text |= strcmp(leaf->path, s->text_field) == 0;
        columns[count++] = leaf->path;
    }
    if (status == ORDO_OK && !columns)
        status = ordo__error(s->err, ORDO_NOMEM, "out of memory");
    else if (status == ORDO_OK && !has_text)
        status =
            ordo__error(s->err, ORDO_INVALID, "'%s' has no text column '%s'", path, s->text_field);
    parquet_rows rows = {s, path, columns, count, 0};
    if (status == ORDO_OK)
        status = ordo__pq_scan_columns(path, columns, count, add_parquet_row, &rows, s->err);
    free(columns);
    ordo__pq_meta_free(&meta);
    return status == ORDO_OK && rows.rc == 0 ? 0 : -1;
}

/* .jsonl, a line at a time. */
static int add_jsonl(sharder *s, const char *path, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    uint64_t offset = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        rc = add_jsonl_line(s, path, line, (size_t)n, offset);
        offset += (uint64_t)n;
    }
    free(line);
    return rc;
}

/* .txt: the whole file is one document. */
static int add_txt(sharder *s, const char *path, FILE *f)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size > MAX_DOC_BYTES)
        return ordo__error(s->err, ORDO_INVALID, "'%s' is larger than %llu bytes", path,
                           (unsigned long long)MAX_DOC_BYTES),
               -1;
    size_t size = (size_t)st.st_size;
    char *data = malloc(size + 1);
    size_t len = data ? fread(data, 1, size + 1, f) : 0;
    int rc = !data ? (ordo__error(s->err, ORDO_NOMEM, "out of memory"), -1)
             : len != size
                 ? (ordo__error(s->err, ORDO_IO, "'%s' changed while being read", path), -1)
             : len ? add_text(s, path, data, len)
                   : (s->skipped++, 0);
    free(data);
    return rc;
}

static int add_file(sharder *s, const char *path)
{
    int fd = -1;
    if (ordo_open_regular(path, "input", &fd, s->err) != ORDO_OK)
        return -1;
    FILE *f = fdopen(fd, "rb");
    if (!f)
        return close(fd), ordo__error(s->err, ORDO_IO, "cannot read '%s'", path), -1;
    enum ordo__format format = ORDO_FORMAT_JSONL;
    ordo__format_of(path, &format);
    int rc = format == ORDO_FORMAT_TXT        ? add_txt(s, path, f)
             : format == ORDO_FORMAT_JSONL_GZ ? add_gzip(s, path, f)
             : format == ORDO_FORMAT_PARQUET  ? add_parquet(s, path)
                                              : add_jsonl(s, path, f);
    if (rc == 0 && ferror(f))
        rc = (ordo__error(s->err, ORDO_IO, "cannot read '%s'", path), -1);
    fclose(f);
    return rc;
}

/* On failure: the shards this call wrote go, so nothing half-made stays. */
static void remove_written(const sharder *s)
{
    char path[4200];
    for (long i = 0; i < s->shards; i++) {
        snprintf(path, sizeof path, "%s/shard-%05ld.jsonl.zst", s->out_dir, i);
        remove(path);
    }
}

static int has_shards(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        found |= strncmp(e->d_name, "shard-", 6) == 0;
    if (d)
        closedir(d);
    return found;
}

static ordo_status check_options(const ordo_shard_options *o, ordo_error *err)
{
    if (!o || !o->out_dir || !*o->out_dir)
        return ordo__error(err, ORDO_INVALID, "shards need an output folder");
    if (o->docs_per_frame < 0 || o->docs_per_frame > 1 << 24)
        return ordo__error(err, ORDO_INVALID, "documents per frame must be 1 to %d, not %ld",
                           1 << 24, o->docs_per_frame);
    if (o->docs_per_shard < 0 || o->docs_per_shard > 1L << 40)
        return ordo__error(err, ORDO_INVALID, "documents per shard must be 1 to %ld, not %ld",
                           1L << 40, o->docs_per_shard);
    if (o->level < 0 || o->level > 19)
        return ordo__error(err, ORDO_INVALID, "the zstd level must be 1 to 19, not %d", o->level);
    return ORDO_OK;
}

/* Shards every input into the frames and files the options ask for; see
 * ordo.h. On failure every shard this call wrote is removed. */
static ordo_status write_all(sharder *s, const char *const *paths, size_t count,
                             ordo_shard_summary *summary)
{
    int rc = collect(paths, count);
    if (rc == 0 && inputs.count == 0)
        rc = (ordo__error(s->err, ORDO_INVALID,
                          "no .txt, .jsonl, .jsonl.gz, .json.gz or .parquet files in the inputs"),
              -1);
    for (size_t i = 0; rc == 0 && i < inputs.count; i++)
        rc = add_file(s, inputs.paths[i]);
    if (rc == 0)
        rc = close_shard(s);
    if (rc == 0 && summary)
        *summary = (ordo_shard_summary){.files = inputs.count,
                                        .docs = s->docs,
                                        .skipped = s->skipped,
                                        .shards = s->shards,
                                        .frames = s->frames};
    if (rc != 0) {
        if (s->file)
            fclose(s->file);
        remove(s->temp); /* the shard being written, if any */
        remove_written(s);
        if (s->err->status == ORDO_OK) /* a walk that failed without saying why */
            ordo__error(s->err, ORDO_IO, "cannot read the inputs");
    }
    for (size_t i = 0; i < inputs.count; i++)
        free(inputs.paths[i]);
    free(inputs.paths);
    inputs = (path_list){0};
    return rc == 0 ? ordo__ok(s->err) : s->err->status;
}

/* Writes shards from .txt/.jsonl files and folders; see ordo.h. */
ordo_status ordo_shard_write(const ordo_shard_options *options, const char *const *inputs_given,
                             size_t count, ordo_shard_summary *summary, ordo_error *err)
{
    ordo_error own;
    err = err ? err : &own;
    ordo_status status = check_options(options, err);
    if (status != ORDO_OK)
        return status;
    sharder s = {.err = err,
                 .out_dir = options->out_dir,
                 .text_field = options->text_field ? options->text_field : "text",
                 .per_frame = options->docs_per_frame ? options->docs_per_frame : 64,
                 .per_shard = options->docs_per_shard ? options->docs_per_shard : 65536,
                 .level = options->level ? options->level : 3};
    char why[ORDO__ERRNO_TEXT_SIZE];
    ordo__ok(err);
    pthread_mutex_lock(&walk_lock); /* one call at a time, the folder check included */
    if (mkdir(s.out_dir, 0755) != 0 && errno != EEXIST)
        status = ordo__error(err, ORDO_IO, "cannot create '%s': %s", s.out_dir,
                             ordo__errno_text(errno, why));
    else if (has_shards(s.out_dir))
        status = ordo__error(err, ORDO_INVALID, "'%s' already holds shards; choose an empty folder",
                             s.out_dir);
    else {
        walk_err = err;
        status = write_all(&s, inputs_given, count, summary);
        walk_err = NULL;
    }
    pthread_mutex_unlock(&walk_lock);
    free(s.frame);
    return status;
}
