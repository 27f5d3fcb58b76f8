/* Shards: ordo shard, indexing, and bad data — each a clear error naming
 * file and byte offset, or a counted skip; chunks over the limit. */
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "corpus.h"
#include "fixtures.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *one_source_recipe(const char *glob)
{
    char sources[512];
    snprintf(sources, sizeof sources, "[{\"name\": \"only\", \"paths\": [\"%s\"], \"weight\": 1}]",
             glob);
    return corpus_recipe("recipe.json", 2, 8, 32, 2, 0, sources);
}

static cli_result index_recipe(const char *recipe)
{
    return run_ordo(NULL, A("index", recipe, "--db", test_path("l.db")));
}

static void write_text(const char *name, const char *text)
{
    mkdir(test_path("data"), 0755);
    char path[256];
    snprintf(path, sizeof path, "data/%s", name);
    test_write_file(test_path(path), text, strlen(text));
}

TEST(shard_writes_independent_frames)
{
    corpus_jsonl("raw", "doc", 2, 100, 10, 50, 3);
    write_text("note.txt", "a plain text document\nwith two lines");
    mkdir(test_path("raw/sub"), 0755);
    test_write_file(test_path("raw/sub/extra.txt"), "nested text", 11);
    char *out = ordo_ok(A("shard", "--out", test_path("shards"), "--docs-per-frame", "7",
                          "--docs-per-shard", "150", test_path("raw"), test_path("data/note.txt")),
                        0);
    ASSERT_CONTAINS(out, "202 documents");
    ASSERT_CONTAINS(out, "2 shards");
    free(out);
    /* Every frame decodes on its own and records its size. */
    size_t size = 0;
    char *data = test_read_file(test_path("shards/shard-00000.jsonl.zst"), &size);
    ASSERT(data != NULL);
    size_t at = 0, frames = 0;
    while (at < size) {
        size_t csize = ZSTD_findFrameCompressedSize(data + at, size - at);
        ASSERT(!ZSTD_isError(csize));
        ASSERT(ZSTD_getFrameContentSize(data + at, csize) != ZSTD_CONTENTSIZE_UNKNOWN);
        at += csize;
        frames++;
    }
    ASSERT_EQ_INT(frames, (150 + 6) / 7);
    free(data);
    /* The index sees one chunk per frame. */
    const char *recipe = one_source_recipe("shards/*.jsonl.zst");
    out = ordo_ok(A("index", recipe, "--db", test_path("l.db"), "--json"), 0);
    json_t *root = json_loads(out, 0, NULL);
    json_t *source = json_array_get(json_object_get(root, "sources"), 0);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "chunks")), 22 + 8);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "records")), 202);
    json_decref(root);
    free(out);
    /* Refuses a folder that already holds shards. */
    cli_result r = run_ordo(NULL, A("shard", "--out", test_path("shards"), test_path("raw")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "already holds shards");
    cli_result_free(&r);
}

/* Runs `ordo shard --out OUT INPUTS` expecting failure naming `needle`, and
 * that OUT holds no shard afterwards. */
static void expect_shard_error(const char *out, const char *input, const char *input2,
                               const char *needle1, const char *needle2)
{
    char out_dir[512];
    snprintf(out_dir, sizeof out_dir, "%s", test_path(out));
    cli_result r =
        run_ordo(NULL, input2 ? A("shard", "--out", out_dir, "--docs-per-shard", "1", input, input2)
                              : A("shard", "--out", out_dir, "--docs-per-shard", "1", input));
    if (r.code != 1 || !strstr(r.err, needle1) || !strstr(r.err, needle2))
        test_fail(__FILE__, __LINE__, "exit %d, stderr: %s (expected '%s' and '%s')", r.code, r.err,
                  needle1, needle2);
    cli_result_free(&r);
    char shard[600];
    snprintf(shard, sizeof shard, "%s/shard-00000.jsonl.zst", out_dir);
    FILE *f = fopen(shard, "rb");
    ASSERT(f == NULL); /* nothing half-made is left */
}

