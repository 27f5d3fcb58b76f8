/* The BPE tokenizer: rank files, round trips, specials, bad input, the
 * table of encodings. Token
 * ids themselves are checked against tiktoken by the conformance suite. */
#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *vocab(const char *name)
{
    static char path[1024];
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir ? dir : "build/vocab", name);
    return path;
}

static ordo_tokenizer *open_cl100k(void)
{
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open("cl100k_base", vocab("cl100k_base"), &t, &err), &err);
    return t;
}

TEST(tokenizer_round_trips_and_never_emits_specials)
{
    ordo_tokenizer *t = open_cl100k();
    const char *texts[] = {"", "hello world", "<|endoftext|> is plain text here",
                           "Sãotomense, λόγος, 日本語のテキスト, عربى, 🌍🚀\n\n\t  end",
                           "x\xc2\x85y\xef\xbb\xbfz\xe1\xa0\x8ew"};
    ordo_error err;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        uint32_t *ids = NULL;
        size_t count = 0;
        ASSERT_OK(ordo_tokenizer_encode(t, texts[i], strlen(texts[i]), &ids, &count, &err), &err);
        if (i == 0)
            ASSERT_EQ_INT(count, 0);
        for (size_t k = 0; k < count; k++)
            ASSERT(ids[k] < 100256); /* never 100257 (<|endoftext|>) or another special */
        char *bytes = NULL;
        size_t len = 0;
        ASSERT_OK(ordo_tokenizer_decode(t, ids, count, &bytes, &len, &err), &err);
        ASSERT_EQ_INT(len, strlen(texts[i]));
        ASSERT(len == 0 || memcmp(bytes, texts[i], len) == 0);
        ordo_free(ids);
        ordo_free(bytes);
    }
    uint32_t special = ordo_tokenizer_eot(t);
    ASSERT_EQ_INT(special, 100257);
    char *bytes = NULL;
    size_t len = 0;
    ASSERT_STATUS(ordo_tokenizer_decode(t, &special, 1, &bytes, &len, &err), ORDO_INVALID, &err);
    ordo_tokenizer_close(t);
}

TEST(tokenizer_long_piece_is_not_quadratic_and_round_trips)
{
    ordo_tokenizer *t = open_cl100k();
    size_t n = 1 << 20;
    char *text = malloc(n);
    memset(text, 'a', n);
    uint32_t *ids = NULL;
    size_t count = 0;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_encode(t, text, n, &ids, &count, &err), &err);
    ASSERT(count > 0 && count < n / 2);
    char *bytes = NULL;
    size_t len = 0;
    ASSERT_OK(ordo_tokenizer_decode(t, ids, count, &bytes, &len, &err), &err);
    ASSERT_EQ_INT(len, n);
    ASSERT(memcmp(bytes, text, n) == 0);
    ordo_free(ids);
    ordo_free(bytes);
    free(text);
    ordo_tokenizer_close(t);
}

TEST(tokenizer_invalid_utf8_becomes_replacement_characters)
{
    ordo_tokenizer *t = open_cl100k();
    const char bad[] = "a\xff"
                       "b\xe2\x82"
                       "c";
    const char good[] = "a\xef\xbf\xbd"
                        "b\xef\xbf\xbd"
                        "c";
    uint32_t *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_encode(t, bad, sizeof bad - 1, &x, &nx, &err), &err);
    ASSERT_OK(ordo_tokenizer_encode(t, good, sizeof good - 1, &y, &ny, &err), &err);
    ASSERT_EQ_INT(nx, ny);
    ASSERT(memcmp(x, y, nx * sizeof *x) == 0);
    ordo_free(x);
    ordo_free(y);
    ordo_tokenizer_close(t);
}

/* A bad byte at each place in a run of ASCII (which is checked eight
 * bytes at a time), and a sequence cut short at the very end. */
TEST(tokenizer_invalid_utf8_inside_ascii_runs)
{
    ordo_tokenizer *t = open_cl100k();
    for (size_t at = 0; at <= 24; at++) {
        char bad[32], good[40];
        memset(bad, 'x', 25);
        memcpy(good, bad, at);
        bad[at] = at == 24 ? '\xe2' : '\xff';
        memcpy(good + at, "\xef\xbf\xbd", 3);
        memset(good + at + 3, 'x', 24 - at);
        uint32_t *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        ordo_error err;
        ASSERT_OK(ordo_tokenizer_encode(t, bad, 25, &x, &nx, &err), &err);
        ASSERT_OK(ordo_tokenizer_encode(t, good, 27, &y, &ny, &err), &err);
        ASSERT_EQ_INT(nx, ny);
        ASSERT(memcmp(x, y, nx * sizeof *x) == 0);
        ordo_free(x);
        ordo_free(y);
    }
    ordo_tokenizer_close(t);
}

