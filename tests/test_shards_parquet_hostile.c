#define _GNU_SOURCE /* memmem */
/* Parquet shards that are wrong: truncated, unframed, corrupt footers,
 * Thrift lists and nesting beyond the bytes, pages beyond their chunk,
 * decompression bombs, text that is not UTF-8, columns and codecs that
 * are not read, files changed after (or while) they were indexed. Each is
 * a clear error naming the file and where, and indexes nothing. The files
 * are made here, byte by byte, by a small Thrift compact writer. */
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "testing.h"
#include "harness.h"

/* ---- a Thrift compact writer, just enough for a footer ---- */

typedef struct {
    unsigned char *b;
    size_t n, cap;
    int last[64];
    int depth;
} tw;

static void put(tw *w, const void *bytes, size_t len)
{
    if (w->n + len > w->cap) {
        w->cap = (w->n + len) * 2 + 256;
        w->b = realloc(w->b, w->cap);
        ASSERT(w->b != NULL);
    }
    if (len)
        memcpy(w->b + w->n, bytes, len);
    w->n += len;
}

static void byte(tw *w, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(w, &c, 1);
}

static void varint(tw *w, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        byte(w, (unsigned)(v & 0x7f) | 0x80);
    byte(w, (unsigned)v);
}

static void zigzag(tw *w, int64_t v)
{
    varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void field(tw *w, int id, int type)
{
    int delta = id - w->last[w->depth];
    if (delta > 0 && delta <= 15)
        byte(w, (unsigned)(delta << 4 | type));
    else
        byte(w, (unsigned)type), zigzag(w, id);
    w->last[w->depth] = id;
}

static void begin(tw *w)
{
    w->last[++w->depth] = 0;
}

static void end(tw *w)
{
    byte(w, 0);
    w->depth--;
}

static void f_i32(tw *w, int id, int64_t v)
{
    field(w, id, 5), zigzag(w, v);
}

static void f_i64(tw *w, int id, int64_t v)
{
    field(w, id, 6), zigzag(w, v);
}

static void f_str(tw *w, int id, const char *s)
{
    field(w, id, 8), varint(w, strlen(s)), put(w, s, strlen(s));
}

static void list(tw *w, int elem, uint64_t n)
{
    if (n < 15)
        byte(w, (unsigned)(n << 4) | (unsigned)elem);
    else
        byte(w, 0xf0u | (unsigned)elem), varint(w, n);
}

/* ---- hand-made files: one row group, one column "text", one page ---- */

typedef struct {
    int type, codec, encoding;
    int repeated; /* the leaf inside a repeated group "tags" */
    const unsigned char *body;
    size_t body_len;
    int64_t uncompressed; /* the page header's; -1: body_len */
    int64_t compressed;   /* -1: body_len */
    int64_t chunk_extra;  /* added to the column chunk's total_compressed_size */
    int rows;
    size_t stats;                /* bytes of a max_value statistic in the page header (0: none) */
    const unsigned char *prefix; /* pages before the data page (an index page, a dictionary) */
    size_t prefix_len;
} hand;

static void schema(tw *w, const hand *h)
{
    field(w, 2, 9), list(w, 12, h->repeated ? 3 : 2);
    begin(w), f_str(w, 4, "schema"), f_i32(w, 5, 1), end(w);
    if (h->repeated)
        begin(w), f_i32(w, 3, 2), f_str(w, 4, "tags"), f_i32(w, 5, 1), end(w);
    begin(w), f_i32(w, 1, h->type), f_i32(w, 3, 0), f_str(w, 4, "text"), end(w);
}

static void column_chunk(tw *w, const hand *h, int64_t page_bytes)
{
    begin(w);
    f_i64(w, 2, 4);
    field(w, 3, 12), begin(w);
    f_i32(w, 1, h->type);
    field(w, 2, 9), list(w, 5, 1), zigzag(w, h->encoding);
    field(w, 3, 9), list(w, 8, h->repeated ? 2 : 1);
    if (h->repeated)
        varint(w, 4), put(w, "tags", 4);
    varint(w, 4), put(w, "text", 4);
    f_i32(w, 4, h->codec);
    f_i64(w, 5, h->rows);
    f_i64(w, 6, page_bytes);
    f_i64(w, 7, page_bytes + h->chunk_extra);
    f_i64(w, 9, 4);
    end(w);
    end(w);
}

/* The file's bytes (caller frees); *footer gets where the footer starts. */
static unsigned char *hand_file(const hand *h, size_t *size, size_t *footer)
{
    tw w = {0};
    put(&w, "PAR1", 4);
    if (h->prefix_len)
        put(&w, h->prefix, h->prefix_len);
    tw page = {0};
    begin(&page);
    f_i32(&page, 1, 0);
    f_i32(&page, 2, h->uncompressed >= 0 ? h->uncompressed : (int64_t)h->body_len);
    f_i32(&page, 3, h->compressed >= 0 ? h->compressed : (int64_t)h->body_len);
    field(&page, 5, 12), begin(&page);
    f_i32(&page, 1, h->rows), f_i32(&page, 2, h->encoding), f_i32(&page, 3, 3), f_i32(&page, 4, 3);
    if (h->stats) {
        char *value = malloc(h->stats + 1);
        memset(value, 'z', h->stats);
        value[h->stats] = 0;
        field(&page, 5, 12), begin(&page), f_str(&page, 5, value), end(&page);
        free(value);
    }
    end(&page);
    end(&page);
    put(&w, page.b, page.n);
    put(&w, h->body, h->body_len);
    int64_t page_bytes = (int64_t)(h->prefix_len + page.n + h->body_len);
    free(page.b);
    *footer = w.n;
    begin(&w);
    f_i32(&w, 1, 1);
    schema(&w, h);
    f_i64(&w, 3, h->rows);
    field(&w, 4, 9), list(&w, 12, 1);
    begin(&w);
    field(&w, 1, 9), list(&w, 12, 1);
    column_chunk(&w, h, page_bytes);
    f_i64(&w, 2, page_bytes), f_i64(&w, 3, h->rows);
    end(&w);
    end(&w);
    uint32_t len = (uint32_t)(w.n - *footer);
    unsigned char tail[8] = {(unsigned char)len,
                             (unsigned char)(len >> 8),
                             (unsigned char)(len >> 16),
                             (unsigned char)(len >> 24),
                             'P',
                             'A',
                             'R',
                             '1'};
    put(&w, tail, 8);
    *size = w.n;
    return w.b;
}

/* PLAIN byte arrays of the texts. */
static size_t plain(const char *const *texts, int n, unsigned char *out)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        uint32_t len = (uint32_t)strlen(texts[i]);
        memcpy(out + at, &len, 4);
        memcpy(out + at + 4, texts[i], len);
        at += 4 + len;
    }
    return at;
}

