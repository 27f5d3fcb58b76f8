#define _DEFAULT_SOURCE /* realpath */
/* Parquet shards as a real writer (parquet-wasm, the Rust parquet crate,
 * through tests/peers/parquet_write.mjs) writes them: every column's
 * values read back as written, for each codec, page version, dictionary
 * or not, and each value encoding; the text of each row through the index
 * and chunk reads; large row groups cut at pages. */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus.h"
#include "ordo.h"
#include "testing.h"

extern char **environ;

/* Writes the files of a parquet_write.mjs spec with the real writer (the
 * peers sit next to the rank files: $ORDO_VOCAB/../peers). */
static void pq_write(json_t *spec)
{
    const char *vocab = getenv("ORDO_VOCAB");
    ASSERT(vocab != NULL);
    char script[PATH_MAX + 64], dir[PATH_MAX];
    ASSERT(realpath(vocab, dir) != NULL);
    snprintf(script, sizeof script, "%s/../peers/parquet_write.mjs", dir);
    char spec_path[4096];
    snprintf(spec_path, sizeof spec_path, "%s", test_path("spec.json"));
    ASSERT(json_dump_file(spec, spec_path, JSON_COMPACT) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"node", script, "write", spec_path, NULL};
    pid_t pid = 0;
    ASSERT_EQ_INT(posix_spawnp(&pid, "node", &actions, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    ASSERT(waitpid(pid, &status, 0) == pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Deterministic rows: texts of varied lengths (some null, some empty,
 * some multi-byte), integers, floats, booleans, a struct with a nested
 * struct, nulls in every column. */
static json_t *make_rows(int n, int text_len)
{
    json_t *rows = json_array();
    uint32_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        char text[4096];
        int len = 1 + (int)(x >> 8) % text_len;
        int at = snprintf(text, sizeof text, "doc %d ", i);
        while (at < len && at < (int)sizeof text - 8)
            at += snprintf(text + at, sizeof text - (size_t)at, "%s",
                           (x >> (at % 16)) & 1 ? "é✓ " : "word ");
        json_t *row = json_object();
        json_object_set_new(row, "text",
                            i % 7 == 3 ? json_null() : json_string(i % 11 == 5 ? "" : text));
        json_object_set_new(row, "id", json_integer((json_int_t)i * 1000003 - 500));
        json_object_set_new(row, "n", i % 5 == 1 ? json_null() : json_integer(i % 300 - 150));
        json_object_set_new(row, "score", json_real((double)(float)((int)(x % 1000) / 8.0)));
        json_object_set_new(row, "w", json_real((double)(x % 100000) / 7.0));
        json_object_set_new(row, "ok", i % 9 == 2 ? json_null() : json_boolean(x & 4));
        json_t *meta = json_object();
        json_t *quality = json_object();
        json_object_set_new(quality, "score", json_real((double)(i % 17) / 4.0));
        json_object_set_new(meta, "quality", quality);
        json_object_set_new(meta, "lang",
                            i % 4 == 0 ? json_null() : json_string(i % 3 ? "en" : "fr"));
        json_object_set_new(row, "meta", i % 13 == 6 ? json_null() : meta);
        if (i % 13 == 6)
            json_decref(meta);
        json_array_append_new(rows, row);
    }
    return rows;
}

static json_t *columns(void)
{
    return json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},"
                     "{s:s,s:s,s:[{s:s,s:s,s:[{s:s,s:s}]},{s:s,s:s}]}]",
                     "name", "text", "type", "utf8", "name", "id", "type", "int64", "name", "n",
                     "type", "int32", "name", "score", "type", "float32", "name", "w", "type",
                     "float64", "name", "ok", "type", "bool", "name", "meta", "type", "struct",
                     "fields", "name", "quality", "type", "struct", "fields", "name", "score",
                     "type", "float64", "name", "lang", "type", "utf8");
}

static const char *const all_columns[] = {
    "text", "id", "n", "score", "w", "ok", "meta.quality.score", "meta.lang", "nope"};
#define COLUMNS (sizeof all_columns / sizeof all_columns[0])

typedef struct {
    json_t *rows;
    uint64_t seen;
} expect;

/* Each value as the writer was given it: a missing key or a null parent
 * struct is a null; "nope" is no column at all. */
static int compare_row(void *context, uint64_t row, const ordo__field_value *values)
{
    expect *e = context;
    ASSERT_EQ_INT(row, e->seen);
    e->seen++;
    const json_t *r = json_array_get(e->rows, (size_t)row);
    for (size_t c = 0; c < COLUMNS; c++) {
        ordo__field_value want;
        ordo__json_value(ordo__json_path(r, all_columns[c]), &want);
        if (want.kind == ORDO__VALUE_MISSING && c + 1 < COLUMNS)
            want.kind = ORDO__VALUE_NULL;
        const ordo__field_value *got = &values[c];
        if (got->kind != want.kind)
            test_fail(__FILE__, __LINE__, "row %llu column %s: kind %d, expected %d",
                      (unsigned long long)row, all_columns[c], got->kind, want.kind);
        if (want.kind == ORDO__VALUE_STRING)
            ASSERT(got->len == want.len && memcmp(got->s, want.s, want.len) == 0);
        if (want.kind == ORDO__VALUE_INT)
            ASSERT_EQ_INT(got->i, want.i);
        if (want.kind == ORDO__VALUE_BOOL)
            ASSERT_EQ_INT(got->b, want.b);
        if (want.kind == ORDO__VALUE_DOUBLE && got->d != want.d)
            test_fail(__FILE__, __LINE__, "row %llu column %s: %.17g, expected %.17g",
                      (unsigned long long)row, all_columns[c], got->d, want.d);
    }
    return 0;
}

static json_t *file(const char *name, const char *codec, int dictionary, int version)
{
    return json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "path", test_path(name), "codec", codec,
                     "dictionary", dictionary, "page_version", version, "row_group_rows", 120,
                     "page_bytes", 700);
}