TEST(tokenizer_bad_rank_files)
{
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_tokenizer_open("cl200k", vocab("cl100k_base"), &t, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "'cl200k'");
    ASSERT_STATUS(ordo_tokenizer_open("cl100k_base", test_path("none.tiktoken"), &t, &err), ORDO_IO,
                  &err);
    test_write_file(test_path("bad.tiktoken"), "IQ== 0\nIg== 1\nnot-base64! 2\n", 29);
    ASSERT_STATUS(ordo_tokenizer_open("cl100k_base", test_path("bad.tiktoken"), &t, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "line 3");
    test_write_file(test_path("short.tiktoken"), "IQ== 0\nIg== 1\n", 14);
    ASSERT_STATUS(ordo_tokenizer_open("cl100k_base", test_path("short.tiktoken"), &t, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "has 2 ranks, cl100k_base needs 100256");
    test_write_file(test_path("dup.tiktoken"), "IQ== 0\nIg== 0\n", 14);
    ASSERT_STATUS(ordo_tokenizer_open("cl100k_base", test_path("dup.tiktoken"), &t, &err),
                  ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "listed twice");
    /* The wrong file for the encoding. */
    ASSERT_STATUS(ordo_tokenizer_open("cl100k_base", vocab("r50k_base"), &t, &err), ORDO_INVALID,
                  &err);
}

TEST(tokenizer_in_recipes_names_the_rank_file)
{
    corpus_jsonl("data", "doc", 1, 50, 20, 200, 9);
    size_t size = 0;
    char *ranks = test_read_file(vocab("cl100k_base"), &size);
    ASSERT(ranks != NULL);
    test_write_file(test_path("cl100k.tiktoken"), ranks, size);
    free(ranks);
    const char *good = "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]";
    FILE *f = fopen(test_path("r.json"), "w");
    fprintf(f,
            "{\"seed\": 1, \"seq_len\": 32, \"global_batch\": 4, \"lanes\": 4, \"tokenizer\": "
            "{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", \"path\": "
            "\"cl100k.tiktoken\"}, \"sources\": %s}",
            good);
    fclose(f);
    char *out = ordo_ok(A("recipe", "check", test_path("r.json"), "--json"), 0);
    free(out);
    free(ordo_ok(A("run", test_path("r.json"), "--db", test_path("l.db"), "--name", "r",
                   "--world-size", "2", "--steps", "20", "--quiet", "--checkpoint-every", "10"),
                 0));
    ASSERT_EQ_INT(fixture_int(test_path("l.db"),
                              "SELECT count(*) FROM recipes WHERE canonical LIKE "
                              "'%\"sha256\":\"223921b76ee99bde%'"),
                  1);
    /* A different rank file is a different recipe: resume refuses. */
    test_write_file(test_path("cl100k.tiktoken"), "IQ== 0\n", 7);
    cli_result r = run_ordo(
        NULL, A("resume", "r", "--db", test_path("l.db"), "--world-size", "4", "--steps", "30"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "cl100k.tiktoken");
    cli_result_free(&r);
    f = fopen(test_path("bad.json"), "w");
    fprintf(f,
            "{\"seed\": 1, \"seq_len\": 32, \"global_batch\": 4, \"lanes\": 4, \"tokenizer\": "
            "{\"kind\": \"tiktoken\", \"encoding\": \"cl99k\", \"path\": \"x\"}, \"sources\": %s}",
            good);
    fclose(f);
    r = run_ordo(NULL, A("recipe", "check", test_path("bad.json")));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "encoding 'cl99k'");
    cli_result_free(&r);
}

/* cl100k_base's hand-written scanner against PCRE2 running the published
 * pattern, on random strings over the characters the pattern treats
 * differently: letters of several scripts, digits of several scripts,
 * apostrophes and contraction letters (with LONG S), every kind of
 * White_Space, CR/LF, marks, punctuation, symbols, emoji. */
static void scanner_matches_pattern(const char *encoding);

TEST(cl100k_scanner_matches_the_published_pattern)
{
    scanner_matches_pattern("cl100k_base");
}

TEST(llama3_scanner_matches_the_published_pattern)
{
    scanner_matches_pattern("llama3");
}

TEST(o200k_scanner_matches_the_published_pattern)
{
    scanner_matches_pattern("o200k_base");
}

static void scanner_matches_pattern(const char *encoding)
{
    static const char *const alphabet[] = {
        "a",
        "b",
        "Z",
        "s",
        "S",
        "t",
        "d",
        "m",
        "l",
        "L",
        "v",
        "e",
        "E",
        "r",
        "R",
        "\xc5\xbf",
        /* U+017F */ "'",
        "'",
        "'",
        "0",
        "7",
        "\xd9\xa3", /* U+0663 */
        "\xe2\x85\xa0",
        /* U+2160 Nl */ "\xc2\xb2",
        /* U+00B2 No */ " ",
        " ",
        " ",
        "\t",
        "\n",
        "\r",
        "\x0b",
        "\x0c",
        "\xc2\x85",
        "\xc2\xa0",
        "\xe3\x80\x80",
        "\xe2\x80\xa8",
        "\xe1\x9a\x80",
        "\xe2\x80\x8b",
        /* U+200B: not White_Space */ "\xef\xbb\xbf",
        "\xcc\x81",
        /* U+0301 Mn */ "\xe0\xa4\x95",
        "\xe0\xa4\xbf", /* Devanagari */
        "\xe4\xb8\xad",
        "\xe6\x96\x87",
        "\xd0\x96",
        "\xce\xb1",
        "!",
        ".",
        ",",
        "?",
        "-",
        "/",
        "\xca\xb0",
        /* U+02B0 Lm */ "\xc7\x85",
        /* U+01C5 Lt */ "\xd9\x8b", /* U+064B Mn */
        "A",
        "Q",
        "\xc3\x89", /* U+00C9 Lu */
        "$",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xf0\x9f\x91\x8d",
        "_",
        "\"",
        "(",
        "\x01",
    };
    const size_t letters = sizeof alphabet / sizeof *alphabet;
    ordo__bpe *bpe = NULL;
    ordo_error err;
    ASSERT_OK(ordo__bpe_load(vocab(encoding), ordo__encoding_find(encoding), &bpe, &err), &err);
    ASSERT(ordo__encoding_find(encoding)->scan != NULL);
    unsigned state = 12345;
    char text[512];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        int count = 1 + (int)((state = state * 1103515245u + 12345u) >> 16) % 24;
        for (int k = 0; k < count; k++) {
            state = state * 1103515245u + 12345u;
            const char *c = alphabet[(state >> 16) % letters];
            memcpy(text + len, c, strlen(c));
            len += strlen(c);
        }
        ordo__tokens fast = {0}, reference = {0}, fast_ends = {0}, reference_ends = {0};
        ASSERT_OK(ordo__bpe_encode(bpe, text, len, &fast, &err), &err);
        ASSERT_OK(ordo__bpe_encode_pcre2(bpe, text, len, &reference, &err), &err);
        ASSERT_OK(ordo__bpe_split(bpe, 0, text, len, &fast_ends, &err), &err);
        ASSERT_OK(ordo__bpe_split(bpe, 1, text, len, &reference_ends, &err), &err);
        int same =
            fast.count == reference.count &&
            memcmp(fast.ids, reference.ids, fast.count * sizeof *fast.ids) == 0 &&
            fast_ends.count == reference_ends.count &&
            memcmp(fast_ends.ids, reference_ends.ids, fast_ends.count * sizeof *fast_ends.ids) == 0;
        if (!same) {
            text[len] = '\0';
            test_fail(__FILE__, __LINE__,
                      "%s: scanner and pattern differ on \"%s\" (%zu vs "
                      "%zu pieces, %zu vs %zu tokens)",
                      encoding, text, fast_ends.count, reference_ends.count, fast.count,
                      reference.count);
        }
        free(fast.ids);
        free(reference.ids);
        free(fast_ends.ids);
        free(reference_ends.ids);
    }
    ordo__bpe_free(bpe);
}

TEST(library_lists_every_encoding_from_its_table)
{
    char names[256], small[8];
    size_t length = ordo_tokenizer_encodings(names, sizeof names);
    ASSERT_EQ_STR(names, "gpt2, r50k_base, p50k_base, cl100k_base, o200k_base or llama3");
    ASSERT_EQ_INT((int)length, (int)strlen(names));
    /* a short buffer is cut and terminated; the length is still the whole */
    ASSERT_EQ_INT((int)ordo_tokenizer_encodings(small, sizeof small), (int)length);
    ASSERT_EQ_STR(small, "gpt2, r");
}