static const char *const two[] = {"alpha", "beta"};

static hand plain_hand(unsigned char *body)
{
    return (hand){.type = 6,
                  .body = body,
                  .body_len = plain(two, 2, body),
                  .uncompressed = -1,
                  .compressed = -1,
                  .rows = 2};
}

/* Indexes a file of `bytes`; the shard keeps its sentinel table unless
 * the index succeeds (nothing half-indexed). */
static ordo_status index_bytes(const unsigned char *bytes, size_t size, const char *text,
                               ordo__shard *out, ordo_error *err)
{
    const char *path = test_path("hand.parquet");
    test_write_file(path, bytes, size);
    ordo__chunk *sentinel = calloc(1, sizeof *sentinel); /* freed by a successful index */
    ordo__shard shard = {
        .path = (char *)path, .format = ORDO_FORMAT_PARQUET, .chunks = sentinel, .chunk_count = 7};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, err), err);
    ordo__index_spec spec = {
        .read = {text, NULL, 0, 0}, .chunk_limit = (uint64_t)4 << 20, .lanes = 1};
    ordo_status status = ordo__shard_index(path, &shard, &spec, err);
    if (status != ORDO_OK) {
        ASSERT(shard.chunks == sentinel && shard.chunk_count == 7 && !shard.aux);
        ASSERT_CONTAINS(err->message, path);
        free(sentinel);
    }
    if (out)
        *out = shard;
    else if (status == ORDO_OK)
        free(shard.chunks), free(shard.aux);
    return status;
}

static void refused(const unsigned char *bytes, size_t size, const char *text, const char *says)
{
    ordo_error err;
    ASSERT_STATUS(index_bytes(bytes, size, text, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, says);
}

static int collect(void *context, const char *text, size_t len, uint64_t record)
{
    char *out = context;
    snprintf(out + strlen(out), 64, "%llu:%.*s;", (unsigned long long)record, (int)len, text);
    return 0;
}

TEST(parquet_hand_made_file_reads)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_bytes(file, size, "text", &shard, &err), &err);
    ASSERT_EQ_INT(shard.chunk_count, 1);
    char got[256] = "";
    ordo__read_spec read = {"text", NULL, 0, 0};
    ASSERT_OK(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:alpha;1:beta;");
    free(shard.chunks);
    free(shard.aux);
    free(file);
}