TEST(shard_bad_inputs)
{
    char data[512], bad[512];
    snprintf(data, sizeof data, "%s", test_path("data"));
    snprintf(bad, sizeof bad, "%s", test_path("data/bad.jsonl"));
    write_text("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": oops}\n");
    expect_shard_error("out", data, NULL, "bad.jsonl", "byte 17");
    write_text("bad.jsonl", "{\"text\": \"fine\"}\n{}\n");
    expect_shard_error("out", data, NULL, "byte 17: no text field ('text')", "bad.jsonl");
    write_text("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": 5}\n");
    expect_shard_error("out", data, NULL, "byte 17: its text field is not a string", "bad.jsonl");
    write_text("bad.jsonl", "{\"text\": \"fine\"}\n[1]\n");
    expect_shard_error("out", data, NULL, "byte 17: not a JSON object", "bad.jsonl");
    write_text("bad.jsonl", "{\"body\": \"fine\"}\n");
    /* The same line with another text field is fine. */
    free(ordo_ok(A("shard", "--out", test_path("ok"), "--text-field", "body", bad), 0));
    write_text("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": \"\"}\n\n");
    char *out = ordo_ok(A("shard", "--out", test_path("ok2"), bad), 0);
    ASSERT_CONTAINS(out, "1 documents (2 empty skipped)");
    free(out);
    test_write_file(test_path("data/latin1.txt"), "caf\xe9", 4);
    expect_shard_error("out2", data, NULL, "latin1.txt", "UTF-8");
    remove(test_path("data/latin1.txt"));
    /* The same file twice, and a symbolic link in a folder. */
    expect_shard_error("out3", data, bad, "bad.jsonl' is given twice", "");
    ASSERT(symlink(bad, test_path("data/link.jsonl")) == 0);
    expect_shard_error("out4", data, NULL, "link.jsonl' is a symbolic link", "");
    remove(test_path("data/link.jsonl"));
    cli_result r = run_ordo(NULL, A("shard", "--out", test_path("out5"), test_path("missing")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "missing");
    cli_result_free(&r);
    r = run_ordo(NULL, A("shard", data));
    ASSERT_EQ_INT(r.code, 2);
    cli_result_free(&r);
}

static void expect_index_error(const char *file, const char *content, size_t len,
                               const char *needle1, const char *needle2)
{
    mkdir(test_path("data"), 0755);
    char path[256];
    snprintf(path, sizeof path, "data/%s", file);
    test_write_file(test_path(path), content, len);
    char glob[256];
    snprintf(glob, sizeof glob, "data/%s", file);
    cli_result r = index_recipe(one_source_recipe(glob));
    if (r.code != 1 || !strstr(r.err, needle1) || !strstr(r.err, needle2))
        test_fail(__FILE__, __LINE__, "%s: exit %d, stderr: %s (expected '%s' and '%s')", file,
                  r.code, r.err, needle1, needle2);
    cli_result_free(&r);
    unlink(test_path(path));
}

TEST(index_bad_records_name_file_and_offset)
{
    const char bad_json[] = "{\"text\": \"one\"}\n{\"text\": \"two\"\n";
    expect_index_error("a.jsonl", bad_json, sizeof bad_json - 1, "a.jsonl",
                       "record at byte 16: invalid JSON");
    const char missing[] = "{\"text\": \"one\"}\n{\"body\": \"two\"}\n";
    expect_index_error("b.jsonl", missing, sizeof missing - 1, "record at byte 16",
                       "no text field text");
    const char not_string[] = "{\"text\": 42}\n";
    expect_index_error("c.jsonl", not_string, sizeof not_string - 1, "record at byte 0",
                       "not a string");
    const char bad_utf8[] = "{\"text\": \"ok\"}\n{\"text\": \"\xff\xfe\"}\n";
    expect_index_error("d.jsonl", bad_utf8, sizeof bad_utf8 - 1, "record at byte 15",
                       "invalid JSON");
    const char array[] = "[1, 2]\n";
    expect_index_error("e.jsonl", array, sizeof array - 1, "record at byte 0", "not a JSON object");
    const char latin1[] = "caf\xe9";
    expect_index_error("f.txt", latin1, sizeof latin1 - 1, "f.txt", "not valid UTF-8");
}

TEST(index_truncated_zstd_names_the_frame)
{
    corpus_jsonl("raw", "doc", 1, 40, 10, 30, 4);
    free(ordo_ok(A("shard", "--out", test_path("z"), "--docs-per-frame", "10", test_path("raw")),
                 0));
    size_t size = 0;
    char *data = test_read_file(test_path("z/shard-00000.jsonl.zst"), &size);
    size_t offsets[5] = {0}, at = 0;
    for (int i = 0; i < 4; i++) {
        at += ZSTD_findFrameCompressedSize(data + at, size - at);
        offsets[i + 1] = at;
    }
    test_write_file(test_path("z/shard-00000.jsonl.zst"), data, size - 5);
    free(data);
    cli_result r = index_recipe(one_source_recipe("z/*.jsonl.zst"));
    ASSERT_EQ_INT(r.code, 1);
    char needle[64];
    snprintf(needle, sizeof needle, "zstd frame at byte %zu", offsets[3]);
    ASSERT_CONTAINS(r.err, needle);
    ASSERT_CONTAINS(r.err, "shard-00000.jsonl.zst");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM shards"), 0);
}

TEST(index_counts_empty_documents_and_handles_long_ones)
{
    /* One empty document, one blank line, one document of 40 samples. */
    char *doc = malloc(32 * 40 + 64);
    strcpy(doc, "{\"text\": \"first\"}\n{\"text\": \"\"}\n\n{\"text\": \"");
    size_t n = strlen(doc);
    memset(doc + n, 'x', 32 * 40);
    strcpy(doc + n + 32 * 40, "\"}\n{\"text\": \"last\"}\n");
    write_text("mixed.jsonl", doc);
    free(doc);
    const char *recipe = one_source_recipe("data/mixed.jsonl");
    char *out = ordo_ok(A("index", recipe, "--db", test_path("l.db")), 0);
    ASSERT_CONTAINS(out, "3 documents, 2 empty skipped");
    free(out);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT skipped FROM shards"), 2);
    free(ordo_ok(A("run", recipe, "--db", test_path("l.db"), "--name", "r", "--world-size", "2",
                   "--steps", "30", "--quiet"),
                 0));
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM steps"), 30);
}

TEST(txt_shards_are_one_document_each)
{
    write_text("one.txt", "the first document, in plain text");
    write_text("two.txt", "a second one \xc3\xa9");
    write_text("empty.txt", "");
    const char *recipe = one_source_recipe("data/*.txt");
    char *out = ordo_ok(A("index", recipe, "--db", test_path("l.db"), "--json"), 0);
    json_t *root = json_loads(out, 0, NULL);
    json_t *source = json_array_get(json_object_get(root, "sources"), 0);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "shards")), 3);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "records")), 2);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "skipped")), 1);
    ASSERT_EQ_INT(json_integer_value(json_object_get(source, "chunks")), 2);
    json_decref(root);
    free(out);
    free(ordo_ok(A("run", recipe, "--db", test_path("l.db"), "--name", "t", "--world-size", "2",
                   "--steps", "10", "--quiet"),
                 0));
}