static void check_scan(const char *path, json_t *rows)
{
    expect e = {rows, 0};
    ordo_error err;
    ASSERT_OK(ordo__pq_scan_columns(path, all_columns, COLUMNS, compare_row, &e, &err), &err);
    ASSERT_EQ_INT(e.seen, json_array_size(rows));
}

TEST(parquet_columns_read_as_the_writer_wrote_them)
{
    json_t *rows = make_rows(300, 300);
    json_t *files = json_array();
    const char *codecs[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD"};
    char name[64];
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < 2; d++)
            for (int v = 1; v <= 2; v++) {
                snprintf(name, sizeof name, "%s-%d-%d.parquet", codecs[c], d, v);
                json_array_append_new(files, file(name, codecs[c], d, v));
            }
    json_t *spec = json_pack("{s:o,s:O,s:o}", "columns", columns(), "rows", rows, "files", files);
    pq_write(spec);
    for (size_t i = 0; i < json_array_size(files); i++)
        check_scan(json_string_value(json_object_get(json_array_get(files, i), "path")), rows);
    json_decref(spec);
    json_decref(rows);
}

TEST(parquet_delta_and_split_encodings_read_as_written)
{
    json_t *rows = make_rows(260, 200);
    json_t *files = json_array();
    json_t *ints = file("delta-bin.parquet", "ZSTD", 0, 1);
    json_object_set_new(
        ints, "encodings",
        json_pack("{s:s,s:s}", "id", "DELTA_BINARY_PACKED", "n", "DELTA_BINARY_PACKED"));
    json_array_append_new(files, ints);
    json_t *delta = file("delta-str.parquet", "SNAPPY", 0, 1);
    json_object_set_new(
        delta, "encodings",
        json_pack("{s:s,s:s}", "text", "DELTA_LENGTH_BYTE_ARRAY", "id", "DELTA_BINARY_PACKED"));
    json_array_append_new(files, delta);
    json_t *prefix = file("delta-prefix.parquet", "GZIP", 0, 2);
    json_object_set_new(prefix, "encodings",
                        json_pack("{s:s,s:s,s:s}", "text", "DELTA_BYTE_ARRAY", "score",
                                  "BYTE_STREAM_SPLIT", "w", "BYTE_STREAM_SPLIT"));
    json_array_append_new(files, prefix);
    json_t *split = file("split.parquet", "UNCOMPRESSED", 0, 1);
    json_object_set_new(split, "encodings",
                        json_pack("{s:s,s:s,s:s}", "score", "BYTE_STREAM_SPLIT", "w",
                                  "BYTE_STREAM_SPLIT", "n", "DELTA_BINARY_PACKED"));
    json_array_append_new(files, split);
    json_t *spec = json_pack("{s:o,s:O,s:o}", "columns", columns(), "rows", rows, "files", files);
    pq_write(spec);
    for (size_t i = 0; i < json_array_size(files); i++)
        check_scan(json_string_value(json_object_get(json_array_get(files, i), "path")), rows);
    json_decref(spec);
    json_decref(rows);
}

