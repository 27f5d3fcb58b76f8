/* tokenizer.json normalizers (ordo__hf_normalizer_parse, ordo__hf_normalize).
 * Every expected output here was taken from Hugging Face tokenizers itself
 * (npm tokenizers 0.23.2, normalizeString on the same normalizer); the
 * conformance suite (tests/hf_normalize_conformance.sh) compares the whole
 * Unicode range with it. */
#include <pthread.h>

#include "harness.h"
#include "testing.h"
#include "tokenizer/hf_normalize.h"

/* The normalizer of JSON text (must parse). */
static ordo__hf_normalizer *compile(const char *json_text)
{
    json_error_t jerr;
    json_t *json = json_loads(json_text, JSON_DECODE_ANY, &jerr);
    ASSERT(json != NULL);
    ordo__hf_normalizer *n = NULL;
    ordo_error err;
    ASSERT_OK(ordo__hf_normalizer_parse(json, "normalizer", &n, &err), &err);
    json_decref(json);
    return n;
}

/* Asserts that the normalizer of `json_text` turns `in` into `expected`. */
static void check(const char *json_text, const char *in, const char *expected)
{
    ordo__hf_normalizer *n = compile(json_text);
    ordo__text out = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_normalize(n, in, strlen(in), &out, &err), &err);
    ASSERT_EQ_INT(out.len, strlen(expected));
    ASSERT_EQ_STR(out.data, expected);
    free(out.data);
    ordo__hf_normalizer_free(n);
}

/* Asserts that parsing `json_text` fails with a message containing `message`. */
static void refused(const char *json_text, const char *message)
{
    json_error_t jerr;
    json_t *json = json_loads(json_text, JSON_DECODE_ANY, &jerr);
    ASSERT(json != NULL);
    ordo__hf_normalizer *n = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo__hf_normalizer_parse(json, "normalizer", &n, &err), ORDO_INVALID, &err);
    ASSERT(n == NULL);
    ASSERT_CONTAINS(err.message, message);
    json_decref(json);
}

#define NFC "{\"type\": \"NFC\"}"
#define NFD "{\"type\": \"NFD\"}"
#define NFKC "{\"type\": \"NFKC\"}"
#define NFKD "{\"type\": \"NFKD\"}"

TEST(hf_normalize_nfc_composes_and_orders_as_the_library)
{
    check(NFC, "plain ASCII stays", "plain ASCII stays");
    check(NFC, "e\xcc\x81", "\xc3\xa9");                        /* e + acute */
    check(NFC, "a\xcc\x96\xcc\x81", "\xc3\xa1\xcc\x96");        /* composes past a lower class */
    check(NFC, "q\xcc\x87\xcc\xa3", "q\xcc\xa3\xcc\x87");       /* reordered, nothing composes */
    check(NFC, "\xe1\xb8\x8b\xcc\xa3", "\xe1\xb8\x8d\xcc\x87"); /* d-dot-above + dot below */
    check(NFC, "\xe2\x84\xab", "\xc3\x85");                     /* ANGSTROM SIGN: singleton */
    check(NFC, "\xcd\x84", "\xcc\x88\xcc\x81");                 /* excluded composition */
    check(NFC, "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"); /* L V T */
    check(NFC, "\xea\xb0\x80\xe1\x86\xa7", "\xea\xb0\x80\xe1\x86\xa7"); /* U+11A7 is no T */
    check(NFC, "caf\xc3\xa9 \xc3\xa9\xcc\x81!", "caf\xc3\xa9 \xc3\xa9\xcc\x81!");
}

TEST(hf_normalize_forms_decompose_as_the_library)
{
    check(NFD, "\xe2\x84\xab", "A\xcc\x8a");
    check(NFD, "\xe1\xba\x9b\xcc\xa3", "\xc5\xbf\xcc\xa3\xcc\x87");
    check(NFKD, "\xe1\xba\x9b\xcc\xa3", "s\xcc\xa3\xcc\x87");
    check(NFKC, "\xe1\xba\x9b\xcc\xa3", "\xe1\xb9\xa9");
    check(NFKC, "\xef\xac\x81", "fi");
    check(NFKC, "\xe2\x91\xa0\xc2\xbd",
          "11\xe2\x81\x84"
          "2");
    check(NFD, "\xea\xb0\x81", "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8");
}

