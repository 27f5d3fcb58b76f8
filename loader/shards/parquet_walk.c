/* Walking a Parquet column chunk's pages for the indexer: each page's
 * place, rows and (for the text column) decoded text bytes, read through
 * pread one page at a time, so memory stays within a page and its
 * values. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

#define HEADER_FIRST 256
#define HEADER_MAX ((size_t)16 << 20)

/* The header of the page at `at` (column chunk ends at `end`). */
static ordo_status next_header(const char *path, const char *column, int fd, uint64_t at,
                               uint64_t end, ordo__pq_page *page, ordo_error *err)
{
    size_t want = HEADER_FIRST;
    unsigned char *buf = NULL;
    for (;;) {
        size_t n = end - at < want ? (size_t)(end - at) : want;
        unsigned char *grown = realloc(buf, n ? n : 1);
        if (!grown) {
            free(buf);
            return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
        }
        buf = grown;
        ordo_status status = ordo__pq_pread(fd, path, at, buf, n, err);
        int r = status == ORDO_OK ? ordo__pq_page_header(path, at, buf, n, page, err) : -1;
        if (r <= 0 || n < want || want >= HEADER_MAX) {
            free(buf);
            if (r > 0)
                return ordo__error(err, ORDO_INVALID,
                                   "shard '%s': column '%s', page header at byte %llu runs past "
                                   "its column chunk's end at byte %llu",
                                   path, column, (unsigned long long)at, (unsigned long long)end);
            return r == 0 ? ORDO_OK : ORDO_INVALID;
        }
        want *= 4;
    }
}

static ordo_status push_page(ordo__pq_pages *w, ordo__pq_place page, ordo_error *err)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        ordo__pq_place *grown = realloc(w->pages, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory indexing a shard");
        w->pages = grown;
        w->cap = cap;
    }
    w->pages[w->count++] = page;
    return ORDO_OK;
}

/* Whether a page's values are at most its uncompressed bytes. */
static int bounded_by_page(const ordo__pq_page *page)
{
    return (page->type == ORDO__PQ_DATA_PAGE || page->type == ORDO__PQ_DATA_PAGE_V2) &&
           (page->encoding == ORDO__PQ_PLAIN || page->encoding == ORDO__PQ_DELTA_LENGTH_BYTE_ARRAY);
}

/* A text page's decoded text bytes, or their bound (bounded_by_page)
 * unless `keep`: then it is decoded and its rows kept in the reader (its
 * body with them, as uncompressed values point into it). */
static ordo_status text_bytes(int fd, ordo__pq_reader *reader, const ordo__pq_page *page,
                              uint64_t at, uint64_t *bytes, int keep, ordo_error *err)
{
    uint64_t most = reader->page_limit ? reader->page_limit : reader->limit;
    if ((uint64_t)page->compressed > most || (uint64_t)page->uncompressed > most)
        return ordo__error(
            err, ORDO_INVALID,
            "shard '%s': column '%s', page at byte %llu: %d bytes (%d compressed), "
            "more than the %llu a page may hold (2 × the chunk limit); write smaller pages",
            reader->path, reader->column, (unsigned long long)at, page->uncompressed,
            page->compressed, (unsigned long long)most);
    if (bounded_by_page(page) && !keep) {
        *bytes = (uint64_t)page->uncompressed;
        return ORDO_OK;
    }
    unsigned char *body = malloc(page->compressed ? (size_t)page->compressed : 1);
    if (!body)
        return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", reader->path);
    ordo_status status = ordo__pq_pread(fd, reader->path, at + page->header_length, body,
                                        (size_t)page->compressed, err);
    if (status != ORDO_OK) {
        free(body);
        return status;
    }
    status = ordo__pq_reader_own(reader, body, err); /* freed when the reader is cleared */
    if (status == ORDO_OK)
        status = ordo__pq_read_page(reader, page, body, at, err);
    *bytes = reader->text_bytes;
    if (!keep)
        ordo__pq_reader_clear(reader);
    return status;
}