/* The documents chunk reads give, in order, with their physical rows. */
typedef struct {
    json_t *rows;
    uint64_t base;
    uint64_t next; /* row the next document may be at, at least */
    uint64_t docs;
    const char *field;
} docs;

static int check_doc(void *context, const char *text, size_t len, uint64_t record)
{
    docs *d = context;
    uint64_t row = d->base + record;
    ASSERT(row >= d->next);
    const json_t *want = ordo__json_path(json_array_get(d->rows, (size_t)row), d->field);
    ASSERT(json_is_string(want));
    ASSERT(len == json_string_length(want) && memcmp(text, json_string_value(want), len) == 0);
    d->next = row + 1;
    d->docs++;
    return 0;
}

static uint64_t texts(json_t *rows, const char *field, uint64_t *bytes)
{
    uint64_t n = 0;
    *bytes = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *t = ordo__json_path(json_array_get(rows, i), field);
        if (json_is_string(t) && json_string_length(t) > 0)
            n++;
        if (json_is_string(t))
            *bytes += json_string_length(t);
    }
    return n;
}

/* Indexes `path` with `limit` and reads every chunk, checking each kept
 * document is its row's text, none is missed, and the counts add up. */
static ordo__shard index_and_read(const char *path, json_t *rows, const char *field, uint64_t limit)
{
    ordo_error err;
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_PARQUET};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec spec = {.read = {field, NULL, 0, 0}, .chunk_limit = limit, .lanes = 1};
    ASSERT_OK(ordo__shard_index(path, &shard, &spec, &err), &err);
    uint64_t bytes = 0, want = texts(rows, field, &bytes);
    ASSERT_EQ_INT(shard.counts.read, json_array_size(rows));
    ASSERT_EQ_INT(shard.counts.passed, want);
    ASSERT_EQ_INT(shard.counts.empty, json_array_size(rows) - want);
    docs d = {rows, 0, 0, 0, field};
    uint64_t raw = 0;
    for (uint32_t c = 0; c < shard.chunk_count; c++) {
        const ordo__chunk *chunk = &shard.chunks[c];
        ASSERT(chunk->raw_length <= limit);
        ASSERT(c == 0 || chunk->first_record > shard.chunks[c - 1].first_record);
        raw += chunk->raw_length;
        d.base = chunk->first_record;
        ordo__counts counts;
        ASSERT_OK(ordo__chunk_read(path, &shard, c, &spec.read, check_doc, &d, &counts, &err),
                  &err);
        ASSERT_EQ_INT(counts.passed, chunk->records);
    }
    ASSERT_EQ_INT(d.docs, want);
    ASSERT_EQ_INT(raw, bytes); /* every chunk here holds a document */
    return shard;
}

