/* Parquet files: the footer (magic at both ends, its length within the
 * file), finding leaf columns by dotted path and what a column the text
 * field or a filter uses must be, and reading bytes at an offset. */
#define _DEFAULT_SOURCE /* pread */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parquet.h"

/* Reads bytes at an offset; see parquet.h. */
ordo_status ordo__pq_pread(int fd, const char *path, uint64_t offset, void *out, size_t len,
                           ordo_error *err)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)out + got, len - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return ordo__error(err, ORDO_IO, "shard '%s': cannot read %zu bytes at byte %llu%s",
                               path, len, (unsigned long long)offset,
                               n == 0 ? " (the file is shorter)" : "");
        got += (size_t)n;
    }
    return ORDO_OK;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static ordo_status read_footer(const char *path, int fd, uint64_t size, ordo__pq_meta *meta,
                               ordo_error *err)
{
    unsigned char head[4], tail[8];
    if (size < 12)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': %llu bytes, too short for a Parquet file (magic, "
                           "footer, length, magic)",
                           path, (unsigned long long)size);
    ordo_status status = ordo__pq_pread(fd, path, 0, head, 4, err);
    if (status == ORDO_OK)
        status = ordo__pq_pread(fd, path, size - 8, tail, 8, err);
    if (status != ORDO_OK)
        return status;
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': not a Parquet file (no 'PAR1' magic at byte %llu)", path,
                           memcmp(head, "PAR1", 4) ? 0ull : (unsigned long long)(size - 4));
    uint64_t len = le32(tail);
    if (len > size - 12 || len > ORDO__CHUNK_MAX)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': Parquet footer length %llu (at byte %llu) is beyond the "
                           "file's %llu bytes",
                           path, (unsigned long long)len, (unsigned long long)(size - 8),
                           (unsigned long long)size);
    unsigned char *footer = malloc(len ? len : 1);
    if (!footer)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    uint64_t base = size - 8 - len;
    status = ordo__pq_pread(fd, path, base, footer, (size_t)len, err);
    if (status == ORDO_OK)
        status = ordo__pq_meta_decode(path, footer, (size_t)len, base, meta, err);
    free(footer);
    return status;
}

/* Opens a Parquet file and decodes its footer; see parquet.h. */
ordo_status ordo__pq_open(const char *path, int *fd, uint64_t *size, ordo__pq_meta *meta,
                          ordo_error *err)
{
    *meta = (ordo__pq_meta){0};
    ordo_status status = ordo__open_regular(path, "shard", fd, err);
    if (status != ORDO_OK)
        return status;
    struct stat st;
    if (fstat(*fd, &st) != 0)
        return ordo__error(err, ORDO_IO, "cannot stat shard '%s'", path);
    *size = (uint64_t)st.st_size;
    return read_footer(path, *fd, *size, meta, err);
}

/* The leaf at a dotted path; see parquet.h. */
const ordo__pq_leaf *ordo__pq_find(const ordo__pq_meta *meta, const char *path, size_t *index)
{
    for (size_t i = 0; i < meta->leaf_count; i++)
        if (strcmp(meta->leaves[i].path, path) == 0) {
            if (index)
                *index = i;
            return &meta->leaves[i];
        }
    return NULL;
}

/* Whether the text field or a filter can use a column; see parquet.h. */
ordo_status ordo__pq_usable(const char *path, const ordo__pq_leaf *leaf, int text, ordo_error *err)
{
    const char *what = text ? "text column" : "filter column";
    if (leaf->repeated)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': %s '%s' is inside the repeated field '%s' (a list or "
                           "map); only columns outside lists and maps are read",
                           path, what, leaf->path, leaf->repeated);
    if (text && leaf->type != ORDO__PQ_BYTE_ARRAY)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': text column '%s' is %s, not BYTE_ARRAY (a string)", path,
                           leaf->path, ordo__pq_type_name(leaf->type));
    if (leaf->type != ORDO__PQ_BYTE_ARRAY && ordo__pq_width(leaf->type) == 0)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': %s '%s' is %s, which is not read (BOOLEAN, INT32, INT64, "
                           "FLOAT, DOUBLE and BYTE_ARRAY are)",
                           path, what, leaf->path, ordo__pq_type_name(leaf->type));
    return ORDO_OK;
}

/* A column chunk's byte range; see parquet.h. */
ordo_status ordo__pq_column_range(const char *path, const ordo__pq_leaf *leaf,
                                  const ordo__pq_column *column, uint64_t size, uint64_t *start,
                                  uint64_t *end, ordo_error *err)
{
    if (column->external)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': column '%s' has a chunk in another file, which is not "
                           "read",
                           path, leaf->path);
    if (column->type != leaf->type)
        return ordo__error(
            err, ORDO_INVALID, "shard '%s': column '%s' has a chunk of type %s, its schema says %s",
            path, leaf->path, ordo__pq_type_name(column->type), ordo__pq_type_name(leaf->type));
    if (column->codec != ORDO__PQ_UNCOMPRESSED && column->codec != ORDO__PQ_SNAPPY &&
        column->codec != ORDO__PQ_GZIP && column->codec != ORDO__PQ_ZSTD)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': column '%s' is compressed with %s, which is not read "
                           "(UNCOMPRESSED, SNAPPY, GZIP and ZSTD are)",
                           path, leaf->path, ordo__pq_codec_name(column->codec));
    int64_t first = column->data_offset;
    if (column->dict_offset > 0 && column->dict_offset < first)
        first = column->dict_offset;
    if (first < 4 || column->total_compressed < 0 || (uint64_t)first > size ||
        (uint64_t)column->total_compressed > size - (uint64_t)first || column->num_values < 0)
        return ordo__error(err, ORDO_INVALID,
                           "shard '%s': column '%s' has a chunk of %lld bytes at byte %lld, "
                           "beyond the file's %llu bytes",
                           path, leaf->path, (long long)column->total_compressed, (long long)first,
                           (unsigned long long)size);
    *start = (uint64_t)first;
    *end = (uint64_t)first + (uint64_t)column->total_compressed;
    return ORDO_OK;
}
