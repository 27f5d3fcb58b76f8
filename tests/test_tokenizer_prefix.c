/* Encoding a prefix (ordo__tokenizer_append_upto, what a replay uses to
 * tokenize a long document only as far as its epoch packs it): for every
 * stop, the ids are the whole text's first ones, whole pieces, at least
 * `stop` of them when the text has so many, and "complete" only when they
 * are all of them; under a tiktoken encoding and a tokenizer.json with a
 * normalizer, a pre-tokenizer and added tokens. */
#include "fixtures.h"
#include "testing.h"
#include "tokenizer/tokenizer.h"

static const char *const texts[] = {
    "",
    "a",
    "Hello, world!  It's 2026: 12345 tokens\n\n\tend",
    "caf\xc3\xa9 \xce\xbb\xce\xbb \xe4\xb8\xad\xe6\x96\x87 r\xc3\xa9sum\xc3\xa9   ",
    "broken \xff\xfe utf-8 \xc3 here",
    "abc ab xyz abcab  xyzxyz a b c unknown!",
};

/* Every stop from 0 to past the end: a prefix of the whole, as long as
 * asked, complete only when whole (exactly then when `exact`). */
static void check_prefixes(const ordo_tokenizer *t, int exact)
{
    ordo_error err;
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        const char *text = texts[k];
        ordo__tokens whole = {0};
        int complete = 0;
        ASSERT_OK(
            ordo__tokenizer_append_upto(t, text, strlen(text), SIZE_MAX, &whole, &complete, &err),
            &err);
        ASSERT(complete);
        for (size_t stop = 0; stop <= whole.count + 2; stop++) {
            ordo__tokens part = {0};
            ASSERT_OK(ordo__tokens_push(&part, 7, &err), &err); /* ids already there count */
            ASSERT_OK(ordo__tokenizer_append_upto(t, text, strlen(text), stop + 1, &part, &complete,
                                                  &err),
                      &err);
            size_t got = part.count - 1;
            ASSERT(got <= whole.count);
            ASSERT(got >= (stop < whole.count ? stop : whole.count));
            ASSERT(got == 0 || memcmp(part.ids + 1, whole.ids, got * sizeof *whole.ids) == 0);
            if (complete || exact)
                ASSERT_EQ_INT(complete, got == whole.count);
            free(part.ids);
        }
        free(whole.ids);
    }
}

TEST(tokenizer_prefix_is_the_whole_texts_first_ids_tiktoken)
{
    const char *dir = getenv("ORDO_VOCAB");
    char path[1024];
    snprintf(path, sizeof path, "%s/cl100k_base.tiktoken", dir ? dir : "build/vocab");
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open("cl100k_base", path, &t, &err), &err);
    check_prefixes(t, 1);
    ordo_tokenizer_close(t);
}

TEST(tokenizer_prefix_is_the_whole_texts_first_ids_tokenizer_json)
{
    static const char json[] =
        "{\"version\":\"1.0\",\"added_tokens\":["
        "{\"id\":9,\"content\":\"xyz\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
        "\"normalized\":true,\"special\":false},"
        "{\"id\":10,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
        "\"normalized\":false,\"special\":true}],"
        "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},"
        "{\"type\":\"Lowercase\"}]},"
        "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Whitespace\"},"
        "{\"type\":\"Digits\",\"individual_digits\":true}]},"
        "\"post_processor\":null,\"decoder\":null,"
        "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":\"<unk>\",\"fuse_unk\":false,"
        "\"vocab\":{\"<unk>\":0,\"a\":1,\"b\":2,\"c\":3,\"ab\":4,\"abc\":5,\"e\":6,\"l\":7,"
        "\"o\":8},\"merges\":[\"a b\",\"ab c\"]}}";
    const char *path = test_path("tokenizer.json");
    test_write_file(path, json, sizeof json - 1);
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open_json(path, &t, &err), &err);
    check_prefixes(t, 0);
    ordo_tokenizer_close(t);
}