TEST(parquet_index_reads_the_text_of_every_row)
{
    json_t *rows = make_rows(300, 300);
    json_t *files = json_pack("[o,o,o]", file("a.parquet", "SNAPPY", 1, 1),
                              file("b.parquet", "ZSTD", 0, 2), file("c.parquet", "GZIP", 1, 2));
    json_t *spec = json_pack("{s:o,s:O,s:O}", "columns", columns(), "rows", rows, "files", files);
    pq_write(spec);
    for (size_t i = 0; i < json_array_size(files); i++) {
        const char *path = json_string_value(json_object_get(json_array_get(files, i), "path"));
        ordo__shard shard = index_and_read(path, rows, "text", (uint64_t)4 << 20);
        ASSERT_EQ_INT(shard.chunk_count, 3); /* one a row group of 120 rows */
        ASSERT_EQ_INT(shard.chunks[1].first_record, 120);
        free(shard.chunks);
        free(shard.aux);
        shard = index_and_read(path, rows, "meta.lang", (uint64_t)4 << 20);
        free(shard.chunks);
        free(shard.aux);
    }
    json_decref(files);
    json_decref(spec);
    json_decref(rows);
}

TEST(parquet_large_row_group_is_cut_at_its_pages)
{
    json_t *rows = make_rows(400, 600);
    json_t *one =
        json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "path", test_path("big.parquet"), "codec", "ZSTD",
                  "dictionary", 0, "page_version", 1, "row_group_rows", 400, "page_bytes", 2048);
    /* a dictionary of 20 texts: decoded text far larger than the pages */
    json_t *dict = json_deep_copy(one);
    json_object_set_new(dict, "path", json_string(test_path("big-dict.parquet")));
    json_object_set_new(dict, "dictionary", json_true());
    json_object_set_new(dict, "page_bytes", json_integer(1)); /* a page every batch */
    json_object_set_new(dict, "batch_rows", json_integer(16));
    json_t *repeated = json_deep_copy(rows);
    for (size_t i = 0; i < json_array_size(repeated); i++) {
        json_t *row = json_array_get(repeated, i);
        json_object_set(row, "text", json_object_get(json_array_get(rows, i % 20), "text"));
    }
    json_object_set(dict, "rows", repeated);
    json_t *spec =
        json_pack("{s:o,s:O,s:[o,o]}", "columns", columns(), "rows", rows, "files", one, dict);
    pq_write(spec);
    const char *paths[] = {corpus_kept(test_path("big.parquet")),
                           corpus_kept(test_path("big-dict.parquet"))};
    json_t *written[] = {rows, repeated};
    for (int i = 0; i < 2; i++) {
        ordo__shard shard = index_and_read(paths[i], written[i], "text", 16384);
        ASSERT(shard.chunk_count >= 5);
        free(shard.chunks);
        free(shard.aux);
    }
    json_decref(spec);
    json_decref(repeated);
    json_decref(rows);
}

/* The batches of a recipe of one source over `glob` (in the test folder),
 * read for `steps` steps: their tokens, concatenated (caller frees). */