TEST(parquet_long_page_header_is_read_in_pieces)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    h.stats = 5000; /* a statistic longer than the first read of a header */
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_bytes(file, size, "text", &shard, &err), &err);
    char got[256] = "";
    ordo__read_spec read = {"text", NULL, 0, 0};
    ASSERT_OK(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:alpha;1:beta;");
    free(shard.chunks);
    free(shard.aux);
    free(file);
}

TEST(parquet_truncated_or_unframed_files_are_refused)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    refused(file, 11, "text", "too short for a Parquet file");
    size_t cuts[] = {size - 1, size - 4, size - 8, footer + 3, 40};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        refused(file, cuts[i], "text", "not a Parquet file (no 'PAR1' magic at byte");
    unsigned char *copy = malloc(size);
    memcpy(copy, file, size);
    copy[1] = 'B';
    refused(copy, size, "text", "no 'PAR1' magic at byte 0");
    memcpy(copy, file, size);
    copy[size - 2] = 'X';
    char where[64];
    snprintf(where, sizeof where, "no 'PAR1' magic at byte %zu", size - 4);
    refused(copy, size, "text", where);
    memcpy(copy, file, size);
    memcpy(copy + size - 8, "\xf0\xff\xff\xff", 4); /* the footer's length beyond the file */
    refused(copy, size, "text", "footer length 4294967280");
    /* a footer length short of the footer: its Thrift starts mid-struct or ends early */
    memcpy(copy, file, size);
    uint32_t len = (uint32_t)(size - 8 - footer) - 5;
    memcpy(copy + size - 8, &len, 4);
    refused(copy, size, "text", "Parquet footer (FileMetaData at byte");
    free(copy);
    free(file);
}

TEST(parquet_corrupt_footer_bytes_are_errors_never_faults)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    unsigned char *copy = malloc(size);
    const unsigned char masks[] = {0xff, 0x80, 0x0f, 0x01};
    int refusals = 0;
    for (size_t at = footer; at < size - 8; at++)
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(copy, file, size);
            copy[at] ^= masks[m];
            ordo_error err;
            ordo_status status = index_bytes(copy, size, "text", NULL, &err);
            ASSERT(status == ORDO_OK || status == ORDO_INVALID);
            refusals += status != ORDO_OK;
        }
    ASSERT(refusals > (int)(size - 8 - footer)); /* most damage is seen */
    free(copy);
    free(file);
}

/* A footer of one field whose value is given by `value`. */
static void footer_only(void (*value)(tw *), const char *says)
{
    tw w = {0};
    put(&w, "PAR1", 4);
    begin(&w);
    value(&w);
    end(&w);
    uint32_t len = (uint32_t)(w.n - 4);
    put(&w, &len, 4);
    put(&w, "PAR1", 4);
    refused(w.b, w.n, "text", says);
    free(w.b);
}

static void huge_schema(tw *w)
{
    field(w, 2, 9), list(w, 12, (uint64_t)1 << 31);
    byte(w, 0);
}

static void deep_structs(tw *w)
{
    for (int i = 0; i < 40; i++) /* an unknown field: skipped by type, depth bound */
        field(w, 99, 12), begin(w);
    for (int i = 0; i < 40; i++)
        end(w);
}

static void huge_string(tw *w)
{
    field(w, 6, 8), varint(w, (uint64_t)1 << 40);
}

TEST(parquet_thrift_lengths_lists_and_nesting_are_bounded)
{
    footer_only(huge_schema, "a list longer than the bytes left");
    footer_only(deep_structs, "structs nested too deep");
    footer_only(huge_string, "the bytes end inside a value");
}

TEST(parquet_page_beyond_its_column_chunk_is_refused)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    h.compressed = (int64_t)h.body_len + 1000;
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "run past its column chunk's end at byte");
    free(file);
    h = plain_hand(body);
    h.chunk_extra = 1 << 20;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "beyond the file's");
    free(file);
}

