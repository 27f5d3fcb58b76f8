/* The tokenizer.json BPE model and added tokens on small hand-written
 * files. Every expected id list was printed by Hugging Face's own library
 * (npm tokenizers 0.23.2, the Rust core): the same JSON given to
 * Tokenizer.fromString, encode(text, null, {addSpecialTokens: false}),
 * with the special added tokens removed from added_tokens (as
 * tests/peers/hf_oracle.mjs does it); no normalizer or pre-tokenizer, so each
 * text is one piece. */
#include <pthread.h>

#include "harness.h"
#include "testing.h"
#include "tokenizer/hf_model.h"

/* A whole tokenizer.json around a model's vocab and merges. */
static const char *document(const char *vocab, const char *merges, const char *options,
                            const char *added, const char *decoder)
{
    static char json[16384];
    snprintf(json, sizeof json,
             "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[%s],"
             "\"normalizer\":null,\"pre_tokenizer\":null,\"post_processor\":null,"
             "\"decoder\":%s,\"model\":{\"type\":\"BPE\",\"dropout\":null%s%s,"
             "\"vocab\":{%s},\"merges\":[%s]}}",
             added ? added : "", decoder ? decoder : "null", options && *options ? "," : "",
             options ? options : "", vocab, merges);
    return json;
}

/* Loads JSON text through a real file. */
static ordo__hf *load(const char *json)
{
    const char *path = test_path("tokenizer.json");
    test_write_file(path, json, strlen(json));
    ordo__hf *hf = NULL;
    ordo_error err;
    ASSERT_OK(ordo__hf_load(path, &hf, &err), &err);
    return hf;
}

/* The ids of text, space-separated (static buffer). */
static const char *ids_of(const ordo__hf *hf, const char *text)
{
    static char out[8192];
    ordo__tokens tokens = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_encode(hf, text, strlen(text), &tokens, &err), &err);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < tokens.count && o + 16 < sizeof out; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, i ? " %u" : "%u", tokens.ids[i]);
    free(tokens.ids);
    return out;
}