static uint32_t *recipe_tokens(const char *glob, int steps, size_t *count)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"name\": \"pq\", \"seed\": 7, \"seq_len\": 64, \"global_batch\": 2, \"lanes\": 1,"
             " \"flush_every\": 1, \"shuffle\": false, \"tokenizer\": {\"kind\": \"bytes\"},"
             " \"sources\": [{\"name\": \"web\", \"paths\": [\"%s\"], \"weight\": 1}]}",
             glob);
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_parse(json, strlen(json), test_path(""), 0, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    ordo_loader_options o = {.world_size = 1, .read_workers = 2, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    uint32_t *all = malloc((size_t)steps * 2 * 64 * sizeof *all);
    *count = 0;
    for (int s = 0; s < steps; s++) {
        ordo_batch b;
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        memcpy(all + *count, b.tokens, (size_t)b.rows * 64 * sizeof *all);
        *count += (size_t)b.rows * 64;
    }
    ordo_loader_close(l);
    ordo_recipe_free(r);
    return all;
}

TEST(parquet_recipe_delivers_the_same_tokens_as_its_jsonl)
{
    json_t *rows = make_rows(150, 200);
    json_t *f = json_pack("{s:s,s:s,s:b,s:i,s:i}", "path", test_path("data/web.parquet"), "codec",
                          "ZSTD", "dictionary", 1, "page_version", 2, "row_group_rows", 1000);
    json_t *spec = json_pack("{s:o,s:O,s:[o]}", "columns", columns(), "rows", rows, "files", f);
    ASSERT(mkdir(test_path("data"), 0755) == 0 && mkdir(test_path("lines"), 0755) == 0);
    pq_write(spec);
    FILE *out = fopen(test_path("lines/web.jsonl"), "w");
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *line = json_pack("{s:O}", "text", json_object_get(json_array_get(rows, i), "text"));
        char *text = json_dumps(line, JSON_COMPACT);
        fprintf(out, "%s\n", text);
        free(text);
        json_decref(line);
    }
    ASSERT(fclose(out) == 0);
    size_t n = 0, m = 0;
    uint32_t *parquet = recipe_tokens("data/*.parquet", 40, &n);
    uint32_t *jsonl = recipe_tokens("lines/*.jsonl", 40, &m);
    ASSERT_EQ_INT(n, m);
    ASSERT(memcmp(parquet, jsonl, n * sizeof *parquet) == 0);
    size_t letters = 0; /* the documents' bytes, not padding */
    for (size_t i = 0; i < n; i++)
        letters += parquet[i] == 'w' || parquet[i] == 'd';
    ASSERT(letters > n / 20);
    free(parquet);
    free(jsonl);
    json_decref(spec);
    json_decref(rows);
}

/* Counts and documents of a shard indexed and read with `read`. */
typedef struct {
    ordo__counts counts;
    char *docs; /* "row:text\n" of each kept document */
    size_t len;
    uint64_t base; /* the chunk's first record */
    uint32_t chunks;
} kept;

static int keep_doc(void *context, const char *text, size_t len, uint64_t record)
{
    kept *k = context;
    k->docs = realloc(k->docs, k->len + len + 32);
    k->len += (size_t)sprintf(k->docs + k->len, "%llu:", (unsigned long long)(k->base + record));
    memcpy(k->docs + k->len, text, len);
    k->len += len;
    k->docs[k->len++] = '\n';
    return 0;
}

static kept index_kept(const char *path, enum ordo__format format, const ordo__read_spec *read)
{
    ordo_error err;
    ordo__shard shard = {.path = (char *)path, .format = format};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec spec = {.read = *read, .per_chunk = 16, .lanes = 1};
    spec.chunk_limit = format == ORDO_FORMAT_PARQUET ? 8192 : 1 << 20; /* Parquet: cut at pages */
    ASSERT_OK(ordo__shard_index(path, &shard, &spec, &err), &err);
    kept k = {shard.counts, NULL, 0, 0, shard.chunk_count};
    for (uint32_t c = 0; c < shard.chunk_count; c++) {
        k.base = shard.chunks[c].first_record;
        ASSERT_OK(ordo__chunk_read(path, &shard, c, read, keep_doc, &k, NULL, &err), &err);
    }
    free(shard.chunks);
    free(shard.aux);
    return k;
}

/* A filter over Parquet columns (struct leaves, int32, float32, float64,
 * strings, booleans; nulls and a column the file lacks) keeps exactly the
 * rows it keeps over the same records as JSON lines. */
