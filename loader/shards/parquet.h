/* Parquet inside shards/ (internal to the module): the value decoders of
 * a data page's encodings (parquet_encodings.c) and the column scan the
 * reader is built on (parquet_*.c). Errors from the decoders name the
 * encoding and what is wrong with its bytes; the caller prefixes file,
 * column and page. Every decoder reads only [in, in + len) and never
 * writes more than it is asked for. */
#ifndef ORDO_SHARDS_PARQUET_H
#define ORDO_SHARDS_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "shards.h"

/* Byte-array values: value i is data[offset[i], offset[i + 1]), count
 * values (count + 1 offsets). Grown by ordo__pq_bytes_push; freed by
 * ordo__pq_bytes_free. When `limit` is not 0, data never grows past it
 * (a push beyond is ORDO_INVALID): DELTA_BYTE_ARRAY's values can be far
 * larger than the page holding them. */
typedef struct ordo__pq_bytes {
    char *data;
    size_t size, cap;
    size_t *offset;
    size_t count, offset_cap;
    size_t limit;
} ordo__pq_bytes;

ordo_status ordo__pq_bytes_push(ordo__pq_bytes *values, const void *bytes, size_t len,
                                ordo_error *err);
void ordo__pq_bytes_free(ordo__pq_bytes *values);

/* The RLE / bit-packed hybrid (levels, dictionary indices, booleans):
 * `count` values of `bit_width` bits (0..32) into out; *used gets the
 * bytes consumed. */
ordo_status ordo__pq_rle_hybrid(const unsigned char *in, size_t len, int bit_width, size_t count,
                                uint32_t *out, size_t *used, ordo_error *err);

/* DELTA_BINARY_PACKED: `count` values into out (INT32 values are
 * returned widened, wrapping as the format's 32-bit arithmetic does when
 * `int32` is set); *used gets the bytes consumed (the DELTA byte-array
 * encodings need where the block ends). */
ordo_status ordo__pq_delta_binary(const unsigned char *in, size_t len, size_t count, int int32,
                                  int64_t *out, size_t *used, ordo_error *err);

/* DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY: `count` byte arrays
 * appended to *out. */
ordo_status ordo__pq_delta_length(const unsigned char *in, size_t len, size_t count,
                                  ordo__pq_bytes *out, ordo_error *err);
ordo_status ordo__pq_delta_byte_array(const unsigned char *in, size_t len, size_t count,
                                      ordo__pq_bytes *out, ordo_error *err);

/* BYTE_STREAM_SPLIT: `count` values of `width` bytes (4: FLOAT or INT32,
 * 8: DOUBLE or INT64) reassembled into out (count * width bytes, each
 * value little-endian as PLAIN would hold it). */
ordo_status ordo__pq_byte_stream_split(const unsigned char *in, size_t len, size_t count, int width,
                                       unsigned char *out, ordo_error *err);

/* One row's values of the columns a scan asked for, in the order asked
 * (kind MISSING where the file has no such column, NULL for a null). */
typedef int (*ordo__pq_row_fn)(void *context, uint64_t row, const ordo__field_value *values);

/* Reads every row of a Parquet file, giving the values of `columns`
 * (dotted paths of leaf columns; struct columns' leaves by their path)
 * to `fn` in row order: what the conformance tests and the fuzz target
 * compare with a real writer's files, through the same decoding the
 * chunk reader uses. */
ordo_status ordo__pq_scan_columns(const char *path, const char *const *columns, size_t count,
                                  ordo__pq_row_fn fn, void *context, ordo_error *err);

/* ---- The reader's own declarations (parquet_*.c) ---- */

/* Physical types, codecs, encodings and page types as parquet.thrift
 * numbers them. */
