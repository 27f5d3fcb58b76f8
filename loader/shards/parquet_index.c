/* Indexing a Parquet shard: each row group is a chunk, or, when its text
 * is more than a chunk may hold, runs of its text column's pages are; the
 * filter's columns are read for the same rows. Each chunk's plan is run
 * as a read would run it (counts, digest), and the whole file is hashed
 * after, so a file that is not the one the recipe hashed is a conflict. */
#define _DEFAULT_SOURCE /* pread */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "parquet.h"

typedef struct {
    const char *path;
    int fd;
    uint64_t size;
    ordo__pq_meta meta;
    const ordo__index_spec *spec;
    uint64_t limit;  /* the most text a chunk may hold */
    uint64_t cap;    /* the most a page may take: 2 × limit (a column's values: 3 × that) */
    size_t text;     /* leaf of the text field */
    size_t *filters; /* leaves of the filter's fields the file has */
    size_t filter_count;
    ordo__chunk *chunks;
    uint32_t chunk_count, chunk_cap;
    unsigned char *aux;
    uint64_t aux_size, aux_cap;
    ordo__counts counts;
    uint64_t done; /* where the last group's text column ends, for progress */
} indexer;

static ordo_status no_column(const indexer *x, const char *field, ordo_error *err)
{
    char list[512] = "";
    size_t at = 0;
    for (size_t i = 0; i < x->meta.leaf_count && at < sizeof list - 1; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s'%s'", i ? ", " : "",
                               x->meta.leaves[i].path);
    return ordo__error(err, ORDO_INVALID,
                       "shard '%s': no column '%s' for the text field (its columns: %s)", x->path,
                       field, list);
}

static ordo_status find_columns(indexer *x, ordo_error *err)
{
    const ordo__read_spec *read = &x->spec->read;
    if (!ordo__pq_find(&x->meta, read->text_field, &x->text))
        return no_column(x, read->text_field, err);
    ordo_status status = ordo__pq_usable(x->path, &x->meta.leaves[x->text], 1, err);
    uint32_t n = read->filter ? ordo__filter_field_count(read->filter) : 0;
    x->filters = malloc((n ? n : 1) * sizeof *x->filters);
    if (!x->filters)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    for (uint32_t f = 0; status == ORDO_OK && f < n; f++) {
        size_t leaf = 0;
        if (!ordo__pq_find(&x->meta, ordo__filter_field(read->filter, f), &leaf))
            continue; /* MISSING in every row */
        status = ordo__pq_usable(x->path, &x->meta.leaves[leaf], 0, err);
        x->filters[x->filter_count++] = leaf;
    }
    return status;
}

static void reader_for(const indexer *x, size_t leaf, const ordo__pq_group *g, ordo__pq_reader *r)
{
    const ordo__pq_leaf *l = &x->meta.leaves[leaf];
    *r = (ordo__pq_reader){.path = x->path,
                           .column = l->path,
                           .type = l->type,
                           .type_length = l->type_length,
                           .codec = g->columns[leaf].codec,
                           .max_def = l->max_def,
                           .limit = 3 * x->cap,
                           .page_limit = x->cap};
}

/* Walks one column chunk of a group, checking its rows and values. */
/* Walks one column chunk of a group, checking its rows and values; its
 * reader (its dictionary) is given to *keep when keep is not NULL. */
static ordo_status walk_column(const indexer *x, size_t leaf, const ordo__pq_group *g, int decode,
                               ordo__pq_pages *w, ordo__pq_reader *keep, ordo_error *err)
{
    const ordo__pq_leaf *l = &x->meta.leaves[leaf];
    const ordo__pq_column *c = &g->columns[leaf];
    uint64_t start = 0, end = 0;
    ordo__pq_reader r;
    reader_for(x, leaf, g, &r);
    *w = (ordo__pq_pages){0};
    ordo_status status = ordo__pq_column_range(x->path, l, c, x->size, &start, &end, err);
    if (status == ORDO_OK)
        status = ordo__pq_walk(x->fd, &r, start, end, decode, w, err);
    ordo__pq_reader_clear(&r);
    if (keep)
        *keep = r; /* ownership moved */
    else
        ordo__pq_reader_free(&r);
    if (status == ORDO_OK &&
        (w->rows != (uint64_t)g->num_rows || w->values != (uint64_t)c->num_values))
        status = ordo__error(err, ORDO_INVALID,
                             "shard '%s': column '%s', chunk at byte %llu: its pages hold %llu "
                             "rows and %llu values, the footer says %lld and %lld",
                             x->path, l->path, (unsigned long long)start,
                             (unsigned long long)w->rows, (unsigned long long)w->values,
                             (long long)g->num_rows, (long long)c->num_values);
    return status;
}