static char *repeat(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

static const char *abcd_vocab = "\"a\":0,\"b\":1,\"c\":2,\"d\":3,\"ab\":4,\"bc\":5,\"cd\":6,"
                                "\"abc\":7,\"bcd\":8,\"aa\":9,\"aaa\":10,\"aaaa\":11,\"bb\":12,"
                                "\"dd\":13";

/* Lowest rank first, leftmost on ties; "dd" is in the vocab but never
 * made (no merge lists it); characters not in the vocab are dropped when
 * there is no unk_token. Long words take the heap path. */
static void check_abcd(const ordo__hf *hf)
{
    ASSERT_EQ_STR(ids_of(hf, "abcd"), "0 8");
    ASSERT_EQ_STR(ids_of(hf, "abcabcd bcdd aaaaa aaa abab"), "0 5 0 8 8 3 11 11 4 4");
    ASSERT_EQ_STR(ids_of(hf, "abc"), "0 5");
    ASSERT_EQ_STR(ids_of(hf, ""), "");
    ASSERT_EQ_STR(ids_of(hf, "aaa"), "10");     /* a a first at 0, not at 1 */
    ASSERT_EQ_STR(ids_of(hf, "aaaaa"), "9 10"); /* then aa aa before aa a */
    char *as = repeat('a', 128, "b"), expected[512] = "";
    for (int i = 0; i < 31; i++)
        strcat(expected, "11 ");
    strcat(expected, "10 4");
    ASSERT_EQ_STR(ids_of(hf, as), expected);
    free(as);
    as = repeat('a', 129, ""); /* the heap's ties */
    expected[0] = '\0';
    for (int i = 0; i < 31; i++)
        strcat(expected, "11 ");
    strcat(expected, "9 10");
    ASSERT_EQ_STR(ids_of(hf, as), expected);
    free(as);
    char *bs = repeat('b', 104, "cd");
    expected[0] = '\0';
    for (int i = 0; i < 51; i++)
        strcat(expected, "12 ");
    strcat(expected, "1 8");
    ASSERT_EQ_STR(ids_of(hf, bs), expected);
    free(bs);
}

TEST(hf_model_merges_as_strings_lowest_rank_leftmost)
{
    ordo__hf *hf = load(document(abcd_vocab,
                                 "\"b c\",\"a b\",\"c d\",\"ab c\",\"bc d\",\"a a\",\"aa a\","
                                 "\"aa aa\",\"b b\"",
                                 NULL, NULL, NULL));
    check_abcd(hf);
    ordo__hf_free(hf);
}

TEST(hf_model_merges_as_pairs_give_the_same_ids)
{
    ordo__hf *hf = load(document(abcd_vocab,
                                 "[\"b\",\"c\"],[\"a\",\"b\"],[\"c\",\"d\"],[\"ab\",\"c\"],"
                                 "[\"bc\",\"d\"],[\"a\",\"a\"],[\"aa\",\"a\"],[\"aa\",\"aa\"],"
                                 "[\"b\",\"b\"]",
                                 NULL, NULL, NULL));
    check_abcd(hf);
    ordo__hf_free(hf);
}

/* <0x00>..<0xFF> after <unk>, then a, b, ab, é. */
static const char *fallback_vocab(void)
{
    static char vocab[8192];
    size_t o = (size_t)snprintf(vocab, sizeof vocab, "\"<unk>\":0");
    for (int b = 0; b < 256; b++)
        o += (size_t)snprintf(vocab + o, sizeof vocab - o, ",\"<0x%02X>\":%d", b, b + 1);
    snprintf(vocab + o, sizeof vocab - o, ",\"a\":257,\"b\":258,\"ab\":259,\"\\u00e9\":260");
    return vocab;
}

TEST(hf_model_byte_fallback_for_characters_not_in_the_vocab)
{
    ordo__hf *hf = load(document(fallback_vocab(), "\"a b\"",
                                 "\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"byte_fallback\":true",
                                 NULL, NULL));
    ASSERT_EQ_STR(ids_of(hf, "ab\xc3\xa9\xe2\x82\xaczzab"), "259 260 227 131 173 123 123 259");
    ASSERT_EQ_STR(ids_of(hf, "abcd"), "259 100 101");
    ASSERT_EQ_STR(ids_of(hf, "a\xc3\xa9"
                             "b"),
                  "257 260 258");
    ordo__hf_free(hf);
}

TEST(hf_model_unk_token_fused_or_one_per_character)
{
    const char *vocab = "\"<unk>\":0,\"a\":1,\"b\":2,\"ab\":3";
    ordo__hf *fused =
        load(document(vocab, "\"a b\"", "\"unk_token\":\"<unk>\",\"fuse_unk\":true", NULL, NULL));
    ASSERT_EQ_STR(ids_of(fused, "ab\xc3\xa9\xe2\x82\xaczzab"), "3 0 3");
    ASSERT_EQ_STR(ids_of(fused, "zabz"), "0 3 0");
    ordo__hf_free(fused);
    ordo__hf *apart =
        load(document(vocab, "\"a b\"", "\"unk_token\":\"<unk>\",\"fuse_unk\":false", NULL, NULL));
    ASSERT_EQ_STR(ids_of(apart, "ab\xc3\xa9\xe2\x82\xaczzab"), "3 0 0 0 0 3");
    ASSERT_EQ_STR(ids_of(apart, "abcd"), "3 0 0");
    ordo__hf_free(apart);
}

/* Only some <0xXX> tokens: a character whose bytes are not all there is
 * unknown (fused), one whose bytes are is spelled in bytes. */
TEST(hf_model_byte_fallback_needs_every_byte_else_unk)
{
    ordo__hf *hf = load(document(
        "\"<unk>\":0,\"<0x41>\":1,\"<0xC3>\":2,\"<0xA9>\":3,\"a\":4,"
        "\"b\":5,\"ab\":6",
        "\"a b\"", "\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"byte_fallback\":true", NULL, NULL));
    ASSERT_EQ_STR(ids_of(hf, "ab\xc3\xa9\xe2\x82\xaczzab"), "6 2 3 0 6");
    ASSERT_EQ_STR(ids_of(hf, "a\xc3\xa9"
                             "b"),
                  "4 2 3 5");
    ordo__hf_free(hf);
}

TEST(hf_model_ignore_merges_takes_a_whole_word_in_the_vocab)
{
    const char *vocab = "\"a\":0,\"b\":1,\"c\":2,\"d\":3,\"ab\":4,\"cd\":5,\"abcd\":6";
    ordo__hf *whole =
        load(document(vocab, "\"a b\",\"c d\"", "\"ignore_merges\":true", NULL, NULL));
    ASSERT_EQ_STR(ids_of(whole, "abcd"), "6");
    ASSERT_EQ_STR(ids_of(whole, "abc"), "4 2");
    ordo__hf_free(whole);
    ordo__hf *merged =
        load(document(vocab, "\"a b\",\"c d\"", "\"ignore_merges\":false", NULL, NULL));
    ASSERT_EQ_STR(ids_of(merged, "abcd"), "4 5");
    ordo__hf_free(merged);
}

TEST(hf_model_continuing_subword_prefix_and_end_of_word_suffix)
{
    ordo__hf *prefix = load(document("\"a\":0,\"##b\":1,\"##c\":2,\"ab\":3,\"abc\":4,\"b\":5,"
                                     "\"c\":6,\"##bc\":7",
                                     "\"a ##b\",\"ab ##c\",\"##b ##c\"",
                                     "\"continuing_subword_prefix\":\"##\"", NULL, NULL));
    ASSERT_EQ_STR(ids_of(prefix, "abc"), "4");
    ASSERT_EQ_STR(ids_of(prefix, "abé€zzab"), "3 1");
    ASSERT_EQ_STR(ids_of(prefix, "abcabcd bcdd aaaaa aaa abab"), "4 7 7 1 1");
    ordo__hf_free(prefix);
    ordo__hf *suffix = load(document("\"a\":0,\"b\":1,\"c\":2,\"c</w>\":3,\"ab\":4,\"abc</w>\":5,"
                                     "\"b</w>\":6,\"bc</w>\":7",
                                     "\"a b\",\"ab c</w>\",\"b c</w>\"",
                                     "\"end_of_word_suffix\":\"</w>\"", NULL, NULL));
    ASSERT_EQ_STR(ids_of(suffix, "abc"), "5");
    ASSERT_EQ_STR(ids_of(suffix, "ab"), "0 6");
    ASSERT_EQ_STR(ids_of(suffix, "abcd"), "4 2");
    ordo__hf_free(suffix);
}

static const char *added(int id, const char *content, int special, int lstrip, int rstrip)
{
    static char buf[8][256];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 256,
             "{\"id\":%d,\"content\":\"%s\",\"single_word\":false,\"lstrip\":%s,\"rstrip\":%s,"
             "\"normalized\":false,\"special\":%s}",
             id, content, lstrip ? "true" : "false", rstrip ? "true" : "false",
             special ? "true" : "false");
    return b;
}