TEST(parquet_filter_reads_its_columns_for_the_same_rows)
{
    json_t *rows = make_rows(400, 300);
    json_t *f =
        json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "path", test_path("f.parquet"), "codec", "SNAPPY",
                  "dictionary", 0, "page_version", 1, "row_group_rows", 300, "page_bytes", 1024);
    /* pages of more text than a chunk: chunks cut inside them, filter columns alike */
    json_t *g = json_pack("{s:s,s:s,s:b,s:i,s:i,s:i,s:i}", "path", test_path("g.parquet"), "codec",
                          "ZSTD", "dictionary", 0, "page_version", 2, "row_group_rows", 400,
                          "page_bytes", 9000, "batch_rows", 70);
    json_t *spec =
        json_pack("{s:o,s:O,s:[o,o]}", "columns", columns(), "rows", rows, "files", f, g);
    pq_write(spec);
    FILE *out = fopen(test_path("f.jsonl"), "w");
    for (size_t i = 0; i < json_array_size(rows); i++) {
        char *line = json_dumps(json_array_get(rows, i), JSON_COMPACT);
        fprintf(out, "%s\n", line);
        free(line);
    }
    ASSERT(fclose(out) == 0);
    const char *filters[] = {
        "{\"field\": \"meta.quality.score\", \"ge\": 2}",
        "{\"all\": [{\"field\": \"meta.lang\", \"eq\": \"en\"}, {\"field\": \"n\", \"lt\": 50}]}",
        "{\"any\": [{\"field\": \"ok\", \"eq\": true}, {\"field\": \"score\", \"gt\": 100},"
        " {\"field\": \"nope\", \"exists\": true}]}",
        "{\"not\": {\"field\": \"w\", \"le\": 7000}}",
        "{\"field\": \"id\", \"in\": [999503, 1999506, 4999515, 99]}",
    };
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
        json_t *json = json_loads(filters[i], 0, NULL);
        ordo__filter *filter = NULL;
        ordo_error err;
        ASSERT_OK(ordo__filter_compile(json, "web", &filter, &err), &err);
        ordo__read_spec read = {"text", filter, 0, 0};
        kept a = index_kept(test_path("f.parquet"), ORDO_FORMAT_PARQUET, &read);
        kept b = index_kept(test_path("f.jsonl"), ORDO_FORMAT_JSONL, &read);
        ASSERT(a.counts.filtered > 0 && a.counts.passed > 0);
        ASSERT(i > 0 || a.chunks > 4); /* filter columns read for each chunk's rows */
        ASSERT_EQ_INT(a.counts.read, b.counts.read);
        ASSERT_EQ_INT(a.counts.passed, b.counts.passed);
        ASSERT_EQ_INT(a.counts.filtered, b.counts.filtered);
        ASSERT_EQ_INT(a.counts.empty, b.counts.empty);
        ASSERT(a.len == b.len && memcmp(a.docs, b.docs, a.len) == 0);
        kept c = index_kept(test_path("g.parquet"), ORDO_FORMAT_PARQUET, &read);
        ASSERT_EQ_INT(c.counts.passed, b.counts.passed);
        ASSERT_EQ_INT(c.counts.filtered, b.counts.filtered);
        ASSERT(c.len == b.len && memcmp(c.docs, b.docs, c.len) == 0);
        free(c.docs);
        free(a.docs);
        free(b.docs);
        ordo__filter_free(filter);
        json_decref(json);
    }
    /* a string column compared with a number: the row that shows it is named */
    json_t *json = json_loads("{\"field\": \"meta.lang\", \"gt\": 3}", 0, NULL);
    ordo__filter *filter = NULL;
    ordo_error err;
    ASSERT_OK(ordo__filter_compile(json, "web", &filter, &err), &err);
    const char *path = test_path("f.parquet");
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_PARQUET};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec index = {.read = {"text", filter, 0, 0}, .chunk_limit = 8192, .lanes = 1};
    ASSERT_STATUS(ordo__shard_index(path, &shard, &index, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, path);
    ASSERT_CONTAINS(err.message, "row 1: filter: ");
    ASSERT(shard.chunks == NULL);
    ordo__filter_free(filter);
    json_decref(json);
    json_decref(spec);
    json_decref(rows);
}

