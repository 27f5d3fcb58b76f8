/* Shard files of every format read through one call (ordo_shard_read):
 * counts of records read, passed, filtered out and empty; physical record
 * numbers; dotted text fields; and the shard writer's new inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "ordo.h"

typedef struct {
    char text[4096];
    size_t len;
    uint64_t records[64];
    size_t count;
} seen;

static int remember(void *context, const char *text, size_t len, uint64_t record)
{
    seen *s = context;
    if (s->len + len + 1 < sizeof s->text) {
        memcpy(s->text + s->len, text, len);
        s->len += len;
        s->text[s->len++] = '|';
        s->text[s->len] = 0;
    }
    if (s->count < 64)
        s->records[s->count++] = record;
    return 0;
}

/* A blank line, an empty text, a null text, a nested text, metadata of
 * several types: unfriendly to a reader that assumes "text" is flat. */
static const char lines[] = "{\"meta\": {\"text\": \"first doc\", \"n\": 1}}\n"
                            "\n"
                            "{\"meta\": {\"text\": \"\"}}\n"
                            "{\"meta\": {\"text\": null}}\n"
                            "{\"meta\": {\"text\": \"caf\\u00e9 \\u2014 second\", \"n\": 2.5}}\n"
                            "   \n"
                            "{\"meta\": {\"text\": \"third\"}, \"other\": [1, 2]}\n";