/* Non-special added tokens split the text, leftmost then longest; a
 * special one is never matched, yet names its id; one already in the
 * vocab keeps its vocab id. */
TEST(hf_added_tokens_leftmost_longest_and_specials_never_matched)
{
    char list[1024];
    snprintf(list, sizeof list, "%s,%s,%s,%s,%s", added(11, "xy", 0, 0, 0),
             added(12, "xyz", 0, 0, 0), added(13, "yzz", 0, 0, 0), added(14, "<s>", 1, 0, 0),
             added(5, "ab", 0, 0, 0));
    ordo__hf *hf = load(document("\"a\":0,\"b\":1,\"c\":2,\"x\":3,\"y\":4,\"ab\":5,\"<\":6,"
                                 "\"s\":7,\">\":8,\"<s\":9,\">a\":10",
                                 "\"a b\",\"< s\"", NULL, list, NULL));
    ASSERT_EQ_STR(ids_of(hf, "xyzz xyz <s> <s>a ab xyzzz yzzxy"), "12 12 9 8 9 8 0 5 12 13 11");
    uint32_t id = 0;
    ASSERT(ordo__hf_token_id(hf, "<s>", &id));
    ASSERT_EQ_INT(id, 14);
    ASSERT(ordo__hf_token_id(hf, ">a", &id));
    ASSERT_EQ_INT(id, 10);
    ASSERT(!ordo__hf_token_id(hf, "zz", &id));
    ASSERT_EQ_INT(ordo__hf_vocab_size(hf), 15);
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_error err;
    ASSERT_STATUS(ordo__hf_decode(hf, 14, &buffer, &used, &capacity, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "token 14 '<s>' is a special token");
    ASSERT_OK(ordo__hf_decode(hf, 12, &buffer, &used, &capacity, &err), &err);
    ASSERT_EQ_INT(used, 3);
    ASSERT(memcmp(buffer, "xyz", 3) == 0);
    free(buffer);
    ordo__hf_free(hf);
}

/* A vocab that skips ids (as Xenova's gpt-4o file skips the 18 before
 * <|endofprompt|>): the library numbers an added token that is not in the
 * vocab by the vocab's count of tokens (3 here, not 6), and printed "5 3
 * 1 0" for "ab<x>ba"; the skipped ids are no tokens; the id space is 6. */
TEST(hf_vocab_skipping_ids_numbers_as_the_library_does)
{
    ordo__hf *hf =
        load(document("\"a\":0,\"b\":1,\"ab\":5", "\"a b\"", NULL, added(3, "<x>", 0, 0, 0), NULL));
    ASSERT_EQ_STR(ids_of(hf, "ab<x>ba"), "5 3 1 0");
    ASSERT_EQ_INT(ordo__hf_vocab_size(hf), 6);
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_error err;
    for (uint32_t skipped = 2; skipped <= 4; skipped += 2) {
        ASSERT_STATUS(ordo__hf_decode(hf, skipped, &buffer, &used, &capacity, &err), ORDO_INVALID,
                      &err);
        ASSERT_CONTAINS(err.message, "is not a token of the tokenizer.json");
    }
    ASSERT_OK(ordo__hf_decode(hf, 5, &buffer, &used, &capacity, &err), &err);
    ASSERT_EQ_INT(used, 2);
    ASSERT(memcmp(buffer, "ab", 2) == 0);
    free(buffer);
    ordo__hf_free(hf);
}

/* Vocab keys holding U+0000 (InternLM2's vocab has "\u0000"), which the
 * JSON reader cannot keep in a key: read as the file has them. A key
 * that is a backslash and "u0000" (six characters) stays as it is. The
 * ids are the library's (npm tokenizers 0.23.2) for the same file. */
TEST(hf_vocab_keys_holding_nul_are_read_as_the_file_has_them)
{
    static const char json[] =
        "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\u0000\": 0, \"a\": 1, \"\\u0000a\": 2, "
        "\"\\\\u0000\": 3, \"\\\\\": 4, \"u\": 5, \"0\": 6, \"\\\\u\": 7, \"b\\u0000c\": 8, "
        "\"b\": 9, \"c\": 10, \"b\\u0000\": 11}, \"merges\": [\"\\u0000 a\", \"\\\\ u\", "
        "\"b \\u0000\", \"b\\u0000 c\"]}}";
    ordo__hf *hf = load(json);
    ordo__tokens tokens = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_encode(hf, "a\0a\0", 4, &tokens, &err), &err);
    ASSERT_EQ_INT(tokens.count, 3);
    ASSERT(tokens.ids[0] == 1 && tokens.ids[1] == 2 && tokens.ids[2] == 0);
    free(tokens.ids);
    tokens = (ordo__tokens){0};
    ASSERT_OK(ordo__hf_encode(hf, "\\u0000 b\0c\0", 11, &tokens, &err), &err);
    static const uint32_t want[] = {7, 6, 6, 6, 6, 8, 0};
    ASSERT_EQ_INT(tokens.count, 7);
    ASSERT(memcmp(tokens.ids, want, sizeof want) == 0);
    free(tokens.ids);
    uint32_t id = 0;
    ASSERT(ordo__hf_token_id(hf, "\\u0000", &id));
    ASSERT_EQ_INT(id, 3);
    ordo__hf_free(hf);
    /* without a NUL key, U+FDD0 is itself */
    hf = load("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\uFDD0\": 0, \"x\": 1}, "
              "\"merges\": []}}");
    ASSERT(ordo__hf_token_id(hf, "\xef\xb7\x90", &id));
    ASSERT_EQ_INT(id, 0);
    ordo__hf_free(hf);
}

