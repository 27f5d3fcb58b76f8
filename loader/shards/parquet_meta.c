/* Parquet footers: FileMetaData decoded into leaf columns (dotted paths,
 * physical types, definition levels) and row groups' column chunks. */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

/* One SchemaElement, as read (name points into the footer). */
typedef struct {
    int type, type_length, repetition, children;
    const unsigned char *name;
    size_t name_len;
} element;

typedef struct {
    ordo__pq_thrift t;
    element *elements;
    size_t element_count;
} decoder;

static int read_element(ordo__pq_thrift *t, element *e)
{
    *e = (element){.type = -1, .repetition = 0};
    int last = 0, id = 0, type = 0, r;
    int32_t v = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1 && (r = ordo__pq_i32(t, type, &v)) == 0)
            e->type = v;
        else if (id == 2 && (r = ordo__pq_i32(t, type, &v)) == 0)
            e->type_length = v;
        else if (id == 3 && (r = ordo__pq_i32(t, type, &v)) == 0)
            e->repetition = v;
        else if (id == 4)
            r = ordo__pq_binary(t, type, &e->name, &e->name_len);
        else if (id == 5 && (r = ordo__pq_i32(t, type, &v)) == 0)
            e->children = v;
        else if (id < 1 || id > 5)
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    if (r == 0 && !e->name)
        t->problem = "a schema element without a name", r = -1;
    if (r == 0 && (e->children < 0 || e->repetition < 0 || e->repetition > 2))
        t->problem = "a schema element with a bad child count or repetition", r = -1;
    return r;
}

static int read_schema(decoder *d, int type)
{
    int elem = 0;
    size_t n = 0;
    if (ordo__pq_list(&d->t, type, &elem, &n) != 0)
        return -1;
    if (elem != ORDO__TT_STRUCT || n == 0 || d->elements) {
        d->t.problem = "a schema that is not one list of elements";
        return -1;
    }
    d->elements = calloc(n, sizeof *d->elements);
    if (!d->elements) {
        d->t.problem = "out of memory";
        return -1;
    }
    d->element_count = n;
    for (size_t i = 0; i < n; i++)
        if (read_element(&d->t, &d->elements[i]) != 0)
            return -1;
    return 0;
}

/* Walks the schema tree from element *at (its children follow it). */
static int add_leaves(decoder *d, ordo__pq_meta *meta, size_t *at, const char *prefix, int def,
                      int rep, const char *repeated, int depth)
{
    if (depth >= 64)
        return d->t.problem = "a schema nested more than 64 deep", -1;
    const element *e = &d->elements[(*at)++];
    size_t plen = strlen(prefix);
    char *path = malloc(plen + e->name_len + 2);
    if (!path)
        return d->t.problem = "out of memory", -1;
    snprintf(path, plen + e->name_len + 2, "%s%s%.*s", prefix, plen ? "." : "", (int)e->name_len,
             (const char *)e->name);
    def += e->repetition != 0;
    rep += e->repetition == 2;
    const char *under = repeated ? repeated : e->repetition == 2 ? path : NULL;
    int r = 0;
    if (e->children == 0) {
        ordo__pq_leaf *leaf = &meta->leaves[meta->leaf_count++];
        *leaf = (ordo__pq_leaf){path, e->type, e->type_length, def, rep, ordo__strdup(under)};
        if (e->type < 0 || (under && !leaf->repeated))
            r = -1, d->t.problem = e->type < 0 ? "a leaf column without a type" : "out of memory";
        return r;
    }
    for (int c = 0; r == 0 && c < e->children; c++) {
        if (*at >= d->element_count)
            r = -1, d->t.problem = "a schema whose child counts exceed its elements";
        else
            r = add_leaves(d, meta, at, path, def, rep, under, depth + 1);
    }
    free(path);
    return r;
}

static int build_leaves(decoder *d, ordo__pq_meta *meta)
{
    meta->leaves = calloc(d->element_count, sizeof *meta->leaves);
    if (!meta->leaves)
        return d->t.problem = "out of memory", -1;
    const element *root = &d->elements[0];
    size_t at = 1;
    for (int c = 0; c < root->children; c++) {
        if (at >= d->element_count)
            return d->t.problem = "a schema whose child counts exceed its elements", -1;
        if (add_leaves(d, meta, &at, "", 0, 0, NULL, 0) != 0)
            return -1;
    }
    if (at != d->element_count)
        return d->t.problem = "a schema with elements outside its tree", -1;
    return 0;
}

static int read_column_meta(ordo__pq_thrift *t, ordo__pq_column *c)
{
    int last = 0, id = 0, type = 0, r;
    int32_t v = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1 && (r = ordo__pq_i32(t, type, &v)) == 0)
            c->type = v;
        else if (id == 4 && (r = ordo__pq_i32(t, type, &v)) == 0)
            c->codec = v;
        else if (id == 5)
            r = ordo__pq_i64(t, type, &c->num_values);
        else if (id == 7)
            r = ordo__pq_i64(t, type, &c->total_compressed);
        else if (id == 9)
            r = ordo__pq_i64(t, type, &c->data_offset);
        else if (id == 11)
            r = ordo__pq_i64(t, type, &c->dict_offset);
        else if (id != 1 && id != 4)
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    return r;
}