TEST(parquet_decompression_bomb_is_a_bounded_error)
{
    size_t zeros = (size_t)8 << 20;
    unsigned char *big = calloc(zeros, 1);
    unsigned char *packed = malloc(snappy_max_compressed_length(zeros));
    hand h = {.type = 6, .uncompressed = (int64_t)1 << 30, .compressed = -1, .rows = 2};
    unsigned char body[64];
    h.body = body, h.body_len = plain(two, 2, body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer); /* says 1 GiB: refused unallocated */
    refused(file, size, "text", "more than the 8388608 a page may hold (2 × the chunk limit)");
    free(file);
    uLongf gz = (uLongf)zeros;
    z_stream z = {0};
    ASSERT(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    z.next_in = big, z.avail_in = (uInt)zeros, z.next_out = packed, z.avail_out = (uInt)zeros;
    ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
    gz = z.total_out;
    deflateEnd(&z);
    h = (hand){.type = 6,
               .codec = 2,
               .body = packed,
               .body_len = gz,
               .uncompressed = 100,
               .compressed = -1,
               .rows = 2};
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "GZIP data decompresses to more bytes");
    free(file);
    h.codec = 6;
    h.body_len = ZSTD_compress(packed, zeros, big, zeros, 3);
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "ZSTD data records another content size");
    free(file);
    h.codec = 1;
    size_t sn = snappy_max_compressed_length(zeros);
    ASSERT(snappy_compress((const char *)big, zeros, (char *)packed, &sn) == SNAPPY_OK);
    h.body_len = sn;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "SNAPPY data says it holds more bytes");
    free(file);
    free(big);
    free(packed);
}

TEST(parquet_text_that_is_not_utf8_names_file_column_and_row)
{
    const char *texts[] = {"fine", "bad \xff\xfe here", "ok"};
    unsigned char body[64];
    hand h = {.type = 6,
              .body = body,
              .body_len = plain(texts, 3, body),
              .uncompressed = -1,
              .compressed = -1,
              .rows = 3};
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "column 'text', row 1: not valid UTF-8");
    free(file);
}

TEST(parquet_columns_codecs_and_encodings_not_read_are_refused_by_name)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    refused(file, size, "body", "no column 'body' for the text field (its columns: 'text')");
    free(file);
    h.repeated = 1;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "tags.text", "text column 'tags.text' is inside the repeated field 'tags'");
    free(file);
    const int types[] = {3, 7, 1};
    const char *names[] = {"is INT96, not BYTE_ARRAY", "is FIXED_LEN_BYTE_ARRAY, not BYTE_ARRAY",
                           "is INT32, not BYTE_ARRAY"};
    for (int i = 0; i < 3; i++) {
        h = plain_hand(body);
        h.type = types[i];
        file = hand_file(&h, &size, &footer);
        refused(file, size, "text", names[i]);
        free(file);
    }
    h = plain_hand(body);
    h.codec = 5;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "column 'text' is compressed with LZ4, which is not read");
    free(file);
    h = plain_hand(body);
    h.encoding = 4;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "encoding BIT_PACKED of a BYTE_ARRAY column is not read");
    free(file);
    /* codes no name is known for are named by number */
    h = plain_hand(body);
    h.codec = 99;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "column 'text' is compressed with unknown (99), which is not read");
    free(file);
    h = plain_hand(body);
    h.encoding = 99;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "encoding unknown (99) of a BYTE_ARRAY column is not read");
    free(file);
    h = plain_hand(body);
    h.type = 99;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "is unknown (99), not BYTE_ARRAY");
    free(file);
}

TEST(parquet_changed_shard_is_a_conflict_at_read)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_bytes(file, size, "text", &shard, &err), &err);
    /* the footer is not read by a chunk: changing its schema name is not a conflict */
    unsigned char *copy = malloc(size);
    memcpy(copy, file, size);
    unsigned char *name = memmem(copy + footer, size - footer, "schema", 6);
    ASSERT(name != NULL);
    name[0] = 'S';
    test_write_file(shard.path, copy, size);
    char got[256] = "";
    ordo__read_spec read = {"text", NULL, 0, 0};
    ASSERT_OK(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:alpha;1:beta;");
    /* a text changed in place, same size: the chunk's digest no longer holds */
    unsigned char *alpha = memmem(copy, size, "alpha", 5);
    alpha[0] = 'A';
    test_write_file(shard.path, copy, size);
    ASSERT_STATUS(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, ORDO__CHUNK_CHANGED);
    ASSERT_CONTAINS(err.message, shard.path);
    free(shard.chunks);
    free(shard.aux);
    free(copy);
    free(file);
}

