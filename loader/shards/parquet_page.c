/* Parquet pages: page headers, and one page's body decoded into a column
 * reader's rows (data pages v1 and v2, dictionary pages; index pages are
 * passed over). */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

static int data_header(ordo__pq_thrift *t, ordo__pq_page *p, int v2)
{
    int last = 0, id = 0, type = 0, r;
    int32_t v = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1)
            r = ordo__pq_i32(t, type, &p->num_values);
        else if (v2 && id == 2)
            r = ordo__pq_i32(t, type, &p->num_nulls);
        else if (v2 && id == 3)
            r = ordo__pq_i32(t, type, &p->num_rows);
        else if ((v2 ? id == 4 : id == 2) && (r = ordo__pq_i32(t, type, &v)) == 0)
            p->encoding = v;
        else if (!v2 && id == 3 && (r = ordo__pq_i32(t, type, &v)) == 0)
            p->def_encoding = v;
        else if (v2 && id == 5)
            r = ordo__pq_i32(t, type, &p->def_length);
        else if (v2 && id == 6)
            r = ordo__pq_i32(t, type, &p->rep_length);
        else if (v2 && id == 7)
            r = ordo__pq_bool(t, type, &p->is_compressed);
        else if (v2 ? id > 7 || id < 1 : id > 3 || id < 1)
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    if (!v2)
        p->num_rows = p->num_values;
    return r;
}

static int dict_header(ordo__pq_thrift *t, ordo__pq_page *p)
{
    int last = 0, id = 0, type = 0, r;
    int32_t v = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1)
            r = ordo__pq_i32(t, type, &p->num_values);
        else if (id == 2 && (r = ordo__pq_i32(t, type, &v)) == 0)
            p->encoding = v;
        else if (id != 2)
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    return r;
}

static int page_header(ordo__pq_thrift *t, ordo__pq_page *p)
{
    int last = 0, id = 0, type = 0, r, seen = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        int32_t v = 0;
        if (id == 1 && (r = ordo__pq_i32(t, type, &v)) == 0)
            p->type = v, seen |= 1;
        else if (id == 2 && (r = ordo__pq_i32(t, type, &p->uncompressed)) == 0)
            seen |= 2;
        else if (id == 3 && (r = ordo__pq_i32(t, type, &p->compressed)) == 0)
            seen |= 4;
        else if ((id == 5 || id == 8) && type == ORDO__TT_STRUCT)
            r = data_header(t, p, id == 8), seen |= 8;
        else if (id == 7 && type == ORDO__TT_STRUCT)
            r = dict_header(t, p), seen |= 8;
        else if (id != 1 && id != 2 && id != 3)
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    if (r == 0 && (seen & 7) != 7)
        return t->problem = "a page header without its type or sizes", -1;
    int known = p->type == ORDO__PQ_DATA_PAGE || p->type == ORDO__PQ_DATA_PAGE_V2 ||
                p->type == ORDO__PQ_DICTIONARY_PAGE; /* others are refused by type */
    if (r == 0 && known && !(seen & 8))
        return t->problem = "a page header without the header of its type", -1;
    return r;
}

/* Decodes a page header; see parquet.h. */
int ordo__pq_page_header(const char *path, uint64_t offset, const unsigned char *in, size_t len,
                         ordo__pq_page *page, ordo_error *err)
{
    *page = (ordo__pq_page){.type = -1, .is_compressed = 1, .def_encoding = ORDO__PQ_RLE};
    ordo__pq_thrift t;
    ordo__pq_thrift_init(&t, in, len);
    if (page_header(&t, page) == 0) {
        page->header_length = (size_t)(t.at - in);
        if (page->uncompressed < 0 || page->compressed < 0 || page->num_values < 0 ||
            page->num_rows < 0 || page->num_nulls < 0 || page->def_length < 0 ||
            page->rep_length < 0) {
            ordo__error(err, ORDO_INVALID, "shard '%s': Parquet page header at byte %llu: %s", path,
                        (unsigned long long)offset, "a negative size or count");
            return -1;
        }
        return 0;
    }
    if (t.short_input)
        return 1;
    ordo__error(err, ORDO_INVALID,
                "shard '%s': Parquet page header at byte %llu is corrupt at "
                "byte %llu: %s",
                path, (unsigned long long)offset,
                (unsigned long long)(offset + (size_t)(t.at - in)), t.problem);
    return -1;
}

static ordo_status page_error(const ordo__pq_reader *r, uint64_t offset, const char *detail,
                              ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID, "shard '%s': column '%s', page at byte %llu: %s", r->path,
                       r->column, (unsigned long long)offset, detail);
}

