/* Running a Parquet chunk's plan: its bytes read and checked against the
 * chunk's digest, its columns decoded, each row decided (text, filter
 * fields) in order. The indexer runs the same plans, so a chunk is read
 * exactly as it was indexed. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

/* Decodes pages; see parquet.h. */
ordo_status ordo__pq_read_pages(ordo__pq_reader *reader, const unsigned char *bytes, size_t len,
                                uint64_t base, ordo_error *err)
{
    size_t at = 0;
    while (at < len) {
        ordo__pq_page page;
        int r = ordo__pq_page_header(reader->path, base + at, bytes + at, len - at, &page, err);
        if (r < 0)
            return ORDO_INVALID;
        if (r > 0 || (size_t)page.compressed > len - at - page.header_length)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': column '%s', page at byte %llu runs past its column "
                               "chunk's end at byte %llu",
                               reader->path, reader->column, (unsigned long long)(base + at),
                               (unsigned long long)(base + len));
        ordo_status status =
            ordo__pq_read_page(reader, &page, bytes + at + page.header_length, base + at, err);
        if (status != ORDO_OK)
            return status;
        at += page.header_length + (size_t)page.compressed;
    }
    return ORDO_OK;
}

/* The rows being decided, for the filter's field function. */
typedef struct {
    const char *path;
    const ordo__pq_plan *plan;
    ordo__pq_reader *readers;
    size_t *cursor;  /* per span: the value index of the current row */
    int *field_span; /* per filter field: its span, or -1 */
    uint64_t row;    /* in the chunk */
    uint64_t first_row;
    uint64_t text; /* bytes of the rows' texts */
} rows;

static ordo_status value_at(const rows *w, size_t span, ordo__field_value *out, ordo_error *err)
{
    const ordo__pq_reader *r = &w->readers[span];
    size_t row = (size_t)(w->plan->spans[span].skip + w->row), k = w->cursor[span];
    *out = (ordo__field_value){.kind = ORDO__VALUE_NULL};
    if (!r->present[row])
        return ORDO_OK;
    const unsigned char *v = r->fixed ? r->fixed + k * (size_t)ordo__pq_width(r->type) : NULL;
    int32_t i32 = 0;
    float f = 0;
    switch (r->type) {
    case ORDO__PQ_BOOLEAN: *out = (ordo__field_value){.kind = ORDO__VALUE_BOOL, .b = v[0]}; break;
    case ORDO__PQ_INT32:
        memcpy(&i32, v, 4); /* little-endian hosts only, as the build requires */
        *out = (ordo__field_value){.kind = ORDO__VALUE_INT, .i = i32};
        break;
    case ORDO__PQ_INT64:
        out->kind = ORDO__VALUE_INT;
        memcpy(&out->i, v, 8);
        break;
    case ORDO__PQ_FLOAT:
        memcpy(&f, v, 4);
        *out = (ordo__field_value){.kind = ORDO__VALUE_DOUBLE, .d = f};
        break;
    case ORDO__PQ_DOUBLE:
        out->kind = ORDO__VALUE_DOUBLE;
        memcpy(&out->d, v, 8);
        break;
    default:
        out->kind = ORDO__VALUE_STRING;
        out->s = r->views[k].s;
        out->len = r->views[k].len;
        if (!ordo__pq_utf8((const unsigned char *)out->s, out->len))
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': column '%s', row %llu: not valid UTF-8", w->path,
                               r->column, (unsigned long long)(w->first_row + w->row));
    }
    return ORDO_OK;
}

static ordo_status field_value(void *context, uint32_t field, ordo__field_value *out,
                               ordo_error *err)
{
    const rows *w = context;
    if (w->field_span[field] < 0) {
        *out = (ordo__field_value){.kind = ORDO__VALUE_MISSING};
        return ORDO_OK;
    }
    return value_at(w, (size_t)w->field_span[field], out, err);
}

static ordo_status decide_rows(rows *w, const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                               ordo__counts *counts, ordo_error *err)
{
    int stop = 0;
    for (w->row = 0; w->row < w->plan->rows && !stop; w->row++) {
        ordo__field_value text;
        ordo_status status = value_at(w, 0, &text, err);
        int keep = 0;
        w->text += text.kind == ORDO__VALUE_STRING ? text.len : 0;
        if (status == ORDO_OK)
            status = ordo__record_decide(spec, text.kind == ORDO__VALUE_STRING ? text.s : NULL,
                                         text.len, field_value, w, &keep, counts, err);
        if (status != ORDO_OK && err->message[0] && strncmp(err->message, "shard '", 7) != 0) {
            char detail[ORDO_ERROR_MESSAGE_SIZE];
            snprintf(detail, sizeof detail, "%s", err->message);
            status = ordo__error(err, status, "shard '%s': row %llu: filter: %s", w->path,
                                 (unsigned long long)(w->first_row + w->row), detail);
        }
        if (status != ORDO_OK)
            return status;
        if (keep && fn)
            stop = fn(context, text.s, text.len, w->row);
        for (size_t s = 0; s < w->plan->span_count; s++)
            w->cursor[s] += w->readers[s].present[w->plan->spans[s].skip + w->row];
    }
    return ORDO_OK;
}