/* The library's tables are Unicode 9.0: characters added later have class
 * 0 and no composition (utf8proc's Unicode 15 would reorder or compose). */
TEST(hf_normalize_knows_unicode_9_only)
{
    check(NFC, "a\xe1\xb7\xb8\xcc\x96", "a\xe1\xb7\xb8\xcc\x96"); /* U+1DF8 (10.0) */
    check(NFD, "a\xe1\xb7\xb8\xcc\x96", "a\xe1\xb7\xb8\xcc\x96");
    check(NFC, "\xf0\x91\xa4\xb5\xf0\x91\xa4\xb0", "\xf0\x91\xa4\xb5\xf0\x91\xa4\xb0"); /* 13.0 */
    check(NFC, "e\xe1\xab\x81\xcc\x96\xcc\x81", "e\xe1\xab\x81\xcc\x96\xcc\x81");       /* 14.0 */
    check(NFC, "a\xe1\xb7\xbb\xcc\x96", "a\xcc\x96\xe1\xb7\xbb");       /* U+1DFB (9.0) */
    check(NFC, "\xf0\x91\x84\xb1\xf0\x91\x84\xa7", "\xf0\x91\x84\xae"); /* Chakma (6.1) */
}

TEST(hf_normalize_orders_long_runs_of_marks_stably)
{
    char in[1 + 40 * 4 + 1], expected[sizeof in];
    size_t k = 0;
    in[k++] = 'a';
    for (int i = 0; i < 40; i++) { /* acute (230) and grave-below (220) alternating */
        memcpy(in + k, "\xcc\x81\xcc\x96", 4);
        k += 4;
    }
    in[k] = '\0';
    k = 0;
    expected[k++] = 'a';
    for (int i = 0; i < 40; i++, k += 2)
        memcpy(expected + k, "\xcc\x96", 2);
    for (int i = 0; i < 40; i++, k += 2)
        memcpy(expected + k, "\xcc\x81", 2);
    expected[k] = '\0';
    check(NFD, in, expected);
    char composed[sizeof in]; /* NFC: a and the first acute compose (U+00E1) */
    memcpy(composed, "\xc3\xa1", 2);
    k = 2;
    for (int i = 0; i < 40; i++, k += 2)
        memcpy(composed + k, "\xcc\x96", 2);
    for (int i = 0; i < 39; i++, k += 2)
        memcpy(composed + k, "\xcc\x81", 2);
    composed[k] = '\0';
    check(NFC, in, composed);
}

TEST(hf_normalize_lowercase_as_rust_char)
{
    const char *lower = "{\"type\": \"Lowercase\"}";
    check(lower, "\xc3\x80\xce\xa3\xc4\xb0\xe1\xba\x9e", "\xc3\xa0\xcf\x83i\xcc\x87\xc3\x9f");
    check(lower,
          "\xea\x9f\x8e\xf0\x96\xba\xa0"
          "ABC", /* Unicode 17.0 letters */
          "\xea\x9f\x8f\xf0\x96\xba\xbb"
          "abc");
    check(lower, "", "");
}