/* Gives a buffer to the reader; see parquet.h. */
ordo_status ordo__pq_reader_own(ordo__pq_reader *r, void *buffer, ordo_error *err)
{
    if (r->owned_count == r->owned_cap) {
        size_t cap = r->owned_cap ? 2 * r->owned_cap : 16;
        void **grown = realloc(r->owned, cap * sizeof *grown);
        if (!grown) {
            free(buffer);
            return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", r->path);
        }
        r->owned = grown;
        r->owned_cap = cap;
    }
    r->owned[r->owned_count++] = buffer;
    return ORDO_OK;
}

/* The page's body as its values are read: the body itself when stored
 * uncompressed, else decompressed into a buffer the reader keeps (values
 * point into it). */
static ordo_status body_bytes(ordo__pq_reader *r, const unsigned char *in, size_t len,
                              size_t expect, const char *what, const unsigned char **out,
                              ordo_error *err)
{
    if (r->codec == ORDO__PQ_UNCOMPRESSED && len == expect) {
        *out = in;
        return ORDO_OK;
    }
    unsigned char *page = malloc(expect ? expect : 1);
    if (!page)
        return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    ordo_status status = ordo__pq_decompress(r->codec, in, len, page, expect, what, err);
    if (status != ORDO_OK) {
        free(page);
        return status;
    }
    *out = page;
    return ordo__pq_reader_own(r, page, err);
}

static int bit_width(int max)
{
    int w = 0;
    while (max >> w)
        w++;
    return w;
}