enum {
    ORDO__PQ_BOOLEAN = 0,
    ORDO__PQ_INT32 = 1,
    ORDO__PQ_INT64 = 2,
    ORDO__PQ_INT96 = 3,
    ORDO__PQ_FLOAT = 4,
    ORDO__PQ_DOUBLE = 5,
    ORDO__PQ_BYTE_ARRAY = 6,
    ORDO__PQ_FIXED_LEN_BYTE_ARRAY = 7
};
enum { ORDO__PQ_UNCOMPRESSED = 0, ORDO__PQ_SNAPPY = 1, ORDO__PQ_GZIP = 2, ORDO__PQ_ZSTD = 6 };
enum {
    ORDO__PQ_PLAIN = 0,
    ORDO__PQ_PLAIN_DICTIONARY = 2,
    ORDO__PQ_RLE = 3,
    ORDO__PQ_DELTA_BINARY_PACKED = 5,
    ORDO__PQ_DELTA_LENGTH_BYTE_ARRAY = 6,
    ORDO__PQ_DELTA_BYTE_ARRAY = 7,
    ORDO__PQ_RLE_DICTIONARY = 8,
    ORDO__PQ_BYTE_STREAM_SPLIT = 9
};
enum {
    ORDO__PQ_DATA_PAGE = 0,
    ORDO__PQ_INDEX_PAGE = 1,
    ORDO__PQ_DICTIONARY_PAGE = 2,
    ORDO__PQ_DATA_PAGE_V2 = 3
};

/* The names of those numbers, for messages ("codec LZ4"). */
const char *ordo__pq_type_name(int type);
const char *ordo__pq_codec_name(int codec);
const char *ordo__pq_encoding_name(int encoding);

/* The Thrift compact protocol over [at, end) (parquet_thrift.c). Every
 * call returns 0, or -1 with `problem` set (a static text) and `short_input`
 * set when the bytes ran out (more bytes may decode). */
typedef struct ordo__pq_thrift {
    const unsigned char *start, *at, *end;
    int depth;
    int short_input;
    const char *problem;
} ordo__pq_thrift;

#define ORDO__PQ_THRIFT_DEPTH 16 /* structs within structs, at most */

/* The compact protocol's element types. */
enum {
    ORDO__TT_TRUE = 1,
    ORDO__TT_FALSE = 2,
    ORDO__TT_BYTE = 3,
    ORDO__TT_I16 = 4,
    ORDO__TT_I32 = 5,
    ORDO__TT_I64 = 6,
    ORDO__TT_DOUBLE = 7,
    ORDO__TT_BINARY = 8,
    ORDO__TT_LIST = 9,
    ORDO__TT_SET = 10,
    ORDO__TT_MAP = 11,
    ORDO__TT_STRUCT = 12
};

void ordo__pq_thrift_init(ordo__pq_thrift *t, const unsigned char *data, size_t len);
/* Enters a struct (the depth limit) and leaves it; *last is the field id
 * the next field header is relative to (start it at 0). */
int ordo__pq_struct_begin(ordo__pq_thrift *t);
void ordo__pq_struct_end(ordo__pq_thrift *t);
/* The next field header: 1 with *id and *type, 0 at the struct's stop. */
int ordo__pq_field(ordo__pq_thrift *t, int *last, int *id, int *type);
int ordo__pq_i32(ordo__pq_thrift *t, int type, int32_t *out);
int ordo__pq_i64(ordo__pq_thrift *t, int type, int64_t *out);
int ordo__pq_bool(ordo__pq_thrift *t, int type, int *out);
/* A binary/string: *out points into the input, *len checked against it. */
int ordo__pq_binary(ordo__pq_thrift *t, int type, const unsigned char **out, size_t *len);
/* A list header: element type and size, the size at most the bytes left
 * (every element takes at least one byte), so it bounds an allocation. */
int ordo__pq_list(ordo__pq_thrift *t, int type, int *elem, size_t *size);
/* Skips one value of `type` (structs, lists and maps whole, depth bound). */
int ordo__pq_skip(ordo__pq_thrift *t, int type);

/* One leaf column of the schema: dotted path, physical type, levels. */
typedef struct ordo__pq_leaf {
    char *path;
    int type, type_length;
    int max_def, max_rep;
    char *repeated; /* dotted path of the repeated field above it, or NULL */
} ordo__pq_leaf;