TEST(parquet_index_notices_a_file_unlike_its_hash)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    const char *path = test_path("hashed.parquet");
    test_write_file(path, file, size);
    ordo__chunk *sentinel = calloc(1, sizeof *sentinel);
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_PARQUET, .chunks = sentinel};
    ordo_error err;
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    /* changed after the recipe hashed it, before it is indexed: the footer alone */
    unsigned char *name = memmem(file + footer, size - footer, "schema", 6);
    name[0] = 'S';
    test_write_file(path, file, size);
    ordo__index_spec spec = {
        .read = {"text", NULL, 0, 0}, .chunk_limit = (uint64_t)4 << 20, .lanes = 1};
    ASSERT_STATUS(ordo__shard_index(path, &shard, &spec, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "changed while being indexed");
    ASSERT(shard.chunks == sentinel);
    free(sentinel);
    free(file);
}

TEST(parquet_corrupt_locator_is_a_conflict_not_a_misread)
{
    unsigned char body[64];
    hand h = plain_hand(body);
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_bytes(file, size, "text", &shard, &err), &err);
    ordo__read_spec read = {"text", NULL, 0, 0};
    char got[256] = "";
    shard.aux[0] = 9; /* another version */
    ASSERT_STATUS(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "chunk 0's Parquet locator is corrupt");
    shard.aux[0] = 1;
    shard.chunks[0].aux_length += 1; /* beyond the shard's aux */
    ASSERT_STATUS(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "index the shard again");
    shard.chunks[0].aux_length -= 1;
    ordo__read_spec other = {"body", NULL, 0, 0}; /* indexed for another text field */
    ASSERT_STATUS(ordo__chunk_read(shard.path, &shard, 0, &other, collect, got, NULL, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "indexed for another text field");
    ASSERT_EQ_STR(got, "");
    ASSERT_OK(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:alpha;1:beta;");
    free(shard.chunks);
    free(shard.aux);
    free(file);
}

/* A page header of `type` with `body` after it; `dict` adds a
 * DictionaryPageHeader of `values` values in `encoding`. */
static void page_with(tw *w, int type, const unsigned char *body, size_t len, int dict, int values,
                      int encoding)
{
    begin(w);
    f_i32(w, 1, type), f_i32(w, 2, (int64_t)len), f_i32(w, 3, (int64_t)len);
    if (dict)
        field(w, 7, 12), begin(w), f_i32(w, 1, values), f_i32(w, 2, encoding), end(w);
    end(w);
    put(w, body, len);
}

/* What the writer here does not write but older ones do: an INDEX_PAGE
 * (passed over), and dictionaries labelled PLAIN_DICTIONARY on both the
 * dictionary page and the data page (format 1.0). */
TEST(parquet_index_pages_and_plain_dictionary_labels_are_read)
{
    const char *words[] = {"zero", "one", "two"};
    unsigned char dict[64];
    size_t dict_len = plain(words, 3, dict);
    tw prefix = {0};
    page_with(&prefix, 1, NULL, 0, 0, 0, 0); /* an index page, no body */
    page_with(&prefix, 2, dict, dict_len, 1, 3, 2);
    /* indices 2, 0, 1, 1 at bit width 2: one bit-packed group of 8 */
    const unsigned char indices[] = {2, 0x03, 0x52, 0x00};
    hand h = {.type = 6,
              .encoding = 2,
              .body = indices,
              .body_len = sizeof indices,
              .uncompressed = -1,
              .compressed = -1,
              .rows = 4,
              .prefix = prefix.b,
              .prefix_len = prefix.n};
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo__shard shard;
    ordo_error err;
    ASSERT_OK(index_bytes(file, size, "text", &shard, &err), &err);
    char got[256] = "";
    ordo__read_spec read = {"text", NULL, 0, 0};
    ASSERT_OK(ordo__chunk_read(shard.path, &shard, 0, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:two;1:zero;2:one;3:one;");
    ASSERT_EQ_INT(shard.chunks[0].raw_length, 13);
    free(shard.chunks);
    free(shard.aux);
    free(file);
    /* a page of a type the format does not have */
    tw odd = {0};
    page_with(&odd, 9, NULL, 0, 0, 0, 0);
    h.prefix = odd.b, h.prefix_len = odd.n;
    h.encoding = 0, h.body = dict, h.body_len = dict_len, h.rows = 3;
    file = hand_file(&h, &size, &footer);
    refused(file, size, "text", "column 'text', page at byte 4: a page of unknown type 9");
    free(file);
    free(odd.b);
    free(prefix.b);
}

/* A page of more text than a chunk may hold is cut between its rows; a
 * row of more text than that is refused, naming it. */
TEST(parquet_row_of_more_text_than_a_chunk_is_refused_naming_it)
{
    const char *texts[] = {"short", "a text of more than the limit's bytes", "ok"};
    unsigned char body[96];
    hand h = {.type = 6,
              .body = body,
              .body_len = plain(texts, 3, body),
              .uncompressed = -1,
              .compressed = -1,
              .rows = 3};
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    const char *path = test_path("rows.parquet");
    test_write_file(path, file, size);
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_PARQUET};
    ordo_error err;
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec spec = {.read = {"text", NULL, 0, 0}, .chunk_limit = 40, .lanes = 1};
    ASSERT_OK(ordo__shard_index(path, &shard, &spec, &err), &err);
    ASSERT_EQ_INT(shard.chunk_count, 2); /* row 0, rows 1-2: cut inside the page */
    ASSERT_EQ_INT(shard.chunks[1].first_record, 1);
    ASSERT_EQ_INT(shard.chunks[0].raw_length, 5);
    ASSERT_EQ_INT(shard.chunks[1].raw_length, 39);
    char got[256] = "";
    ordo__read_spec read = {"text", NULL, 0, 0};
    for (uint32_t c = 0; c < 2; c++)
        ASSERT_OK(ordo__chunk_read(path, &shard, c, &read, collect, got, NULL, &err), &err);
    ASSERT_EQ_STR(got, "0:short;0:a text of more than the limit's bytes;1:ok;");
    free(shard.chunks);
    free(shard.aux);
    shard = (ordo__shard){.path = (char *)path, .format = ORDO_FORMAT_PARQUET};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    spec.chunk_limit = 30; /* pages up to 60 bytes, the long row more than 30 */
    ASSERT_STATUS(ordo__shard_index(path, &shard, &spec, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "column 'text', row 1 holds 37 bytes of text, more than the 30");
    ASSERT(shard.chunks == NULL);
    free(file);
}

/* The columns a filter uses pass the same check as the text column's:
 * not inside a list or map, of a type filters compare. */
TEST(parquet_filter_columns_not_read_are_refused_by_name)
{
    ordo_error err;
    ordo__pq_leaf listed = {.path = "tags.list.item", .type = 6, .repeated = "tags.list"};
    ASSERT_STATUS(ordo__pq_usable("f.parquet", &listed, 0, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "shard 'f.parquet': filter column 'tags.list.item' is inside "
                                 "the repeated field 'tags.list'");
    ordo__pq_leaf stamp = {.path = "ts", .type = 3};
    ASSERT_STATUS(ordo__pq_usable("f.parquet", &stamp, 0, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "filter column 'ts' is INT96, which is not read");
    ordo__pq_leaf fixed = {.path = "hash", .type = 7};
    ASSERT_STATUS(ordo__pq_usable("f.parquet", &fixed, 0, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "filter column 'hash' is FIXED_LEN_BYTE_ARRAY");
    const int fine[] = {0, 1, 2, 4, 5, 6};
    for (int i = 0; i < 6; i++) {
        ordo__pq_leaf leaf = {.path = "x", .type = fine[i]};
        ASSERT_OK(ordo__pq_usable("f.parquet", &leaf, 0, &err), &err);
    }
}

TEST(parquet_delta_byte_array_page_error_names_its_encoding_once)
{
    /* one value with a prefix of 1 byte and no value before it */
    static const unsigned char bad[] = {0x80, 0x01, 0x04, 0x01, 0x02, 0x80,
                                        0x01, 0x04, 0x01, 0x02, 'a',  'b'};
    unsigned char body[64];
    hand h = plain_hand(body);
    memcpy(body, bad, sizeof bad);
    h.body_len = sizeof bad;
    h.encoding = 7; /* DELTA_BYTE_ARRAY */
    h.rows = 1;
    size_t size = 0, footer = 0;
    unsigned char *file = hand_file(&h, &size, &footer);
    ordo_error err;
    ASSERT_STATUS(index_bytes(file, size, "text", NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message,
                    "DELTA_BYTE_ARRAY: value 0 has a prefix of 1 bytes, the value before it 0");
    ASSERT(strstr(err.message, "DELTA_BYTE_ARRAY: DELTA_BYTE_ARRAY") == NULL);
    free(file);
}
