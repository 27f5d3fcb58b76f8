/* What the CLI says when an encoding, a rank file or a count is wrong:
 * the valid choices, from the library's one table, and how to fix it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corpus.h"
#include "fixtures.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *const every_encoding[] = {"gpt2",        "r50k_base",  "p50k_base",
                                             "cl100k_base", "o200k_base", "llama3"};

static void assert_lists_every_encoding(const char *text)
{
    for (size_t i = 0; i < sizeof every_encoding / sizeof every_encoding[0]; i++)
        ASSERT_CONTAINS(text, every_encoding[i]);
}

static const char *tiktoken_recipe(const char *name, const char *encoding, const char *ranks)
{
    const char *path = test_path(name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fprintf(f, "{\"seed\": 1, \"seq_len\": 32, \"global_batch\": 4, \"lanes\": 4, \"tokenizer\": "
               "{\"kind\": \"tiktoken\", \"encoding\": \"%s\", \"path\": \"%s\"}, \"sources\": "
               "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}",
            encoding, ranks);
    ASSERT(fclose(f) == 0);
    return path;
}

TEST(cli_encoding_errors_list_every_encoding)
{
    corpus_jsonl("data", "doc", 1, 20, 20, 200, 9);
    cli_result r = run_ordo(NULL, A("recipe", "check", tiktoken_recipe("bad.json", "cl99k", "x")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "encoding 'cl99k'");
    assert_lists_every_encoding(r.err);
    cli_result_free(&r);
    test_write_file(test_path("t.txt"), "hello", 5);
    r = run_ordo(NULL, A("tokens", "--encoding", "cl99k", test_path("t.txt")));
    ASSERT_EQ_INT(r.code, 1);
    assert_lists_every_encoding(r.err);
    cli_result_free(&r);
    r = run_ordo(NULL, A("tokens", "--help"));
    ASSERT_EQ_INT(r.code, 0);
    assert_lists_every_encoding(r.out);
    cli_result_free(&r);
}

TEST(cli_missing_rank_files_are_named_as_such)
{
    corpus_jsonl("data", "doc", 1, 20, 20, 200, 9);
    cli_result r = run_ordo(
        NULL, A("recipe", "check", tiktoken_recipe("r.json", "cl100k_base", "gone.tiktoken")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "tokenizer rank file");
    ASSERT_CONTAINS(r.err, "gone.tiktoken");
    ASSERT(strstr(r.err, "shard") == NULL);
    cli_result_free(&r);
    /* ordo tokens without --path: the default file is missing, and the
     * message says how to name another */
    ASSERT(mkdir(test_path("empty-vocab"), 0700) == 0);
    setenv("ORDO_VOCAB", test_path("empty-vocab"), 1);
    test_write_file(test_path("t.txt"), "hello", 5);
    r = run_ordo(NULL, A("tokens", "--encoding", "cl100k_base", test_path("t.txt")));
    unsetenv("ORDO_VOCAB");
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "cl100k_base.tiktoken");
    ASSERT_CONTAINS(r.err, "--path RANKS");
    cli_result_free(&r);
}

TEST(cli_counts_out_of_range_say_which_values_are_valid)
{
    corpus_jsonl("data", "doc", 1, 20, 20, 200, 9);
    const char *recipe = corpus_recipe(
        "r.json", 4, 8, 16, 2, 0, "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]");
    const char *bad[] = {"0", "-1", "65537", "two", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cli_result r = run_ordo(NULL, A("run", recipe, "--db", test_path("l.db"), "--name", "a",
                                        "--world-size", bad[i], "--steps", "3"));
        ASSERT_EQ_INT(r.code, 2);
        ASSERT_CONTAINS(r.err, "--world-size");
        ASSERT_CONTAINS(r.err, "from 1 to 65536");
        ASSERT_CONTAINS(r.err, "divides the recipe's lanes");
        cli_result_free(&r);
    }
    cli_result r = run_ordo(NULL, A("run", recipe, "--db", test_path("l.db"), "--name", "a",
                                    "--world-size", "2", "--steps", "0"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "--steps '0' must be a whole number from 1 to");
    cli_result_free(&r);
    r = run_ordo(NULL, A("run", recipe, "--db", test_path("l.db"), "--name", "a", "--world-size",
                         "2", "--steps", "3", "--from-step", "2"));
    ASSERT_EQ_INT(r.code, 2);
    ASSERT_CONTAINS(r.err, "--from-step does not apply to ordo run");
    cli_result_free(&r);
}