/* Decodes one page a walk found; see parquet.h. */
ordo_status ordo__pq_walk_decode(int fd, ordo__pq_reader *reader, const ordo__pq_place *place,
                                 ordo_error *err)
{
    ordo__pq_page page;
    uint64_t bytes = 0;
    ordo_status status = next_header(reader->path, reader->column, fd, place->offset,
                                     place->offset + place->length, &page, err);
    if (status == ORDO_OK && page.header_length + (uint64_t)page.compressed != place->length)
        status = ordo__error(err, ORDO_CONFLICT,
                             "shard '%s': column '%s', page at byte %llu changed while being "
                             "indexed",
                             reader->path, reader->column, (unsigned long long)place->offset);
    if (status == ORDO_OK)
        status = text_bytes(fd, reader, &page, place->offset, &bytes, 1, err);
    return status;
}

/* Walks a column chunk's pages; see parquet_walk.h. */
ordo_status ordo__pq_walk(int fd, ordo__pq_reader *reader, uint64_t start, uint64_t end, int decode,
                          ordo__pq_pages *w, ordo_error *err)
{
    *w = (ordo__pq_pages){.start = start, .end = end};
    uint64_t at = start, row = 0, values = 0;
    ordo_status status = ORDO_OK;
    while (status == ORDO_OK && at < end) {
        ordo__pq_page page;
        status = next_header(reader->path, reader->column, fd, at, end, &page, err);
        if (status == ORDO_OK && (uint64_t)page.compressed > end - at - page.header_length)
            status = ordo__error(err, ORDO_INVALID,
                                 "shard '%s': column '%s', page at byte %llu: its %d bytes run "
                                 "past its column chunk's end at byte %llu",
                                 reader->path, reader->column, (unsigned long long)at,
                                 page.compressed, (unsigned long long)end);
        if (status != ORDO_OK)
            break;
        uint64_t length = page.header_length + (uint64_t)page.compressed;
        int data = page.type == ORDO__PQ_DATA_PAGE || page.type == ORDO__PQ_DATA_PAGE_V2;
        ordo__pq_place p = {at, length, row, data ? (uint64_t)page.num_rows : 0, 0};
        if (!data && page.type != ORDO__PQ_DICTIONARY_PAGE && page.type != ORDO__PQ_INDEX_PAGE)
            status = ordo__error(err, ORDO_INVALID,
                                 "shard '%s': column '%s', page at byte %llu: a page of unknown "
                                 "type %d",
                                 reader->path, reader->column, (unsigned long long)at, page.type);
        if (page.type == ORDO__PQ_DICTIONARY_PAGE) {
            if (w->count > 0 || w->dict_length)
                status = ordo__error(err, ORDO_INVALID,
                                     "shard '%s': column '%s', page at byte %llu: a dictionary "
                                     "page after a data page or a dictionary",
                                     reader->path, reader->column, (unsigned long long)at);
            w->dict_offset = at, w->dict_length = length;
        }
        if (status == ORDO_OK && ((decode && data) || page.type == ORDO__PQ_DICTIONARY_PAGE))
            status = text_bytes(fd, reader, &page, at, &p.text_bytes, 0, err);
        if (status == ORDO_OK && data) /* index pages hold no rows: passed over */
            status = push_page(w, p, err);
        row += p.rows;
        values += data ? (uint64_t)page.num_values : 0;
        at += length;
    }
    w->rows = row;
    w->values = values;
    return status;
}

/* The pages of `w` holding rows [first, first + rows): their byte range
 * and the rows before `first` in it; see parquet_walk.h. */
void ordo__pq_walk_span(const ordo__pq_pages *w, uint64_t first, uint64_t rows, ordo__pq_span *span)
{
    size_t a = 0;
    while (a < w->count && w->pages[a].first_row + w->pages[a].rows <= first)
        a++;
    size_t b = a;
    while (b < w->count && w->pages[b].first_row < first + rows)
        b++;
    span->dict_offset = w->dict_offset;
    span->dict_length = w->dict_length;
    if (a == b) {
        span->data_offset = a < w->count ? w->pages[a].offset : w->end;
        span->data_length = 0;
        span->skip = 0;
        return;
    }
    span->data_offset = w->pages[a].offset;
    span->data_length = w->pages[b - 1].offset + w->pages[b - 1].length - span->data_offset;
    span->skip = first - w->pages[a].first_row;
}

/* Frees a walk's page list and empties it; see parquet.h. */
void ordo__pq_walk_free(ordo__pq_pages *w)
{
    free(w->pages);
    *w = (ordo__pq_pages){0};
}