TEST(hf_added_tokens_lstrip_and_rstrip_take_the_spaces_around)
{
    char list[512];
    snprintf(list, sizeof list, "%s,%s", added(4, "<m>", 0, 1, 1), added(5, "<n>", 0, 0, 1));
    ordo__hf *hf = load(document("\"a\":0,\"b\":1,\" \":2,\"  \":3", "", NULL, list, NULL));
    ASSERT_EQ_STR(ids_of(hf, "a  <m>  b <n>  a<m>"), "0 4 1 2 5 0 4");
    ASSERT_EQ_STR(ids_of(hf, "<m><m>  <n> <n>"), "4 4 5 5");
    ordo__hf_free(hf);
}

static const char *decoded(const ordo__hf *hf, const uint32_t *ids, size_t count)
{
    static char text[256];
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_error err;
    for (size_t i = 0; i < count; i++)
        ASSERT_OK(ordo__hf_decode(hf, ids[i], &buffer, &used, &capacity, &err), &err);
    snprintf(text, sizeof text, "%.*s", (int)used, buffer ? buffer : "");
    free(buffer);
    return text;
}

/* Expected texts from the library's decode(ids, false) on the same files. */
TEST(hf_decode_through_the_files_decoder)
{
    const char *vocab = "\"<unk>\":0,\"\xe2\x96\x81"
                        "a\":1,\"b\":2,\"<0xC3>\":3,\"<0xA9>\":4,\"\xe2\x96\x81\":5";
    const char *llama2 = "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":"
                         "{\"String\":\"\xe2\x96\x81\"},\"content\":\" \"},{\"type\":"
                         "\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\",\"content\":"
                         "\" \",\"start\":1,\"stop\":0}]}";
    const char *meta = "{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\","
                       "\"prepend_scheme\":\"always\",\"split\":true}";
    const uint32_t ids[] = {1, 2, 3, 4, 5, 1}, two[] = {5, 1};
    ordo__hf *hf = load(document(vocab, "", "\"unk_token\":\"<unk>\"", NULL, llama2));
    ASSERT_EQ_STR(decoded(hf, ids, 6), "ab\xc3\xa9  a");
    ASSERT_EQ_STR(decoded(hf, two, 2), " a");
    ordo__hf_free(hf);
    hf = load(document(vocab, "", "\"unk_token\":\"<unk>\"", NULL, meta));
    ASSERT_EQ_STR(decoded(hf, ids, 6), "ab<0xC3><0xA9>  a");
    ASSERT_EQ_STR(decoded(hf, two, 2), " a");
    ordo__hf_free(hf);
    hf = load(document(vocab, "", "\"unk_token\":\"<unk>\"", NULL, NULL));
    ASSERT_EQ_STR(decoded(hf, two, 2), "\xe2\x96\x81 \xe2\x96\x81"
                                       "a");
    ordo__hf_free(hf);
    hf = load(document("\"\xc4\xa0"
                       "a\":0,\"\xc3\x83\xc2\xa9\":1,\"\xc4\x8a\xc4\x8a\":2,\"b\":3",
                       "", NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":true}"));
    const uint32_t bytes[] = {0, 1, 2, 3};
    ASSERT_EQ_STR(decoded(hf, bytes, 4), " a\xc3\xa9\n\nb");
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_error err;
    ASSERT_STATUS(ordo__hf_decode(hf, 4, &buffer, &used, &capacity, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "token 4 is out of range");
    ordo__hf_free(hf);
}

typedef struct {
    const ordo__hf *hf;
    const char *const *texts;
    size_t count;
    const char *const *expected;
    int same;
} thread_job;

static void *encode_all(void *arg)
{
    thread_job *job = arg;
    job->same = 1;
    for (int round = 0; round < 20; round++)
        for (size_t i = 0; i < job->count; i++) {
            ordo__tokens tokens = {0};
            ordo_error err;
            char ids[2048];
            size_t o = 0;
            ids[0] = '\0';
            if (ordo__hf_encode(job->hf, job->texts[i], strlen(job->texts[i]), &tokens, &err))
                job->same = 0;
            for (size_t k = 0; k < tokens.count && o + 16 < sizeof ids; k++)
                o += (size_t)snprintf(ids + o, sizeof ids - o, k ? " %u" : "%u", tokens.ids[k]);
            free(tokens.ids);
            if (strcmp(ids, job->expected[i]) != 0)
                job->same = 0;
        }
    return NULL;
}

/* One loaded file serves two threads at once (each with its own piece
 * cache) and both get the ids of one thread alone. */
TEST(hf_encode_from_two_threads_gives_the_ids_of_one)
{
    char list[512];
    snprintf(list, sizeof list, "%s,%s", added(261, "<m>", 0, 1, 1), added(262, "<s>", 1, 0, 0));
    ordo__hf *hf = load(document(fallback_vocab(), "\"a b\"",
                                 "\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"byte_fallback\":true",
                                 list, NULL));
    static const char *const texts[] = {"ab ab <m> abab", "a\xc3\xa9 <s> zz",
                                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
                                        "", "b<m>a"};
    size_t n = sizeof texts / sizeof texts[0];
    char *expected[5];
    for (size_t i = 0; i < n; i++)
        expected[i] = strdup(ids_of(hf, texts[i]));
    pthread_t threads[2];
    thread_job jobs[2];
    for (int t = 0; t < 2; t++) {
        jobs[t] = (thread_job){hf, texts, n, (const char *const *)expected, 0};
        ASSERT(pthread_create(&threads[t], NULL, encode_all, &jobs[t]) == 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(threads[t], NULL);
        ASSERT(jobs[t].same);
    }
    for (size_t i = 0; i < n; i++)
        free(expected[i]);
    ordo__hf_free(hf);
}

/* Each thread keeps its encoding scratch from call to call: a word of
 * 100,000 symbols grows it past what is kept, so that call frees it, and
 * a short text gets the same ids before and after. */
TEST(hf_encode_scratch_kept_between_calls_and_trimmed_after_a_huge_word)
{
    ordo__hf *hf = load(document(fallback_vocab(), "\"a b\"",
                                 "\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"byte_fallback\":true",
                                 NULL, NULL));
    const char *text = "ab ab a\xc3\xa9 abab zz";
    char *before = strdup(ids_of(hf, text));
    char *huge = repeat('a', 100000, "b");
    ordo__tokens tokens = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_encode(hf, huge, strlen(huge), &tokens, &err), &err);
    ASSERT_EQ_INT(tokens.count, 100000); /* 99,999 times a, then ab */
    ASSERT_EQ_INT(tokens.ids[0], 257);
    ASSERT_EQ_INT(tokens.ids[99998], 257);
    ASSERT_EQ_INT(tokens.ids[99999], 259);
    ordo__hf_scratch spare;
    ordo__hf_scratch *s = ordo__hf_scratch_take(&spare);
    ASSERT(s != &spare);
    ASSERT(s->cap <= 4096);
    ordo__hf_scratch_return(s, &spare);
    ASSERT_EQ_STR(ids_of(hf, text), before);
    ASSERT_EQ_STR(ids_of(hf, text), before);
    free(tokens.ids);
    free(huge);
    free(before);
    ordo__hf_free(hf);
}

#define SP "\xe2\x96\x81" /* U+2581 */

/* A long word is merged in parts cut before U+2581, except after '>',
 * which ends the left side of a merge into a U+2581 token (as Gemma 3's
 * ('>', '▁</')): the ids are those of merging it whole. */
TEST(hf_model_long_words_cut_only_where_no_merge_crosses)
{
    ordo__hf *hf = load(document("\"<unk>\":0,\"a\":1,\"b\":2,\"ab\":3,\">\":4,\"" SP "\":5,\"" SP
                                 "a\":6,\"" SP SP "\":7,\">" SP "\":8,\">" SP "a\":9,\"" SP
                                 "ab\":10,\"ba\":11",
                                 "[\"" SP "\",\"a\"],[\"" SP "\",\"" SP "\"],[\">\",\"" SP
                                 "\"],[\">" SP "\",\"a\"],[\"a\",\"b\"],[\"" SP "a\",\"b\"],"
                                 "[\"b\",\"a\"]",
                                 "\"unk_token\":\"<unk>\",\"fuse_unk\":true", NULL, NULL));
    ASSERT_EQ_STR(ids_of(hf, "ab" SP "ab>" SP "ab" SP SP "ab" SP "ba" SP "xx" SP "ab" SP "a>" SP
                             "ab" SP "bab"),
                  "3 10 4 10 5 10 5 11 5 0 10 6 4 10 5 2 3");
    ASSERT_EQ_STR(ids_of(hf, SP SP SP "ab>" SP SP "a" SP "abababababababababab" SP "x" SP "ab"),
                  "7 10 8 6 10 3 3 3 3 3 3 3 3 3 5 0 10");
    ordo__hf_free(hf);
}

/* normalized: true tokens are matched, by their normalized form, on the
 * normalized text; normalized: false ones on the raw text, before the
 * normalizer (here Lowercase) runs. Ids from the library as above. */
TEST(hf_added_tokens_normalized_matched_after_the_normalizer)
{
    const char *json =
        "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[{\"id\":31,\"c"
        "ontent\":\"Day\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":tr"
        "ue,\"special\":false},{\"id\":32,\"content\":\"[DAY]\",\"single_word\":false,\"lstrip\":fa"
        "lse,\"rstrip\":false,\"normalized\":false,\"special\":false},{\"id\":33,\"content\":\" x\""
        ",\"single_word\":false,\"lstrip\":true,\"rstrip\":false,\"normalized\":true,\"special\":fa"
        "lse}],\"normalizer\":{\"type\":\"Lowercase\"},\"pre_tokenizer\":null,\"post_processor\":nu"
        "ll,\"decoder\":null,\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"voca"
        "b\":{\"a\":0,\"b\":1,\"c\":2,\"d\":3,\"e\":4,\"y\":5,\"h\":6,\"i\":7,\"j\":8,\"k\":9,\"l\""
        ":10,\"m\":11,\"n\":12,\"o\":13,\"p\":14,\"q\":15,\"r\":16,\"s\":17,\"t\":18,\"u\":19,\"v\""
        ":20,\"w\":21,\"x\":22,\"z\":23,\" \":24,\"[\":25,\"]\":26,\"A\":27,\"B\":28,\"D\":29,\"Y\""
        ":30},\"merges\":[]}}";
    ordo__hf *hf = load(json);
    ASSERT_EQ_STR(ids_of(hf, "I read a [DAY] monday Day DAY day [day]  x  X"),
                  "7 24 16 4 0 3 24 0 24 32 24 11 13 12 31 24 31 24 31 24 31 24 25 31 26 33 33");
    ASSERT_EQ_STR(ids_of(hf, "yesterDAY[DAY]Day"), "5 4 17 18 4 16 31 32 31");
    ordo__hf_free(hf);
}

/* Metaspace's prepend_scheme "first" marks only the stretch that begins
 * the text: after a non-special added token at the start, "hi" gets no
 * U+2581 (the library: "QQhi" -> QQ, hi = 7 3; "hi" -> ▁hi = 5). */
TEST(hf_metaspace_first_marks_only_what_begins_the_text)
{
    const char *json =
        "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[{\"id\":7,"
        "\"content\":\"QQ\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
        "\"normalized\":false,\"special\":false}],\"normalizer\":null,\"pre_tokenizer\":{\"type\":"
        "\"Metaspace\",\"replacement\":\"\xe2\x96\x81\",\"prepend_scheme\":\"first\",\"split\":"
        "true},\"post_processor\":null,\"decoder\":null,\"model\":{\"type\":\"BPE\",\"dropout\":"
        "null,\"unk_token\":null,\"fuse_unk\":false,\"byte_fallback\":false,\"vocab\":{"
        "\"\xe2\x96\x81\":0,\"h\":1,\"i\":2,\"hi\":3,\"\xe2\x96\x81h\":4,\"\xe2\x96\x81hi\":5,"
        "\"Q\":6},\"merges\":[[\"h\",\"i\"],[\"\xe2\x96\x81\",\"h\"],[\"\xe2\x96\x81h\",\"i\"],"
        "[\"\xe2\x96\x81\",\"hi\"]]}}";
    ordo__hf *hf = load(json);
    ASSERT_EQ_STR(ids_of(hf, "QQhi"), "7 3");
    ASSERT_EQ_STR(ids_of(hf, "hi"), "5");
    ASSERT_EQ_STR(ids_of(hf, "hi QQhi"), "5 0 7 3");
    ASSERT_EQ_STR(ids_of(hf, "QQ hi"), "7 5");
    ordo__hf_free(hf);
}

/* A long word of many parts: they are merged side by side in a queue
 * (flushed when full, before a part too long for it, and at the end),
 * some come from the piece cache while others wait, and the ids come out
 * in order — each part's ids as if it were encoded alone. */
TEST(hf_model_long_word_parts_merged_side_by_side_keep_their_order)
{
    ordo__hf *hf = load(document("\"<unk>\":0,\"a\":1,\"b\":2,\"ab\":3,\">\":4,\"" SP "\":5,\"" SP
                                 "a\":6,\"" SP SP "\":7,\">" SP "\":8,\">" SP "a\":9,\"" SP
                                 "ab\":10,\"ba\":11",
                                 "[\"" SP "\",\"a\"],[\"" SP "\",\"" SP "\"],[\">\",\"" SP
                                 "\"],[\">" SP "\",\"a\"],[\"a\",\"b\"],[\"" SP "a\",\"b\"],"
                                 "[\"b\",\"a\"]",
                                 "\"unk_token\":\"<unk>\",\"fuse_unk\":true", NULL, NULL));
    static const char *const parts[] = {SP "ab", SP "bab",  SP "a",    SP "abba",
                                        SP "x",  SP "baab", SP "bbbb", SP "aab"};
    char text[4096] = "", expected[8192] = "";
    unsigned seed = 7;
    for (int k = 0; k < 70; k++) {
        seed = seed * 1103515245u + 12345u;
        const char *part = parts[(seed >> 16) % 8];
        if (k == 40) /* 60 symbols: merged at once, after the queue */
            part = SP "abababababababababababababababababababababababababababababab";
        strcat(text, part);
        strcat(expected, k ? " " : "");
        strcat(expected, ids_of(hf, part));
    }
    ASSERT_EQ_STR(ids_of(hf, text), expected);
    ordo__hf_free(hf);
}