/* Appends the page's rows' presence from its definition levels. */
static ordo_status levels(ordo__pq_reader *r, const unsigned char *in, size_t len, size_t rows,
                          size_t *values, const char *what, ordo_error *err)
{
    if (rows > r->limit / 4 || r->rows + rows > r->limit / 4) /* bounded before allocating */
        return ordo__error(err, ORDO_INVALID,
                           "%s: %zu rows, more than a chunk of %llu bytes may hold (a quarter "
                           "of its bytes)",
                           what, r->rows + rows, (unsigned long long)r->limit);
    *values = 0;
    if (rows == 0)
        return ORDO_OK;
    if (r->rows + rows > r->rows_cap) {
        size_t cap = r->rows_cap ? r->rows_cap : 1024;
        while (cap < r->rows + rows)
            cap *= 2;
        unsigned char *grown = realloc(r->present, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
        r->present = grown;
        r->rows_cap = cap;
    }
    unsigned char *present = r->present + r->rows;
    *values = rows;
    if (r->max_def == 0) {
        memset(present, 1, rows);
        return ORDO_OK;
    }
    uint32_t *def = malloc((rows ? rows : 1) * sizeof *def);
    if (!def)
        return ordo__error(err, ORDO_NOMEM, "%s: out of memory", what);
    ordo_status status = ordo__pq_rle_hybrid(in, len, bit_width(r->max_def), rows, def, NULL, err);
    *values = 0;
    for (size_t i = 0; status == ORDO_OK && i < rows; i++) {
        if (def[i] > (uint32_t)r->max_def)
            status = ordo__error(err, ORDO_INVALID, "definition level %u above the column's %d",
                                 def[i], r->max_def);
        present[i] = def[i] == (uint32_t)r->max_def;
        *values += present[i];
    }
    free(def);
    if (status != ORDO_OK) {
        char detail[ORDO_ERROR_MESSAGE_SIZE];
        snprintf(detail, sizeof detail, "%s", err->message);
        return ordo__error(err, ORDO_INVALID, "%s: definition levels: %s", what, detail);
    }
    return ORDO_OK;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static ordo_status data_v1(ordo__pq_reader *r, const ordo__pq_page *page, const unsigned char *body,
                           const char *what, ordo_error *err)
{
    const unsigned char *data = NULL;
    size_t len = (size_t)page->uncompressed, used = 0, values = 0;
    ordo_status status =
        body_bytes(r, body, (size_t)page->compressed, (size_t)page->uncompressed, what, &data, err);
    if (status == ORDO_OK && r->max_def > 0) {
        if (page->def_encoding != ORDO__PQ_RLE)
            return ordo__error(err, ORDO_INVALID, "%s: definition levels in %s are not read", what,
                               ordo__pq_encoding_name(page->def_encoding));
        if (len < 4 || le32(data) > len - 4)
            return ordo__error(err, ORDO_INVALID, "%s: definition levels beyond the page", what);
        used = 4 + le32(data);
    }
    if (status == ORDO_OK)
        status = levels(r, data + (used ? 4 : 0), used ? used - 4 : 0, (size_t)page->num_values,
                        &values, what, err);
    if (status == ORDO_OK)
        status =
            ordo__pq_decode_values(r, page->encoding, data + used, len - used, values, what, err);
    if (status == ORDO_OK)
        r->rows += (size_t)page->num_values;
    return status;
}

static ordo_status data_v2(ordo__pq_reader *r, const ordo__pq_page *page, const unsigned char *body,
                           const char *what, ordo_error *err)
{
    size_t head = (size_t)page->def_length + (size_t)page->rep_length, values = 0;
    if (head > (size_t)page->compressed || head > (size_t)page->uncompressed)
        return ordo__error(err, ORDO_INVALID, "%s: level lengths beyond the page", what);
    if (page->rep_length != 0 || (r->max_def == 0 && page->def_length != 0))
        return ordo__error(err, ORDO_INVALID, "%s: levels the column does not have", what);
    if (page->num_rows != page->num_values)
        return ordo__error(err, ORDO_INVALID, "%s: %d values in %d rows", what, page->num_values,
                           page->num_rows);
    ordo_status status = levels(r, body + page->rep_length, (size_t)page->def_length,
                                (size_t)page->num_rows, &values, what, err);
    const unsigned char *data = body + head;
    size_t len = (size_t)page->uncompressed - head;
    if (status == ORDO_OK && page->is_compressed)
        status = body_bytes(r, body + head, (size_t)page->compressed - head, len, what, &data, err);
    else if (status == ORDO_OK && page->compressed != page->uncompressed)
        return ordo__error(err, ORDO_INVALID, "%s: an uncompressed page of two sizes", what);
    if (status == ORDO_OK)
        status = ordo__pq_decode_values(r, page->encoding, data, len, values, what, err);
    if (status == ORDO_OK)
        r->rows += (size_t)page->num_rows;
    return status;
}

static ordo_status dictionary(ordo__pq_reader *r, const ordo__pq_page *page,
                              const unsigned char *body, const char *what, ordo_error *err)
{
    if (r->has_dict)
        return ordo__error(err, ORDO_INVALID, "%s: a second dictionary page", what);
    if (page->encoding != ORDO__PQ_PLAIN && page->encoding != ORDO__PQ_PLAIN_DICTIONARY)
        return ordo__error(err, ORDO_INVALID, "%s: a dictionary in %s is not read", what,
                           ordo__pq_encoding_name(page->encoding));
    const unsigned char *data = NULL;
    ordo_status status =
        body_bytes(r, body, (size_t)page->compressed, (size_t)page->uncompressed, what, &data, err);
    if (status == ORDO_OK)
        status = ordo__pq_decode_dictionary(r, data, (size_t)page->uncompressed,
                                            (size_t)page->num_values, what, err);
    r->has_dict = status == ORDO_OK;
    return status;
}

/* Decodes one page into the reader; see parquet.h. */
ordo_status ordo__pq_read_page(ordo__pq_reader *r, const ordo__pq_page *page,
                               const unsigned char *body, uint64_t offset, ordo_error *err)
{
    char what[ORDO_ERROR_MESSAGE_SIZE / 2];
    snprintf(what, sizeof what, "shard '%s': column '%s', page at byte %llu", r->path, r->column,
             (unsigned long long)offset);
    if (page->type == ORDO__PQ_INDEX_PAGE)
        return ORDO_OK;
    uint64_t most = r->page_limit ? r->page_limit : r->limit;
    r->dict_bytes.limit = (size_t)most;
    if ((uint64_t)page->uncompressed > most || (uint64_t)page->compressed > most)
        return ordo__error(err, ORDO_INVALID,
                           "%s: %d bytes (%d compressed), more than the %llu a page may hold (2 × "
                           "the chunk limit); write smaller pages",
                           what, page->uncompressed, page->compressed, (unsigned long long)most);
    if (page->type == ORDO__PQ_DICTIONARY_PAGE)
        return dictionary(r, page, body, what, err);
    if (page->type == ORDO__PQ_DATA_PAGE)
        return data_v1(r, page, body, what, err);
    if (page->type == ORDO__PQ_DATA_PAGE_V2)
        return data_v2(r, page, body, what, err);
    return page_error(r, offset, "a page of an unknown type", err);
}

/* Forgets decoded rows and the buffers they point into; see parquet.h. */
void ordo__pq_reader_clear(ordo__pq_reader *r)
{
    r->rows = 0;
    r->fixed_count = 0;
    r->view_count = 0;
    r->text_bytes = 0;
    for (size_t i = 0; i < r->owned_count; i++)
        free(r->owned[i]);
    r->owned_count = 0;
}

/* Frees everything the reader holds; see parquet.h. */
void ordo__pq_reader_free(ordo__pq_reader *r)
{
    ordo__pq_reader_clear(r);
    ordo__pq_bytes_free(&r->dict_bytes);
    free(r->dict_fixed);
    free(r->present);
    free(r->fixed);
    free(r->views);
    free(r->owned);
    r->dict_fixed = r->present = r->fixed = NULL;
    r->views = NULL;
    r->owned = NULL;
    r->rows_cap = r->fixed_cap = r->view_cap = r->owned_cap = 0;
    r->has_dict = 0;
    r->dict_count = 0;
}