TEST(hf_normalize_strip_prepend_replace_as_the_library)
{
    check("{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":false}",
          " \xc2\x85"
          "a \xe3\x80\x80",
          "a \xe3\x80\x80");
    check("{\"type\":\"Strip\",\"strip_left\":false,\"strip_right\":true}",
          " \xc2\x85"
          "a \xe3\x80\x80\xe1\xa0\x8e",
          " \xc2\x85"
          "a \xe3\x80\x80\xe1\xa0\x8e"); /* U+180E is not White_Space */
    check("{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}", " \t\n ", "");
    check("{\"type\":\"Prepend\",\"prepend\":\"\xe2\x96\x81\"}", "", "");
    check("{\"type\":\"Prepend\",\"prepend\":\"\xe2\x96\x81\"}", "a",
          "\xe2\x96\x81"
          "a");
    const char *empty = "{\"type\":\"Replace\",\"pattern\":{\"String\":\"\"},\"content\":\"x\"}";
    check(empty, "ab", "xaxbx");
    check(empty, "", "");
    check("{\"type\":\"Replace\",\"pattern\":{\"String\":\"aa\"},\"content\":\"x\"}", "aaaaa",
          "xxa");
    check("{\"type\":\"Replace\",\"pattern\":{\"String\":\".\"},\"content\":\"_\"}", "a.b", "a_b");
    /* one-byte strings: at both ends, side by side, replaced by nothing or longer */
    check("{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\"}", "  a b ", "ab");
    check("{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\u2581\"}", " a  b ",
          "\xe2\x96\x81"
          "a"
          "\xe2\x96\x81\xe2\x96\x81"
          "b"
          "\xe2\x96\x81");
    check("{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\"},\"content\":\"bc\"}", "xyz", "xyz");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"a*\"},\"content\":\"x\"}", "baab",
          "xbxbx");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"a*?\"},\"content\":\"x\"}", "baab",
          "xbxaxaxbx");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"^a\"},\"content\":\"_\"}", "a\na",
          "_\n_");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s+\"},\"content\":\"_\"}",
          "a \xc2\x85\xc2\xa0\xe1\xa0\x8e"
          "b",
          "a_\xe1\xa0\x8e"
          "b");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\h\"},\"content\":\"_\"}", "a b\tz",
          "_ _\tz");
    /* \p{M} as Unicode 16.0 (U+0897, new in 16.0; PCRE2 10.42 knows 14) */
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\p{M}\"},\"content\":\"_\"}",
          "a\xe0\xa2\x97"
          "b\xcc\x81",
          "a_b_");
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\p{^letter}\"},\"content\":\"\"}",
          "a1 b\xe0\xa2\x97", "ab");
    /* Oniguruma's \w: Alphabetic (so U+24B6, a So), marks, Nd, Pc and U+00B2,
     * but not U+2070 (No) nor U+200D (Join_Control) — as the library gives
     * "a⁰Ⓐ²\u200dé_٣" (the pre-tokenizer's regex translation is used) */
    check("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\w\"},\"content\":\"#\"}",
          "a\xe2\x81\xb0\xe2\x92\xb6\xc2\xb2\xe2\x80\x8d\xc3\xa9_\xd9\xa3",
          "#\xe2\x81\xb0##\xe2\x80\x8d###");
}

TEST(hf_normalize_sequence_runs_in_order)
{
    const char *llama2 =
        "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":"
        "\"\xe2\x96\x81\"},{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},"
        "\"content\":\"\xe2\x96\x81\"}]}";
    check(llama2, "Hey there", "\xe2\x96\x81Hey\xe2\x96\x81there");
    check(llama2, "", "");
    check("{\"type\":\"Sequence\",\"normalizers\":[]}", "Ab", "Ab");
    check("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Lowercase\"},{\"type\":\"Sequence\","
          "\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"x\"},{\"type\":\"NFD\"}]}]}",
          "\xc3\x89t\xc3\xa9", "xe\xcc\x81te\xcc\x81");
    ordo__hf_normalizer *n = NULL;
    ordo_error err;
    ASSERT_OK(ordo__hf_normalizer_parse(NULL, "normalizer", &n, &err), &err);
    ASSERT(n == NULL);
    ordo__text out = {0};
    ASSERT_OK(ordo__hf_normalize(NULL, "as is", 5, &out, &err), &err);
    ASSERT_EQ_STR(out.data, "as is");
    free(out.data);
}