TEST(index_refuses_chunks_larger_than_the_limit)
{
    /* A frame whose content (257 MiB of zero bytes) exceeds 256 MiB, the
     * most any chunk may hold (and 64 MiB, the most at 4 lanes). */
    size_t big = (size_t)257 << 20;
    char *zeros = calloc(big, 1);
    ASSERT(zeros != NULL);
    size_t cap = ZSTD_compressBound(big);
    char *frame = malloc(cap);
    size_t n = ZSTD_compress(frame, cap, zeros, big, 1);
    ASSERT(!ZSTD_isError(n));
    free(zeros);
    mkdir(test_path("data"), 0755);
    test_write_file(test_path("data/big.jsonl.zst"), frame, n);
    free(frame);
    const char *recipe =
        corpus_recipe("recipe.json", 4, 8, 16, 1, 2,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl.zst\"], \"weight\": 1}]");
    cli_result res = run_ordo(NULL, A("index", recipe, "--db", test_path("l.db")));
    ASSERT_EQ_INT(res.code, 1);
    ASSERT_CONTAINS(res.err, "big.jsonl.zst");
    ASSERT_CONTAINS(res.err, "zstd frame at byte 0 holds 269484032 bytes");
    ASSERT_CONTAINS(res.err, "with 4 lanes a chunk may hold at most 67108864");
    cli_result_free(&res);
}

TEST(index_nul_line_is_an_error_not_a_blank)
{
    mkdir(test_path("data"), 0755);
    test_write_file(test_path("data/nul.jsonl"), "{\"text\": \"ok\"}\n\0\n", 17);
    const char *recipe =
        corpus_recipe("recipe.json", 4, 8, 16, 1, 2,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]");
    cli_result res = run_ordo(NULL, A("index", recipe, "--db", test_path("l.db")));
    ASSERT_EQ_INT(res.code, 1);
    ASSERT_CONTAINS(res.err, "nul.jsonl");
    ASSERT_CONTAINS(res.err, "byte 15");
    cli_result_free(&res);
}