/* Every span decoded, with enough rows for the chunk. */
static ordo_status decode_spans(const char *path, const ordo__pq_plan *plan,
                                const unsigned char *bytes, ordo__pq_reader *readers,
                                size_t *cursor, ordo_error *err)
{
    size_t at = 0;
    for (size_t i = 0; i < plan->span_count; i++) {
        const ordo__pq_span *s = &plan->spans[i];
        ordo__pq_reader *r = &readers[i];
        *r = (ordo__pq_reader){.path = path,
                               .column = s->path,
                               .type = s->type,
                               .codec = s->codec,
                               .max_def = s->max_def,
                               .limit = 3 * plan->limit,
                               .page_limit = plan->limit};
        ordo_status status =
            ordo__pq_read_pages(r, bytes + at, (size_t)s->dict_length, s->dict_offset, err);
        at += (size_t)s->dict_length;
        if (status == ORDO_OK)
            status =
                ordo__pq_read_pages(r, bytes + at, (size_t)s->data_length, s->data_offset, err);
        at += (size_t)s->data_length;
        if (status != ORDO_OK)
            return status;
        if (r->rows < s->skip || r->rows - s->skip < plan->rows)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': column '%s' has %zu rows in its pages from byte "
                               "%llu, fewer than the %llu its chunk reads",
                               path, s->path, r->rows, (unsigned long long)s->data_offset,
                               (unsigned long long)(s->skip + plan->rows));
        cursor[i] = 0;
        for (uint64_t row = 0; row < s->skip; row++)
            cursor[i] += r->present[row];
    }
    return ORDO_OK;
}

static ordo_status load_bytes(const char *path, int fd, const ordo__pq_plan *plan,
                              unsigned char **out, ordo_error *err)
{
    uint64_t total = ordo__pq_plan_length(plan);
    if (total > 4 * plan->limit)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': a chunk of rows from byte %llu reads %llu bytes of "
                           "pages, more than four times the %llu a page may hold; write smaller "
                           "pages",
                           path, (unsigned long long)ordo__pq_plan_offset(plan),
                           (unsigned long long)total, (unsigned long long)plan->limit);
    unsigned char *buf = malloc(total ? total : 1);
    if (!buf)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    size_t at = 0;
    ordo_status status = ORDO_OK;
    for (size_t i = 0; status == ORDO_OK && i < plan->span_count; i++) {
        const ordo__pq_span *s = &plan->spans[i];
        status = ordo__pq_pread(fd, path, s->dict_offset, buf + at, (size_t)s->dict_length, err);
        at += (size_t)s->dict_length;
        if (status == ORDO_OK)
            status =
                ordo__pq_pread(fd, path, s->data_offset, buf + at, (size_t)s->data_length, err);
        at += (size_t)s->data_length;
    }
    if (status != ORDO_OK) {
        free(buf);
        return status;
    }
    *out = buf;
    return ORDO_OK;
}

static int *map_fields(const ordo__pq_plan *plan, const ordo__read_spec *spec)
{
    uint32_t n = spec->filter ? ordo__filter_field_count(spec->filter) : 0;
    int *map = malloc((n ? n : 1) * sizeof *map);
    for (uint32_t f = 0; map && f < n; f++) {
        map[f] = -1;
        for (size_t s = 1; s < plan->span_count; s++)
            if (strcmp(plan->spans[s].path, ordo__filter_field(spec->filter, f)) == 0)
                map[f] = (int)s;
    }
    return map;
}

/* Runs a plan; see parquet.h. */
ordo_status ordo__pq_plan_run(const char *path, int fd, const ordo__pq_plan *plan,
                              const ordo__chunk *chunk, uint32_t index, uint64_t first_row,
                              const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                              ordo__counts *counts, unsigned char *digest, uint64_t *text,
                              ordo_error *err)
{
    if (plan->span_count == 0 || strcmp(plan->spans[0].path, spec->text_field) != 0 ||
        plan->spans[0].type != ORDO__PQ_BYTE_ARRAY)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s': chunk %u was indexed for another text field than '%s'",
                           path, index, spec->text_field);
    if (chunk && chunk->length != ordo__pq_plan_length(plan))
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s': chunk %u's locator reads %llu bytes, its table says %llu",
                           path, index, (unsigned long long)ordo__pq_plan_length(plan),
                           (unsigned long long)chunk->length);
    unsigned char *bytes = NULL;
    ordo_status status = load_bytes(path, fd, plan, &bytes, err);
    if (status != ORDO_OK)
        return status;
    if (chunk)
        status = ordo__chunk_check(path, chunk, index, bytes, err);
    else
        ordo_sha256(bytes, (size_t)ordo__pq_plan_length(plan), digest);
    ordo__pq_reader *readers = calloc(plan->span_count, sizeof *readers);
    size_t *cursor = calloc(plan->span_count, sizeof *cursor);
    rows w = {path, plan, readers, cursor, map_fields(plan, spec), 0, first_row, 0};
    if (status == ORDO_OK && (!readers || !cursor || !w.field_span))
        status = ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    if (status == ORDO_OK)
        status = decode_spans(path, plan, bytes, readers, cursor, err);
    if (status == ORDO_OK) /* values of uncompressed pages point into `bytes` */
        status = decide_rows(&w, spec, fn, context, counts, err);
    free(bytes);
    if (text)
        *text = w.text; /* of the chunk's rows alone: its pages may hold more */
    for (size_t i = 0; readers && i < plan->span_count; i++)
        ordo__pq_reader_free(&readers[i]);
    free(readers);
    free(cursor);
    free(w.field_span);
    return status;
}