TEST(shard_read_counts_every_record_and_numbers_them_physically)
{
    char *path = strdup(test_path("a shard.jsonl"));
    test_write_file(path, lines, strlen(lines));
    seen s = {0};
    ordo_read_counts c;
    ordo_error err;
    ASSERT_OK(ordo_shard_read(path, "meta.text", NULL, remember, &s, &c, &err), &err);
    ASSERT_EQ_STR(s.text, "first doc|caf\xc3\xa9 \xe2\x80\x94 second|third|");
    ASSERT_EQ_INT(c.read, 7);
    ASSERT_EQ_INT(c.passed, 3);
    ASSERT_EQ_INT(c.empty, 4); /* blank, "", null, blank */
    ASSERT_EQ_INT(c.filtered, 0);
    ASSERT_EQ_INT(s.count, 3);
    ASSERT_EQ_INT(s.records[0], 0);
    ASSERT_EQ_INT(s.records[1], 4);
    ASSERT_EQ_INT(s.records[2], 6);
    /* the flat field does not exist: the first record is named */
    ASSERT_STATUS(ordo_shard_read(path, "text", NULL, remember, &s, &c, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "line 1");
    ASSERT_CONTAINS(err.message, "no text field");
    /* a path with an empty part is refused before reading */
    ASSERT_STATUS(ordo_shard_read(path, "meta..text", NULL, remember, &s, &c, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "meta..text");
    free(path);
}

TEST(shard_read_gives_the_same_documents_from_zstd_shards)
{
    char *path = strdup(test_path("in.jsonl"));
    test_write_file(path, lines, strlen(lines));
    const char *inputs[] = {path};
    ordo_shard_options o = {.out_dir = test_path("out"), .docs_per_frame = 2};
    ordo_shard_summary done;
    ordo_error err;
    /* the default text field is flat: the first line is named */
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, &done, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "line at byte 0");
    o.text_field = "meta.text";
    ASSERT_OK(ordo_shard_write(&o, inputs, 1, &done, &err), &err);
    ASSERT_EQ_INT(done.docs, 3);
    ASSERT_EQ_INT(done.skipped, 4);
    char shard[1024];
    snprintf(shard, sizeof shard, "%s/shard-00000.jsonl.zst", o.out_dir);
    seen s = {0};
    ordo_read_counts c;
    ASSERT_OK(ordo_shard_read(shard, "meta.text", NULL, remember, &s, &c, &err), &err);
    ASSERT_EQ_STR(s.text, "first doc|caf\xc3\xa9 \xe2\x80\x94 second|third|");
    ASSERT_EQ_INT(c.read, 3);
    ASSERT_EQ_INT(s.records[2], 2);
    free(path);
}

TEST(shard_read_refuses_unknown_formats_and_missing_files)
{
    seen s = {0};
    ordo_error err;
    ASSERT_STATUS(ordo_shard_read(test_path("x.csv"), NULL, NULL, remember, &s, NULL, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, ".parquet");
    ASSERT_STATUS(ordo_shard_read(test_path("missing.jsonl"), NULL, NULL, remember, &s, NULL, &err),
                  ORDO_IO, &err);
    ASSERT_CONTAINS(err.message, "missing.jsonl");
}

static void write_gzip(const char *path, const char *const *members, size_t count)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f != NULL);
    for (size_t i = 0; i < count; i++) {
        z_stream z = {0};
        ASSERT(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        unsigned char out[8192];
        z.next_in = (unsigned char *)members[i];
        z.avail_in = (unsigned)strlen(members[i]);
        z.next_out = out;
        z.avail_out = sizeof out;
        ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
        fwrite(out, 1, sizeof out - z.avail_out, f);
        deflateEnd(&z);
    }
    fclose(f);
}

TEST(shard_writer_reads_gzip_inputs_member_by_member)
{
    char *dir = strdup(test_path("gz in"));
    char path[1024];
    ASSERT(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/a.jsonl.gz", dir);
    /* three members; a line of the second crosses into the third */
    const char *members[] = {"{\"text\":\"one\",\"lang\":\"en\"}\n\n", "{\"text\":\"two\"}\n{\"te",
                             "xt\":\"three\"}\n{\"text\":\"\"}\n"};
    write_gzip(path, members, 3);
    snprintf(path, sizeof path, "%s/b.json.gz", dir);
    const char *one[] = {"{\"text\":\"four\"}"};
    write_gzip(path, one, 1);
    const char *inputs[] = {dir};
    ordo_shard_options o = {.out_dir = test_path("gz out"), .docs_per_frame = 2};
    ordo_shard_summary done;
    ordo_error err;
    ASSERT_OK(ordo_shard_write(&o, inputs, 1, &done, &err), &err);
    ASSERT_EQ_INT(done.files, 2);
    ASSERT_EQ_INT(done.docs, 4);
    ASSERT_EQ_INT(done.skipped, 2);
    ASSERT_EQ_INT(done.frames, 2);
    /* the lines are kept whole, metadata included */
    snprintf(path, sizeof path, "%s/shard-00000.jsonl.zst", o.out_dir);
    seen s = {0};
    ordo_read_counts c;
    ASSERT_OK(ordo_shard_read(path, NULL, NULL, remember, &s, &c, &err), &err);
    ASSERT_EQ_STR(s.text, "one|two|three|four|");
    ASSERT_EQ_INT(c.read, 4);
    /* bytes after the last member: refused by offset, nothing left behind */
    snprintf(path, sizeof path, "%s/b.json.gz", dir);
    size_t plain = 0;
    char *kept = test_read_file(path, &plain);
    char *garbage = malloc(plain + 7);
    memcpy(garbage, kept, plain);
    memcpy(garbage + plain, "garbage", 7);
    test_write_file(path, garbage, plain + 7);
    o.out_dir = test_path("gz out garbage");
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, &done, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "b.json.gz");
    char at[32];
    snprintf(at, sizeof at, "%zu", plain);
    ASSERT_CONTAINS(err.message, at);
    test_write_file(path, kept, plain);
    free(kept);
    free(garbage);
    /* a truncated member: refused, naming the file; nothing left behind */
    snprintf(path, sizeof path, "%s/a.jsonl.gz", dir);
    size_t size = 0;
    char *bytes = test_read_file(path, &size);
    test_write_file(path, bytes, size - 9);
    free(bytes);
    o.out_dir = test_path("gz out 2");
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, &done, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a.jsonl.gz");
    ASSERT_CONTAINS(err.message, "gzip");
    snprintf(path, sizeof path, "%s/shard-00000.jsonl.zst", o.out_dir);
    ASSERT(access(path, F_OK) != 0);
    free(dir);
}

/* A text holding U+0000 (valid JSON, found in crawled pages) is read
 * with its length: the NUL is a byte of the document, nothing is cut. */
TEST(shard_read_keeps_a_nul_inside_a_text)
{
    char *path = strdup(test_path("nul.jsonl"));
    static const char nul[] = "{\"text\": \"before\\u0000after\"}\n{\"text\": \"\\u0000\"}\n";
    test_write_file(path, nul, strlen(nul));
    seen s = {0};
    ordo_read_counts c;
    ordo_error err;
    ASSERT_OK(ordo_shard_read(path, "text", NULL, remember, &s, &c, &err), &err);
    ASSERT_EQ_INT(c.passed, 2);
    ASSERT_EQ_INT(s.len, 12 + 1 + 1 + 1);
    ASSERT(memcmp(s.text, "before\0after|\0|", 15) == 0);
    free(path);
}
