/* Reading every row of chosen Parquet columns, row group by row group,
 * through the decoding the chunk reader uses: what the conformance tests
 * and the fuzz target compare against a real writer's files. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parquet.h"

typedef struct {
    const char *path;
    int fd;
    uint64_t size;
    ordo__pq_meta meta;
    const char *const *columns;
    size_t count;
    ordo__pq_reader *readers; /* per asked column; column NULL: not in the file */
    size_t *cursor;
} scan;

/* Decodes one column chunk whole (at most ORDO__CHUNK_MAX bytes). */
static ordo_status read_column(scan *s, const ordo__pq_group *g, size_t asked, ordo_error *err)
{
    size_t leaf = 0;
    const ordo__pq_leaf *l = ordo__pq_find(&s->meta, s->columns[asked], &leaf);
    ordo__pq_reader *r = &s->readers[asked];
    ordo__pq_reader_free(r);
    *r = (ordo__pq_reader){0};
    if (!l)
        return ORDO_OK;
    ordo_status status = ordo__pq_usable(s->path, l, 0, err);
    uint64_t start = 0, end = 0;
    if (status == ORDO_OK)
        status = ordo__pq_column_range(s->path, l, &g->columns[leaf], s->size, &start, &end, err);
    if (status == ORDO_OK && end - start > ORDO__CHUNK_MAX)
        status = ordo__error(err, ORDO_INVALID, "shard '%s': column '%s' has a chunk of %llu bytes",
                             s->path, l->path, (unsigned long long)(end - start));
    if (status != ORDO_OK)
        return status;
    *r = (ordo__pq_reader){.path = s->path,
                           .column = l->path,
                           .type = l->type,
                           .codec = g->columns[leaf].codec,
                           .max_def = l->max_def,
                           .limit = ORDO__CHUNK_MAX};
    unsigned char *bytes = malloc(end - start ? (size_t)(end - start) : 1);
    if (!bytes)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", s->path);
    status = ordo__pq_pread(s->fd, s->path, start, bytes, (size_t)(end - start), err);
    if (status == ORDO_OK)
        status = ordo__pq_read_pages(r, bytes, (size_t)(end - start), start, err);
    ordo_status owned = ordo__pq_reader_own(r, bytes, err); /* values may point into it */
    if (status == ORDO_OK)
        status = owned;
    if (status == ORDO_OK && r->rows != (size_t)g->num_rows)
        status = ordo__error(err, ORDO_INVALID,
                             "shard '%s': column '%s' has %zu rows in a row group of %lld", s->path,
                             l->path, r->rows, (long long)g->num_rows);
    s->cursor[asked] = 0;
    return status;
}

static void row_value(scan *s, size_t asked, size_t row, ordo__field_value *out)
{
    ordo__pq_reader *r = &s->readers[asked];
    *out = (ordo__field_value){.kind = r->column ? ORDO__VALUE_NULL : ORDO__VALUE_MISSING};
    if (!r->column || !r->present[row])
        return;
    size_t k = s->cursor[asked]++;
    const unsigned char *v = r->fixed ? r->fixed + k * (size_t)ordo__pq_width(r->type) : NULL;
    int32_t i32 = 0;
    float f = 0;
    switch (r->type) {
    case ORDO__PQ_BOOLEAN: *out = (ordo__field_value){.kind = ORDO__VALUE_BOOL, .b = v[0]}; break;
    case ORDO__PQ_INT32:
        memcpy(&i32, v, 4);
        *out = (ordo__field_value){.kind = ORDO__VALUE_INT, .i = i32};
        break;
    case ORDO__PQ_INT64: out->kind = ORDO__VALUE_INT, memcpy(&out->i, v, 8); break;
    case ORDO__PQ_FLOAT:
        memcpy(&f, v, 4);
        *out = (ordo__field_value){.kind = ORDO__VALUE_DOUBLE, .d = f};
        break;
    case ORDO__PQ_DOUBLE: out->kind = ORDO__VALUE_DOUBLE, memcpy(&out->d, v, 8); break;
    default:
        out->kind = ORDO__VALUE_STRING;
        out->s = r->views[k].s;
        out->len = r->views[k].len;
    }
}

static ordo_status scan_groups(scan *s, ordo__pq_row_fn fn, void *context, ordo_error *err)
{
    ordo__field_value *values = calloc(s->count ? s->count : 1, sizeof *values);
    ordo_status status = values ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory");
    int stop = 0;
    for (size_t g = 0; status == ORDO_OK && !stop && g < s->meta.group_count; g++) {
        const ordo__pq_group *group = &s->meta.groups[g];
        for (size_t c = 0; status == ORDO_OK && c < s->count; c++)
            status = read_column(s, group, c, err);
        for (int64_t row = 0; status == ORDO_OK && !stop && row < group->num_rows; row++) {
            for (size_t c = 0; c < s->count; c++)
                row_value(s, c, (size_t)row, &values[c]);
            stop = fn(context, group->first_row + (uint64_t)row, values);
        }
    }
    free(values);
    return status;
}

/* Reads every row of some columns; see parquet.h. */
ordo_status ordo__pq_scan_columns(const char *path, const char *const *columns, size_t count,
                                  ordo__pq_row_fn fn, void *context, ordo_error *err)
{
    scan s = {.path = path, .fd = -1, .columns = columns, .count = count};
    ordo_status status = ordo__pq_open(path, &s.fd, &s.size, &s.meta, err);
    s.readers = calloc(count ? count : 1, sizeof *s.readers);
    s.cursor = calloc(count ? count : 1, sizeof *s.cursor);
    if (status == ORDO_OK && (!s.readers || !s.cursor))
        status = ordo__error(err, ORDO_NOMEM, "out of memory");
    if (status == ORDO_OK)
        status = scan_groups(&s, fn, context, err);
    for (size_t c = 0; s.readers && c < count; c++)
        ordo__pq_reader_free(&s.readers[c]);
    free(s.readers);
    free(s.cursor);
    ordo__pq_meta_free(&s.meta);
    if (s.fd >= 0)
        close(s.fd);
    return status;
}