static int read_chunk(ordo__pq_thrift *t, ordo__pq_column *c)
{
    *c = (ordo__pq_column){.type = -1, .codec = -1, .data_offset = -1, .dict_offset = -1};
    int last = 0, id = 0, type = 0, r, has_meta = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1)
            c->external = 1;
        if (id == 3 && type == ORDO__TT_STRUCT)
            r = read_column_meta(t, c), has_meta = 1;
        else
            r = ordo__pq_skip(t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    if (r == 0 && !has_meta)
        return t->problem = "a column chunk without its metadata", -1;
    return r;
}

static int read_group(ordo__pq_thrift *t, const ordo__pq_meta *meta, ordo__pq_group *g)
{
    int last = 0, id = 0, type = 0, r, elem = 0;
    size_t n = 0;
    if (ordo__pq_struct_begin(t) != 0)
        return -1;
    g->num_rows = -1;
    while ((r = ordo__pq_field(t, &last, &id, &type)) == 1) {
        if (id == 1 && !g->columns) {
            if (ordo__pq_list(t, type, &elem, &n) != 0)
                return -1;
            if (elem != ORDO__TT_STRUCT || n != meta->leaf_count)
                return t->problem = "a row group whose columns are not the schema's leaves", -1;
            g->columns = calloc(n ? n : 1, sizeof *g->columns);
            if (!g->columns)
                return t->problem = "out of memory", -1;
            for (size_t i = 0; i < n; i++)
                if (read_chunk(t, &g->columns[i]) != 0)
                    return -1;
            r = 0;
        } else if (id == 3) {
            r = ordo__pq_i64(t, type, &g->num_rows);
        } else {
            r = ordo__pq_skip(t, type);
        }
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(t);
    if (r == 0 && (!g->columns || g->num_rows < 0))
        return t->problem = "a row group without its columns or row count", -1;
    return r;
}

static int read_groups(decoder *d, ordo__pq_meta *meta, int type)
{
    int elem = 0;
    size_t n = 0;
    if (!meta->leaves || meta->groups)
        return d->t.problem = "row groups before the schema", -1;
    if (ordo__pq_list(&d->t, type, &elem, &n) != 0)
        return -1;
    if (elem != ORDO__TT_STRUCT && n > 0)
        return d->t.problem = "row groups that are not structs", -1;
    meta->groups = calloc(n ? n : 1, sizeof *meta->groups);
    if (!meta->groups)
        return d->t.problem = "out of memory", -1;
    uint64_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        meta->group_count++;
        if (read_group(&d->t, meta, &meta->groups[i]) != 0)
            return -1;
        meta->groups[i].first_row = rows;
        rows += (uint64_t)meta->groups[i].num_rows;
        if (rows > (uint64_t)INT64_MAX)
            return d->t.problem = "more rows than 63 bits count", -1;
    }
    return 0;
}

static int read_file_meta(decoder *d, ordo__pq_meta *meta)
{
    int last = 0, id = 0, type = 0, r;
    meta->num_rows = -1;
    if (ordo__pq_struct_begin(&d->t) != 0)
        return -1;
    while ((r = ordo__pq_field(&d->t, &last, &id, &type)) == 1) {
        if (id == 2)
            r = read_schema(d, type) != 0 || build_leaves(d, meta) != 0 ? -1 : 0;
        else if (id == 3)
            r = ordo__pq_i64(&d->t, type, &meta->num_rows);
        else if (id == 4)
            r = read_groups(d, meta, type);
        else
            r = ordo__pq_skip(&d->t, type);
        if (r != 0)
            return -1;
    }
    ordo__pq_struct_end(&d->t);
    if (r == 0 && (!meta->leaves || !meta->groups || meta->num_rows < 0))
        return d->t.problem = "no schema, row groups or row count", -1;
    return r;
}

/* Decodes the footer; see parquet.h. */
ordo_status ordo__pq_meta_decode(const char *path, const unsigned char *footer, size_t len,
                                 uint64_t base, ordo__pq_meta *meta, ordo_error *err)
{
    *meta = (ordo__pq_meta){0};
    decoder d = {0};
    ordo__pq_thrift_init(&d.t, footer, len);
    int r = read_file_meta(&d, meta);
    free(d.elements);
    if (r != 0)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': Parquet footer (FileMetaData at byte %llu) is corrupt at "
                           "byte %llu: %s",
                           path, (unsigned long long)base,
                           (unsigned long long)(base + (uint64_t)(d.t.at - footer)), d.t.problem);
    uint64_t rows = 0;
    for (size_t i = 0; i < meta->group_count; i++)
        rows += (uint64_t)meta->groups[i].num_rows;
    if (rows != (uint64_t)meta->num_rows)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': Parquet footer says %lld rows, its row groups hold %llu",
                           path, (long long)meta->num_rows, (unsigned long long)rows);
    return ORDO_OK;
}

/* Frees what ordo__pq_meta_decode allocated; see parquet.h. */
void ordo__pq_meta_free(ordo__pq_meta *meta)
{
    for (size_t i = 0; i < meta->leaf_count; i++) {
        free(meta->leaves[i].path);
        free(meta->leaves[i].repeated);
    }
    free(meta->leaves);
    for (size_t i = 0; i < meta->group_count; i++)
        free(meta->groups[i].columns);
    free(meta->groups);
    *meta = (ordo__pq_meta){0};
}