/* One column chunk's metadata, as the footer gives it. */
typedef struct ordo__pq_column {
    int type, codec;
    int64_t num_values, total_compressed;
    int64_t data_offset, dict_offset; /* dict_offset -1: none */
    int external;                     /* file_path set: the chunk is in another file */
} ordo__pq_column;

typedef struct ordo__pq_group {
    int64_t num_rows;
    uint64_t first_row;       /* rows in the groups before it */
    ordo__pq_column *columns; /* one a leaf */
} ordo__pq_group;

/* A file's footer decoded: leaves in column order, row groups. */
typedef struct ordo__pq_meta {
    ordo__pq_leaf *leaves;
    size_t leaf_count;
    ordo__pq_group *groups;
    size_t group_count;
    int64_t num_rows;
} ordo__pq_meta;

/* Decodes FileMetaData from the footer's `len` bytes (parquet_meta.c);
 * errors name `path` and the footer's byte offset `base` + where. *meta is
 * the caller's, freed with ordo__pq_meta_free (also after an error). */
ordo_status ordo__pq_meta_decode(const char *path, const unsigned char *footer, size_t len,
                                 uint64_t base, ordo__pq_meta *meta, ordo_error *err);
void ordo__pq_meta_free(ordo__pq_meta *meta);

/* Opens `path` and reads its footer (parquet_index.c): magic at both
 * ends, the footer's length within the file, FileMetaData. *fd and *size
 * are the caller's (close *fd even after an error, when not -1). */
ordo_status ordo__pq_open(const char *path, int *fd, uint64_t *size, ordo__pq_meta *meta,
                          ordo_error *err);

/* The leaf at a dotted path (NULL: none), and the check that a column the
 * text field or a filter uses can be read: not under a repeated field, a
 * physical type it takes (`what`: "text column" or "filter column"). */
const ordo__pq_leaf *ordo__pq_find(const ordo__pq_meta *meta, const char *path, size_t *index);
ordo_status ordo__pq_usable(const char *path, const ordo__pq_leaf *leaf, int text, ordo_error *err);

/* A column chunk's bytes in the file: [start, end), checked within `size`. */
ordo_status ordo__pq_column_range(const char *path, const ordo__pq_leaf *leaf,
                                  const ordo__pq_column *column, uint64_t size, uint64_t *start,
                                  uint64_t *end, ordo_error *err);

/* One page header (parquet_page.c). */
typedef struct ordo__pq_page {
    int type;
    int32_t uncompressed, compressed;
    int32_t num_values, num_rows, num_nulls; /* num_rows: v2; v1 gets num_values */
    int encoding, def_encoding;
    int32_t def_length, rep_length; /* v2 */
    int is_compressed;              /* v2 (default 1) */
    size_t header_length;
} ordo__pq_page;

/* Decodes a page header from `len` bytes; 1 when they end before it does
 * (read more and try again), 0 when decoded, -1 with err set (naming
 * `path` and file offset `offset`) when corrupt. */
int ordo__pq_page_header(const char *path, uint64_t offset, const unsigned char *in, size_t len,
                         ordo__pq_page *page, ordo_error *err);

/* One byte-array value where it lies: a page, the dictionary or a buffer
 * its reader owns. */
typedef struct ordo__pq_view {
    const char *s;
    size_t len;
} ordo__pq_view;

