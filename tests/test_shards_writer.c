/* The shard writer (loader/shards/writer.c) through ordo_shard_write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "ordo.h"

static char *make_inputs(void)
{
    char *dir = strdup(test_path("inputs with spaces"));
    char path[1024];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/b.jsonl", dir);
    /* 7 documents, one empty and one blank line */
    const char *lines = "{\"text\":\"one\"}\n{\"text\":\"\"}\n\n{\"text\":\"two\"}\n"
                        "{\"text\":\"three\"}\n{\"text\":\"four\"}\n{\"text\":\"five\"}\n"
                        "{\"text\":\"six\"}\n";
    test_write_file(path, lines, strlen(lines));
    snprintf(path, sizeof path, "%s/a.txt", dir);
    test_write_file(path, "a whole file", 12);
    return dir;
}

TEST(shard_writer_counts_frames_and_shards_of_uneven_inputs)
{
    char *dir = make_inputs();
    const char *inputs[] = {dir};
    ordo_shard_options o = {.out_dir = test_path("out"), .docs_per_frame = 3, .docs_per_shard = 4};
    ordo_shard_summary done;
    ordo_error err;
    ASSERT_OK(ordo_shard_write(&o, inputs, 1, &done, &err), &err);
    /* a.txt first (bytewise order), then b.jsonl's six: 7 documents, 2 skipped,
     * shards of 4 + 3 documents, frames of 3 + 1 and 3 */
    ASSERT_EQ_INT(done.files, 2);
    ASSERT_EQ_INT(done.docs, 7);
    ASSERT_EQ_INT(done.skipped, 2);
    ASSERT_EQ_INT(done.shards, 2);
    ASSERT_EQ_INT(done.frames, 3);
    char path[1024];
    snprintf(path, sizeof path, "%s/shard-00001.jsonl.zst", o.out_dir);
    ASSERT(access(path, R_OK) == 0);
    /* the same folder again: refused, nothing changed */
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, &done, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "already holds shards");
    free(dir);
}

TEST(shard_writer_refuses_bad_options_and_leaves_nothing_on_bad_input)
{
    char *dir = make_inputs();
    const char *inputs[] = {dir};
    ordo_error err;
    ordo_shard_options o = {.out_dir = test_path("out"), .docs_per_frame = -1};
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "not -1");
    o = (ordo_shard_options){.out_dir = test_path("out"), .level = 20};
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "not 20");
    o = (ordo_shard_options){0};
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, NULL, &err), ORDO_INVALID, &err);
    /* a malformed line after good documents, one per shard: no shard stays */
    char path[1024];
    snprintf(path, sizeof path, "%s/c.jsonl", dir);
    test_write_file(path, "{\"text\":\"ok\"}\n{\"text\": 3}\n", 26);
    o = (ordo_shard_options){
        .out_dir = test_path("out2"), .docs_per_frame = 1, .docs_per_shard = 1};
    ASSERT_STATUS(ordo_shard_write(&o, inputs, 1, NULL, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "c.jsonl': line at byte 14: its text field is not a string");
    snprintf(path, sizeof path, "%s/shard-00000.jsonl.zst", o.out_dir);
    ASSERT(access(path, F_OK) != 0);
    free(dir);
}