TEST(parquet_page_of_more_than_twice_a_chunk_is_refused_naming_it)
{
    json_t *rows = make_rows(200, 600);
    json_t *f = json_pack("{s:s,s:s,s:b,s:i,s:i}", "path", test_path("wide.parquet"), "codec",
                          "SNAPPY", "dictionary", 0, "page_version", 1, "page_bytes", 1 << 20);
    json_t *spec = json_pack("{s:o,s:O,s:[o]}", "columns", columns(), "rows", rows, "files", f);
    pq_write(spec);
    const char *path = test_path("wide.parquet");
    ordo_error err;
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_PARQUET};
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec index = {.read = {"text", NULL, 0, 0}, .chunk_limit = 4096, .lanes = 1};
    ASSERT_STATUS(ordo__shard_index(path, &shard, &index, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, path);
    ASSERT_CONTAINS(err.message, "column 'text', page at byte 4");
    ASSERT_CONTAINS(err.message, "more than the 8192 a page may hold (2 × the chunk limit)");
    ASSERT(shard.chunks == NULL && shard.chunk_count == 0);
    json_decref(spec);
    json_decref(rows);
}

static int count_doc(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(uint64_t *)context += len;
    return 0;
}

/* A whole file without a chunk table ('ordo tokens --count' and 'ordo
 * shard' inputs): every document, the counts of the index. */
TEST(parquet_file_scan_reads_every_document)
{
    json_t *rows = make_rows(250, 400);
    json_t *f = file("scan.parquet", "GZIP", 1, 2);
    json_t *spec = json_pack("{s:o,s:O,s:[o]}", "columns", columns(), "rows", rows, "files", f);
    pq_write(spec);
    ordo__read_spec read = {"text", NULL, 0, 0};
    ordo__counts counts;
    uint64_t bytes = 0, want_bytes = 0;
    ordo_error err;
    ASSERT_OK(ordo__file_scan(test_path("scan.parquet"), ORDO_FORMAT_PARQUET, &read, count_doc,
                              &bytes, &counts, &err),
              &err);
    uint64_t want = texts(rows, "text", &want_bytes);
    ASSERT_EQ_INT(counts.passed, want);
    ASSERT_EQ_INT(counts.read, 250);
    ASSERT_EQ_INT(bytes, want_bytes);
    json_decref(spec);
    json_decref(rows);
}

/* Pages of more text than a chunk may hold (up to 2 × as much) are cut
 * between their rows: each chunk reads the pages its rows lie in and
 * keeps its own rows, at most the limit of text. */
TEST(parquet_page_larger_than_a_chunk_is_cut_between_its_rows)
{
    json_t *rows = make_rows(300, 500);
    json_t *plain =
        json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "path", test_path("p.parquet"), "codec", "ZSTD",
                  "dictionary", 0, "page_version", 2, "row_group_rows", 300, "page_bytes", 17000);
    json_object_set_new(plain, "batch_rows", json_integer(20)); /* pages of 17 to 27 KB */
    json_t *dict =
        json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "path", test_path("d.parquet"), "codec", "SNAPPY",
                  "dictionary", 1, "page_version", 1, "row_group_rows", 300, "page_bytes", 1);
    json_object_set_new(dict, "batch_rows", json_integer(80)); /* a page every 80 rows */
    json_t *repeated = json_deep_copy(rows); /* 20 texts: a dictionary smaller than a page */
    for (size_t i = 0; i < json_array_size(repeated); i++)
        json_object_set(json_array_get(repeated, i), "text",
                        json_object_get(json_array_get(rows, i % 20), "text"));
    json_object_set(dict, "rows", repeated);
    json_t *spec =
        json_pack("{s:o,s:O,s:[o,o]}", "columns", columns(), "rows", rows, "files", plain, dict);
    pq_write(spec);
    const char *paths[] = {corpus_kept(test_path("p.parquet")),
                           corpus_kept(test_path("d.parquet"))};
    json_t *written[] = {rows, repeated};
    for (int i = 0; i < 2; i++) {
        ordo__shard shard = index_and_read(paths[i], written[i], "text", 16000);
        ASSERT(shard.chunk_count >= 4);
        free(shard.chunks);
        free(shard.aux);
    }
    json_decref(spec);
    json_decref(repeated);
    json_decref(rows);
}