/* What decoding a column's pages takes, and its decoded rows. */
typedef struct ordo__pq_reader {
    const char *path;      /* file, for messages */
    const char *column;    /* dotted path, for messages */
    int type, type_length; /* physical type */
    int codec, max_def;
    uint64_t limit;      /* the most decoded bytes (and rows × 4) it may hold in all */
    uint64_t page_limit; /* the most bytes one page may take, compressed or not */
    /* the dictionary, when a dictionary page was read */
    int has_dict;
    ordo__pq_bytes dict_bytes; /* BYTE_ARRAY */
    unsigned char *dict_fixed; /* other types: dict_count values of width bytes */
    size_t dict_count;
    /* decoded rows: present[r] 1 when row r has a value; values in order */
    unsigned char *present;
    size_t rows, rows_cap;
    ordo__pq_view *views; /* BYTE_ARRAY values, not copied out of their pages */
    size_t view_count, view_cap;
    uint64_t text_bytes;  /* the views' bytes, at most the limit */
    unsigned char *fixed; /* other types' values, width bytes each (BOOLEAN: 1) */
    size_t fixed_count, fixed_cap;
    void **owned; /* buffers the views point into (decompressed pages, decoded values) */
    size_t owned_count, owned_cap;
} ordo__pq_reader;

/* Gives `buffer` (malloc'd) to the reader, freed with its rows; on error
 * it is freed at once. */
ordo_status ordo__pq_reader_own(ordo__pq_reader *reader, void *buffer, ordo_error *err);

/* The bytes one value of a fixed-width type takes in reader->fixed. */
int ordo__pq_width(int type);

/* Decodes one page (`page`, whose header is at file offset `offset` and
 * whose body is `body`, page->compressed bytes): a dictionary page is
 * kept as the dictionary, a data page's rows are appended, an index page
 * is passed over. The values of an uncompressed page point into `body`,
 * which must outlive the rows. Errors name file, column and the page's
 * offset. */
ordo_status ordo__pq_read_page(ordo__pq_reader *reader, const ordo__pq_page *page,
                               const unsigned char *body, uint64_t offset, ordo_error *err);

/* Forgets the decoded rows (keeps the dictionary). */
void ordo__pq_reader_clear(ordo__pq_reader *reader);
void ordo__pq_reader_free(ordo__pq_reader *reader);

/* Decompresses a page body (parquet_codec.c) of `len` bytes into `out`,
 * exactly `expect` bytes (the header's size, already checked against the
 * limit): any other size is an error. `what` names the page for messages
 * ("shard 'x': column 'text', page at byte N"). */
ordo_status ordo__pq_decompress(int codec, const unsigned char *in, size_t len, unsigned char *out,
                                size_t expect, const char *what, ordo_error *err);

/* Decodes `count` values of one encoding (parquet_values.c) into the
 * reader's values; `in` holds the page's values section. */
ordo_status ordo__pq_decode_values(ordo__pq_reader *reader, int encoding, const unsigned char *in,
                                   size_t len, size_t count, const char *what, ordo_error *err);

/* Decodes a dictionary page's PLAIN values into the reader's dictionary. */
ordo_status ordo__pq_decode_dictionary(ordo__pq_reader *reader, const unsigned char *in, size_t len,
                                       size_t count, const char *what, ordo_error *err);

/* Whether [s, s + len) is valid UTF-8 (no overlongs, surrogates or code
 * points beyond U+10FFFF). */
int ordo__pq_utf8(const unsigned char *s, size_t len);

/* Reads `len` bytes at `offset` of `fd` into `out`; ORDO_IO naming the
 * file when it is shorter. */
ordo_status ordo__pq_pread(int fd, const char *path, uint64_t offset, void *out, size_t len,
                           ordo_error *err);

/* ---- Chunks: what one reads (parquet_plan.c, parquet_aux.c) ---- */

/* One column's bytes a chunk reads: its dictionary page (dict_length 0:
 * none) and the run of data pages holding the chunk's rows, the first
 * `skip` rows of which come before the chunk's first row. */
typedef struct ordo__pq_span {
    char *path; /* the leaf's dotted path (owned) */
    int type, codec, max_def;
    uint64_t dict_offset, dict_length;
    uint64_t data_offset, data_length;
    uint64_t skip;
} ordo__pq_span;

/* A chunk's plan, which its aux encodes: `rows` rows from spans[0] (the
 * text column) and the filter columns the file has (spans[1..]); `limit`
 * is the page bound (the indexer makes it 2 × the chunk limit: a chunk's
 * rows may lie in pages holding more): every page takes at most that, a
 * column's decoded values at most 3 × that (two partial pages and the
 * chunk's text between), the chunk's file bytes at most 4 × that. */