static ordo_status add_aux(indexer *x, const unsigned char *bytes, size_t len, ordo_error *err)
{
    if (x->aux_size + len > x->aux_cap) {
        uint64_t cap = x->aux_cap ? 2 * x->aux_cap : 4096;
        while (cap < x->aux_size + len)
            cap *= 2;
        unsigned char *grown = realloc(x->aux, (size_t)cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", x->path);
        x->aux = grown;
        x->aux_cap = cap;
    }
    memcpy(x->aux + x->aux_size, bytes, len);
    x->aux_size += len;
    return ORDO_OK;
}

static ordo_status add_chunk(indexer *x, ordo__chunk chunk, ordo_error *err)
{
    if (x->chunk_count == x->chunk_cap) {
        if (x->chunk_cap >= ((uint32_t)1 << 24))
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s' has more than %u chunks; split it into several files",
                               x->path, x->chunk_cap);
        uint32_t cap = x->chunk_cap ? 2 * x->chunk_cap : 64;
        ordo__chunk *grown = realloc(x->chunks, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", x->path);
        x->chunks = grown;
        x->chunk_cap = cap;
    }
    x->chunks[x->chunk_count++] = chunk;
    return ORDO_OK;
}

static void add_counts(ordo__counts *to, const ordo__counts *more)
{
    to->read += more->read;
    to->passed += more->passed;
    to->filtered += more->filtered;
    to->empty += more->empty;
}

/* One chunk: rows [first, first + rows) of group g; its raw_length is the
 * text its rows decode to. */
static ordo_status index_cut(indexer *x, const ordo__pq_group *g, const ordo__pq_pages *walks,
                             uint64_t first, uint64_t rows, ordo_error *err)
{
    ordo__pq_plan plan = {x->cap, rows, NULL, 1 + x->filter_count};
    plan.spans = calloc(plan.span_count, sizeof *plan.spans);
    if (!plan.spans)
        return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", x->path);
    for (size_t i = 0; i < plan.span_count; i++) {
        size_t leaf = i ? x->filters[i - 1] : x->text;
        const ordo__pq_leaf *l = &x->meta.leaves[leaf];
        ordo__pq_span *s = &plan.spans[i];
        ordo__pq_walk_span(&walks[i], first, rows, s);
        s->path = l->path; /* borrowed: the plan is not freed with ordo__pq_plan_free */
        s->type = l->type;
        s->codec = g->columns[leaf].codec;
        s->max_def = l->max_def;
    }
    ordo__counts here = {0};
    ordo__chunk chunk = {.offset = ordo__pq_plan_offset(&plan),
                         .length = ordo__pq_plan_length(&plan),
                         .first_record = g->first_row + first,
                         .aux_offset = x->aux_size};
    ordo_status status =
        ordo__pq_plan_run(x->path, x->fd, &plan, NULL, 0, chunk.first_record, &x->spec->read, NULL,
                          NULL, &here, chunk.digest, &chunk.raw_length, err);
    unsigned char *aux = NULL;
    size_t aux_len = 0;
    if (status == ORDO_OK && here.passed > 0) {
        chunk.records = (uint32_t)here.passed;
        status = ordo__pq_aux_encode(&plan, &aux, &aux_len, err);
        chunk.aux_length = (uint32_t)aux_len;
        if (status == ORDO_OK)
            status = add_aux(x, aux, aux_len, err);
        if (status == ORDO_OK)
            status = add_chunk(x, chunk, err);
    }
    add_counts(&x->counts, &here);
    free(aux);
    free(plan.spans);
    return status;
}

/* Where a chunk being cut stands: its first row and its text so far. */
typedef struct {
    uint64_t start, bytes;
} cutting;

/* Adds `bytes` of text starting at `row` (a page, or one row of a page
 * cut row by row) to the chunk being cut, cutting before it when the
 * chunk would hold more than the limit. */
static ordo_status cut_add(indexer *x, const ordo__pq_group *g, const ordo__pq_pages *walks,
                           cutting *c, uint64_t row, uint64_t bytes, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    if (c->bytes + bytes > x->limit && row > c->start) {
        status = index_cut(x, g, walks, c->start, row - c->start, err);
        c->start = row;
        c->bytes = 0;
    }
    c->bytes += bytes;
    return status;
}

/* A page of more text than the limit, cut between its rows: decoded
 * again (its dictionary kept in `text`), a chunk cut before the row that
 * would take it past the limit. A row of more text is an error. */
static ordo_status cut_page(indexer *x, const ordo__pq_group *g, const ordo__pq_pages *walks,
                            ordo__pq_reader *text, const ordo__pq_place *page, cutting *c,
                            ordo_error *err)
{
    ordo__pq_reader_clear(text);
    ordo_status status = ordo__pq_walk_decode(x->fd, text, page, err);
    for (size_t i = 0, k = 0; status == ORDO_OK && i < text->rows; i++) {
        uint64_t len = text->present[i] ? text->views[k++].len : 0;
        if (len > x->limit)
            status = ordo__error(
                err, ORDO_INVALID,
                "shard '%s': column '%s', row %llu holds %llu bytes of text, "
                "more than the %llu a chunk may hold with %d lanes (256 MiB / "
                "lanes, at least 4 MiB)",
                x->path, text->column, (unsigned long long)(g->first_row + page->first_row + i),
                (unsigned long long)len, (unsigned long long)x->limit, x->spec->lanes);
        else
            status = cut_add(x, g, walks, c, page->first_row + i, len, err);
    }
    ordo__pq_reader_clear(text);
    return status;
}

/* Cuts a group's text pages into chunks of at most the limit: at page
 * boundaries, and between rows inside a page of more text than that. */
static ordo_status cut_group(indexer *x, const ordo__pq_group *g, const ordo__pq_pages *walks,
                             ordo__pq_reader *text, ordo_error *err)
{
    const ordo__pq_pages *t = &walks[0];
    uint64_t total = 0;
    for (size_t p = 0; p < t->count; p++)
        total += t->pages[p].text_bytes;
    if (total <= x->limit)
        return g->num_rows ? index_cut(x, g, walks, 0, (uint64_t)g->num_rows, err) : ORDO_OK;
    cutting c = {0, 0};
    ordo_status status = ORDO_OK;
    for (size_t p = 0; status == ORDO_OK && p < t->count; p++) {
        const ordo__pq_place *page = &t->pages[p];
        if (page->text_bytes > x->limit)
            status = cut_page(x, g, walks, text, page, &c, err);
        else
            status = cut_add(x, g, walks, &c, page->first_row, page->text_bytes, err);
    }
    uint64_t start = c.start;
    if (status == ORDO_OK && (uint64_t)g->num_rows > start)
        status = index_cut(x, g, walks, start, (uint64_t)g->num_rows - start, err);
    return status;
}

static ordo_status index_group(indexer *x, const ordo__pq_group *g, ordo_error *err)
{
    size_t n = 1 + x->filter_count;
    ordo__pq_pages *walks = calloc(n, sizeof *walks);
    if (!walks)
        return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", x->path);
    ordo__pq_reader text = {0};
    ordo_status status = walk_column(x, x->text, g, 1, &walks[0], &text, err);
    for (size_t i = 1; status == ORDO_OK && i < n; i++)
        status = walk_column(x, x->filters[i - 1], g, 0, &walks[i], NULL, err);
    if (status == ORDO_OK)
        status = cut_group(x, g, walks, &text, err);
    ordo__pq_reader_free(&text);
    x->done = walks[0].end;
    for (size_t i = 0; i < n; i++)
        ordo__pq_walk_free(&walks[i]);
    free(walks);
    return status;
}

/* The file's bytes hashed through the same descriptor, after indexing:
 * any change to the file before or while it was indexed shows. */
static ordo_status same_file(const indexer *x, const ordo__shard *shard, ordo_error *err)
{
    EVP_MD_CTX *sha = EVP_MD_CTX_new();
    unsigned char *buf = malloc((size_t)1 << 20);
    ordo_status status = sha && buf && EVP_DigestInit_ex2(sha, EVP_sha256(), NULL)
                             ? ORDO_OK
                             : ordo__error(err, ORDO_NOMEM, "out of memory hashing '%s'", x->path);
    uint64_t total = 0;
    for (;;) {
        if (status != ORDO_OK)
            break;
        ssize_t got = pread(x->fd, buf, (size_t)1 << 20, (off_t)total);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            status = ordo__error(err, ORDO_IO, "cannot read shard '%s' at byte %llu", x->path,
                                 (unsigned long long)total);
        if (got <= 0)
            break;
        EVP_DigestUpdate(sha, buf, (size_t)got);
        total += (uint64_t)got;
    }
    unsigned char digest[ORDO_DIGEST_SIZE];
    unsigned int len = 0;
    if (status == ORDO_OK && !EVP_DigestFinal_ex(sha, digest, &len))
        status = ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", x->path);
    if (status == ORDO_OK && (total != shard->size || memcmp(digest, shard->sha256, len) != 0))
        status = ordo__error(err, ORDO_CONFLICT,
                             "shard '%s' changed while being indexed (%llu bytes, was %llu; "
                             "SHA-256 %s)",
                             x->path, (unsigned long long)total, (unsigned long long)shard->size,
                             memcmp(digest, shard->sha256, len) ? "differs" : "same");
    EVP_MD_CTX_free(sha);
    free(buf);
    return status;
}

static ordo_status index_file(indexer *x, const ordo__shard *shard, ordo_error *err)
{
    ordo_status status = ordo__pq_open(x->path, &x->fd, &x->size, &x->meta, err);
    if (status == ORDO_OK && x->size != shard->size)
        status = ordo__error(err, ORDO_CONFLICT,
                             "shard '%s' changed since it was hashed (%llu bytes, was %llu)",
                             x->path, (unsigned long long)x->size, (unsigned long long)shard->size);
    if (status == ORDO_OK)
        status = find_columns(x, err);
    for (size_t g = 0; status == ORDO_OK && g < x->meta.group_count; g++) {
        status = index_group(x, &x->meta.groups[g], err);
        if (status == ORDO_OK && x->spec->progress)
            x->spec->progress(x->spec->progress_context,
                              g + 1 < x->meta.group_count ? x->done : x->size);
    }
    if (status == ORDO_OK)
        status = same_file(x, shard, err);
    return status;
}

/* Indexes a Parquet shard; see shards.h. On error the shard is left as
 * it was. */
ordo_status ordo__parquet_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                                ordo_error *err)
{
    indexer x = {.path = path, .fd = -1, .spec = spec};
    x.limit = spec->chunk_limit ? spec->chunk_limit : ORDO__CHUNK_MAX;
    x.cap = x.limit <= ((uint64_t)1 << 37) ? 2 * x.limit : x.limit;
    ordo_status status = index_file(&x, shard, err);
    if (x.fd >= 0)
        close(x.fd);
    ordo__pq_meta_free(&x.meta);
    free(x.filters);
    if (status != ORDO_OK) {
        free(x.chunks);
        free(x.aux);
        return status;
    }
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = x.chunks;
    shard->chunk_count = x.chunk_count;
    shard->counts = x.counts;
    shard->records = x.counts.passed;
    shard->skipped = x.counts.empty;
    shard->aux = x.aux;
    shard->aux_size = x.aux_size;
    return ORDO_OK;
}