TEST(hf_normalize_refuses_unknown_and_malformed)
{
    refused("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},{\"type\":\"Precompiled\","
            "\"precompiled_charsmap\":\"\"}]}",
            "normalizer.normalizers[1]: 'Precompiled' is not supported (supported: NFC, NFD, "
            "NFKC, NFKD, Lowercase, Strip, Replace, Prepend, Sequence)");
    refused("{\"type\":\"BertNormalizer\"}", "normalizer: 'BertNormalizer' is not supported");
    refused("{\"type\":\"StripAccents\"}", "'StripAccents' is not supported");
    refused("{\"type\":\"ByteLevel\"}", "'ByteLevel' is not supported");
    refused("{\"type\":\"Nmt\"}", "'Nmt' is not supported");
    refused("{\"strip_left\":true}", "normalizer: missing \"type\"");
    refused("{\"type\":3}", "normalizer.type: not a string");
    refused("[1]", "normalizer: not an object");
    refused("{\"type\":\"Replace\",\"content\":\"x\"}", "normalizer: missing \"pattern\"");
    refused("{\"type\":\"Replace\",\"pattern\":\"a\",\"content\":\"x\"}",
            "normalizer.pattern: not {\"String\": ...} or {\"Regex\": ...}");
    refused(
        "{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\",\"Regex\":\"b\"},\"content\":\"x\"}",
        "normalizer.pattern: not");
    refused("{\"type\":\"Replace\",\"pattern\":{\"String\":1},\"content\":\"x\"}",
            "normalizer.pattern.String: not a string");
    refused("{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\"},\"content\":1}",
            "normalizer.content: not a string");
    refused("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"(\"},\"content\":\"x\"}",
            "normalizer.pattern.Regex: ");
    refused("{\"type\":\"Strip\",\"strip_left\":true}", "normalizer: missing \"strip_right\"");
    refused("{\"type\":\"Strip\",\"strip_left\":1,\"strip_right\":true}",
            "normalizer.strip_left: not a boolean");
    refused("{\"type\":\"Prepend\"}", "normalizer: missing \"prepend\"");
    refused("{\"type\":\"Sequence\",\"normalizers\":{}}", "normalizer.normalizers: not an array");
    refused("{\"type\":\"Sequence\",\"normalizers\":[null]}", "normalizer.normalizers[0]: null");
    refused("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Sequence\",\"normalizers\":[{"
            "\"type\":\"Prepend\",\"prepend\":false}]}]}",
            "normalizer.normalizers[0].normalizers[0].prepend: not a string");
}

/* One compiled normalizer serves many threads at once (read-only; PCRE2
 * match data per call): each thread's outputs equal one thread's. */
typedef struct {
    const ordo__hf_normalizer *n;
    const char *const *texts;
    size_t count;
    char *joined; /* every output, in order (the thread's) */
} worker;

static void *normalize_all(void *arg)
{
    worker *w = arg;
    ordo__text out = {0}, all = {0};
    ordo_error err;
    for (int round = 0; round < 50; round++)
        for (size_t i = 0; i < w->count; i++) {
            if (ordo__hf_normalize(w->n, w->texts[i], strlen(w->texts[i]), &out, &err) != ORDO_OK ||
                ordo__text_append(&all, out.data, out.len, &err) != ORDO_OK)
                return NULL;
        }
    free(out.data);
    w->joined = all.data;
    return w;
}

TEST(hf_normalize_one_normalizer_many_threads)
{
    ordo__hf_normalizer *n =
        compile("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFKC\"},{\"type\":"
                "\"Lowercase\"},{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s+\"},"
                "\"content\":\" \"},{\"type\":\"Prepend\",\"prepend\":\"_\"}]}");
    const char *const texts[] = {"Caf\xc3\xa9  \xef\xac\x81 \xe1\x84\x80\xe1\x85\xa1",
                                 "a\xcc\x96\xcc\x81\t\tB", "", "\xe2\x91\xa0 \xc4\xb0"};
    worker w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){n, texts, sizeof texts / sizeof texts[0], NULL};
        ASSERT(pthread_create(&t[i], NULL, normalize_all, &w[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        ASSERT(pthread_join(t[i], &r) == 0);
        ASSERT(r != NULL && w[i].joined != NULL);
    }
    for (int i = 1; i < 4; i++)
        ASSERT_EQ_STR(w[i].joined, w[0].joined);
    ASSERT_CONTAINS(w[0].joined, "_caf\xc3\xa9 fi \xea\xb0\x80_\xc3\xa1\xcc\x96 b");
    for (int i = 0; i < 4; i++)
        free(w[i].joined);
    ordo__hf_normalizer_free(n);
}

/* Asserts that normalizing `in` fails with a message containing `message`. */
static void text_refused(const char *json_text, const char *in, size_t len, const char *message)
{
    ordo__hf_normalizer *n = compile(json_text);
    ordo__text out = {0};
    ordo_error err;
    ASSERT_STATUS(ordo__hf_normalize(n, in, len, &out, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, message);
    free(out.data);
    ordo__hf_normalizer_free(n);
}

#define TENFOLD "{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\"},\"content\":\"aaaaaaaaaa\"}"

/* A one-byte Replace whose content is long only costs room for the
 * matches there are: 200,000 bytes of content on 10 MB without the byte
 * leave the text as it is (room for every byte's worth would be 2 TB),
 * and with three matches the text grows by exactly three contents. */
TEST(hf_normalize_one_byte_replace_makes_room_for_its_matches_only)
{
    size_t content_len = 200000, len = 10000000;
    char *json = malloc(content_len + 128);
    int head = sprintf(json, "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"");
    memset(json + head, 'x', content_len);
    strcpy(json + head + content_len, "\"}");
    ordo__hf_normalizer *n = compile(json);
    char *text = malloc(len);
    memset(text, 'a', len);
    ordo__text out = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_normalize(n, text, len, &out, &err), &err);
    ASSERT_EQ_INT(out.len, len);
    ASSERT(memcmp(out.data, text, len) == 0);
    text[0] = text[len / 2] = text[len - 1] = ' ';
    ASSERT_OK(ordo__hf_normalize(n, text, len, &out, &err), &err);
    ASSERT_EQ_INT(out.len, len - 3 + 3 * content_len);
    ASSERT(out.data[0] == 'x' && out.data[content_len] == 'a' && out.data[out.len - 1] == 'x');
    free(out.data);
    free(text);
    free(json);
    ordo__hf_normalizer_free(n);
}

/* Nested Replaces that grow a text tenfold each would make terabytes of
 * five bytes: refused once past 64 times the text and 4096 bytes, naming
 * the normalizer; a growth real files make (every byte three times) is
 * not; a pattern PCRE2 gives up on is refused with PCRE2's reason. */
TEST(hf_normalize_refuses_runaway_growth_and_failing_patterns)
{
    char nested[4096] = "{\"type\":\"Sequence\",\"normalizers\":[";
    for (int i = 0; i < 12; i++)
        strcat(nested, i ? "," TENFOLD : TENFOLD);
    strcat(nested, "]}");
    text_refused(nested, "aaaaa", 5,
                 "normalizer Replace makes more than 4416 bytes of a 5-byte text (64 times it and "
                 "4096): refused");
    /* three levels: 4000 bytes of 4, under the bound (4352): kept */
    char three[1024] =
        "{\"type\":\"Sequence\",\"normalizers\":[" TENFOLD "," TENFOLD "," TENFOLD "]}";
    ordo__hf_normalizer *n = compile(three);
    ordo__text out = {0};
    ordo_error err;
    ASSERT_OK(ordo__hf_normalize(n, "aaaa", 4, &out, &err), &err);
    ASSERT_EQ_INT(out.len, 4000);
    ordo__hf_normalizer_free(n);
    /* a long text of spaces, each made "▁": three times, kept */
    size_t len = 200000;
    char *spaces = malloc(len);
    memset(spaces, ' ', len);
    n = compile("{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\\u2581\"}");
    ASSERT_OK(ordo__hf_normalize(n, spaces, len, &out, &err), &err);
    ASSERT_EQ_INT(out.len, 3 * len);
    ordo__hf_normalizer_free(n);
    free(out.data);
    /* a pattern that backtracks past PCRE2's match limit */
    memset(spaces, 'a', len);
    spaces[5000] = 'b';
    text_refused("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"(a+)+$\"},\"content\":\"x\"}",
                 spaces, 5001,
                 "normalizer Replace: its pattern failed matching from byte 0 of the text: match "
                 "limit exceeded");
    free(spaces);
}