typedef struct ordo__pq_plan {
    uint64_t limit, rows;
    ordo__pq_span *spans;
    size_t span_count;
} ordo__pq_plan;

/* The aux's bytes of a plan (*out the caller's, freed with free), and a
 * plan from them (errors name `path` and the chunk `index`); a decoded
 * plan is freed with ordo__pq_plan_free. */
ordo_status ordo__pq_aux_encode(const ordo__pq_plan *plan, unsigned char **out, size_t *len,
                                ordo_error *err);
ordo_status ordo__pq_aux_decode(const char *path, uint32_t index, const unsigned char *aux,
                                size_t len, ordo__pq_plan *plan, ordo_error *err);
void ordo__pq_plan_free(ordo__pq_plan *plan);

/* The file bytes a plan reads, in order: its length, and the smallest
 * offset. */
uint64_t ordo__pq_plan_length(const ordo__pq_plan *plan);
uint64_t ordo__pq_plan_offset(const ordo__pq_plan *plan);

/* Runs a plan over file `fd`: reads its bytes (at most 4 * limit, else an
 * error), checks them against `chunk`'s digest (chunk NULL: puts their
 * digest in `digest`), decodes its columns and decides every row (`first_row`
 * the physical index of its first, for messages): `fn` gets each kept
 * document with its row in the chunk, *counts gets every row counted, *text
 * (may be NULL) the bytes of every row's text. */
ordo_status ordo__pq_plan_run(const char *path, int fd, const ordo__pq_plan *plan,
                              const ordo__chunk *chunk, uint32_t index, uint64_t first_row,
                              const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                              ordo__counts *counts, unsigned char *digest, uint64_t *text,
                              ordo_error *err);

/* Decodes the pages in [at, end) of `bytes` (file offset `base` at
 * bytes[0]) into `reader` (parquet_plan.c). */
ordo_status ordo__pq_read_pages(ordo__pq_reader *reader, const unsigned char *bytes, size_t len,
                                uint64_t base, ordo_error *err);

/* ---- Indexing: a column chunk's pages (parquet_walk.c) ---- */

typedef struct ordo__pq_place {
    uint64_t offset, length; /* header and body in the file */
    uint64_t first_row, rows;
    uint64_t text_bytes; /* decoded value bytes (when the walk decodes) */
} ordo__pq_place;

/* The pages of one column chunk [start, end): its dictionary page apart,
 * the others in order with their rows. */
typedef struct ordo__pq_pages {
    uint64_t start, end;
    uint64_t dict_offset, dict_length;
    ordo__pq_place *pages;
    size_t count, cap;
    uint64_t rows, values;
} ordo__pq_pages;

/* Walks the pages of [start, end) of `fd` with `reader` (its path,
 * column, type, codec, levels and limit set), reading one header at a
 * time; with `decode`, each page's text_bytes: at most its uncompressed
 * size for PLAIN and DELTA_LENGTH_BYTE_ARRAY pages (taken as the bound,
 * undecoded), decoded for the others (dictionary indices, DELTA_BYTE_ARRAY:
 * their values may be larger than their page). *w is the caller's, freed
 * with ordo__pq_walk_free (also after an error). */
ordo_status ordo__pq_walk(int fd, ordo__pq_reader *reader, uint64_t start, uint64_t end, int decode,
                          ordo__pq_pages *w, ordo_error *err);
/* Decodes the page at `page` (as a walk found it) into `reader`, its rows
 * appended (and kept until the reader is cleared). */
ordo_status ordo__pq_walk_decode(int fd, ordo__pq_reader *reader, const ordo__pq_place *page,
                                 ordo_error *err);
/* The span of the pages holding rows [first, first + rows). */
void ordo__pq_walk_span(const ordo__pq_pages *w, uint64_t first, uint64_t rows,
                        ordo__pq_span *span);
void ordo__pq_walk_free(ordo__pq_pages *w);

#endif
