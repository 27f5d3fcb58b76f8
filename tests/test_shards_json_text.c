/* The text field of a JSON line read without Jansson (shards/json_text.c):
 * whenever it answers, the answer is Jansson's, byte for byte; it declines
 * whatever Jansson might refuse or read otherwise; and a shard reads the
 * same documents, counts and errors with it as without it. */
#include <jansson.h>

#include "harness.h"
#include "testing.h"

/* Runs the fast path on `line`; when it answers, Jansson must read the same
 * text. Returns whether it answered. */
static int agrees(const char *line, size_t len, const char *field, const char *what)
{
    char *buffer = NULL;
    size_t capacity = 0, got_len = 0;
    const char *got = "unset";
    int answered = ordo__json_text_fast(line, len, field, &buffer, &capacity, &got, &got_len);
    if (answered) {
        json_error_t jerr;
        json_t *record = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
        if (!record || !json_is_object(record))
            test_fail(__FILE__, __LINE__, "%s: answered, but Jansson refuses %.*s: %s", what,
                      (int)len, line, record ? "not an object" : jerr.text);
        const json_t *text = json_object_get(record, field);
        if (!text || !(json_is_string(text) || json_is_null(text)))
            test_fail(__FILE__, __LINE__, "%s: answered, but Jansson has no text in %.*s", what,
                      (int)len, line);
        if (json_is_null(text) ? got != NULL
                               : !got || got_len != json_string_length(text) ||
                                     memcmp(got, json_string_value(text), got_len) != 0)
            test_fail(__FILE__, __LINE__, "%s: text differs from Jansson's for %.*s", what,
                      (int)len, line);
        json_decref(record);
    }
    free(buffer);
    return answered;
}

typedef struct {
    const char *line;
    int answers;
} line_case;

TEST(json_text_fast_reads_what_jansson_reads_and_declines_the_rest)
{
    static const line_case cases[] = {
        {"{\"text\": \"plain\"}", 1},
        {"  {\"id\":7,\"text\":\"a\\nb\\t\\\"q\\\" \\\\ \\/ "
         "\\b\\f\\r\",\"x\":[1,-2,0.5,true,false,null,{}]}\r",
         1},
        {"{\"text\":\"caf\\u00e9 \\u00E9 \\ud83d\\ude00 \\u4e2d\"}", 1},
        {"{\"text\":\"nul \\u0000 inside\"}", 1},
        {"{\"text\":\"d\xc3\xa9j\xc3\xa0 \xe4\xb8\xad \xf0\x9f\x98\x80 long enough to take 8 at a "
         "time\"}",
         1},
        {"{\"text\":null,\"lang\":\"en\"}", 1},
        {"{\"meta\":{\"a\":[[[]]],\"b\":{\"c\":\"d\"}},\"text\":\"\"}", 1},
        {"{\"score\":0.9730000000000001,\"n\":123456789012345678,\"text\":\"t\"}", 1},
        {"{\"n\":-0,\"text\":\"t\"}", 1},
        /* declined: Jansson refuses these, or reads them otherwise */
        {"{\"text\":\"lone \\ud800\"}", 0},
        {"{\"text\":\"lone \\udc00\"}", 0},
        {"{\"text\":\"bad \\ud800\\u0041\"}", 0},
        {"{\"text\":\"bad \\x\"}", 0},
        {"{\"text\":\"short \\u12\"}", 0},
        {"{\"text\":\"tab\there\"}", 0},
        {"{\"text\":\"overlong \xc0\xaf\"}", 0},
        {"{\"text\":\"surrogate \xed\xa0\x80\"}", 0},
        {"{\"text\":\"above \xf4\x90\x80\x80\"}", 0},
        {"{\"text\":\"cut \xe4\xb8\"}", 0},
        {"{\"a\":\"\xff\",\"text\":\"t\"}", 0},
        {"{\"text\":\"t\",\"text\":\"u\"}", 0},
        {"{\"te\\u0078t\":\"t\"}", 0},
        {"{\"text\":\"t\",\"n\":1e5}", 0},
        {"{\"text\":\"t\",\"n\":1E400}", 0},
        {"{\"text\":\"t\",\"n\":1234567890123456789}", 0},
        {"{\"text\":\"t\",\"n\":01}", 0},
        {"{\"text\":\"t\",\"n\":1.}", 0},
        {"{\"text\":\"t\",\"n\":-}", 0},
        {"{\"text\":\"t\",\"b\":truex}", 0},
        {"{\"text\":\"t\",\"b\":nul}", 0},
        {"{\"text\":\"t\",}", 0},
        {"{\"text\":\"t\",\"a\":[1,]}", 0},
        {"{\"text\":\"t\"} x", 0},
        {"{\"text\":\"t\"", 0},
        {"{\"text\":\"t", 0},
        {"{\"text\":7}", 0},
        {"{\"text\":[\"t\"]}", 0},
        {"{\"other\":\"t\"}", 0},
        {"[\"text\"]", 0},
        {"\"text\"", 0},
        {"{'text':'t'}", 0},
        {"{\"text\" \"t\"}", 0},
        {"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"
         "\"text\":\"t\"}",
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "case %zu", i);
        int answered = agrees(cases[i].line, strlen(cases[i].line), "text", what);
        if (answered != cases[i].answers)
            test_fail(__FILE__, __LINE__, "case %zu %s, expected to %s: %s", i,
                      answered ? "answered" : "declined", cases[i].answers ? "answer" : "decline",
                      cases[i].line);
    }
    /* a NUL byte inside a key's text is Jansson's refusal; a dotted path
     * is Jansson's to follow */
    ASSERT(!agrees("{\"text\":\"a\",\"k\\u0000\":1}", 23, "text", "NUL key"));
    ASSERT(!agrees("{\"meta\":{\"text\":\"t\"}}", 22, "meta.text", "dotted"));
    ASSERT(agrees("{\"content\":\"t\",\"text\":1}", 24, "content", "other field"));
    /* the raw NUL byte of a line is a control byte */
    ASSERT(!agrees("{\"text\":\"a\0b\"}", 14, "text", "raw NUL"));
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

TEST(json_text_fast_agrees_with_jansson_on_mutated_records)
{
    static const char *seeds[] = {
        "{\"text\":\"Call me Ishmael.\\nSome years ago\\u2014never mind how "
        "long\",\"id\":\"<urn:uuid:1>\","
        "\"dump\":\"CC-MAIN-2024-10\",\"url\":\"https://example.org/"
        "a?b=c\",\"date\":\"2024-02-21T03:36:35Z\","
        "\"language\":\"en\",\"language_score\":0.9730,\"token_count\":1234}",
        "{\"id\": 17, \"meta\": {\"tags\": [\"a\", \"b\"], \"ok\": true, \"x\": null}, "
        "\"text\": \"\xe4\xb8\xad\xe6\x96\x87 \\ud83d\\ude00 caf\xc3\xa9 \\\"q\\\" \\\\ \\/\"}",
        "{\"text\":null,\"n\":-0.5}",
        "{\"text\":\"\\u0000\\u001f\\t\\r\\n\",\"a\":[[],{},[{}]]}",
    };
    static const char alphabet[] =
        "\"\\{}[]:,.-+eE0123456789 \t\r\nunltrfasx\xc3\xa9\xed\xa0\x80\xff\xf0";
    uint64_t state = 19;
    unsigned answered = 0, total = 0;
    char line[512];
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        ASSERT(agrees(seeds[s], strlen(seeds[s]), "text", "seed"));
        for (int round = 0; round < 40000; round++) {
            size_t len = strlen(seeds[s]);
            memcpy(line, seeds[s], len);
            int edits = 1 + (int)(splitmix(&state) % 3);
            for (int e = 0; e < edits && len > 1 && len < sizeof line - 2; e++) {
                size_t at = (size_t)(splitmix(&state) % len);
                char b = alphabet[splitmix(&state) % (sizeof alphabet - 1)];
                switch (splitmix(&state) % 3) {
                case 0: line[at] = b; break;
                case 1:
                    memmove(line + at + 1, line + at, len - at);
                    line[at] = b;
                    len++;
                    break;
                default: memmove(line + at, line + at + 1, len - at - 1); len--;
                }
            }
            answered += (unsigned)agrees(line, len, "text", "mutation");
            total++;
        }
    }
    /* mutations that leave valid JSON (inside strings, mostly) are read */
    if (answered < total / 10)
        test_fail(__FILE__, __LINE__, "answered only %u of %u mutated records", answered, total);
}

typedef struct {
    char texts[4096];
    size_t used;
} collected;

static int collect(void *context, const char *text, size_t len, uint64_t record)
{
    collected *c = context;
    int n = snprintf(c->texts + c->used, sizeof c->texts - c->used,
                     "%llu:%zu:", (unsigned long long)record, len);
    c->used += (size_t)n;
    if (c->used + len < sizeof c->texts) {
        memcpy(c->texts + c->used, text, len);
        c->used += len;
    }
    return 0;
}

/* Scans `data` with the fast path on or off: documents, counts, error. */
enum { ERROR_SIZE = ORDO_ERROR_MESSAGE_SIZE + 16 };

static void scan(const char *data, int fast, collected *docs, ordo__counts *counts, char *error)
{
    ordo__origin origin = {"shard one.jsonl", UINT64_MAX, 0, 1, NULL};
    ordo__read_spec spec = {"text", NULL, 0, 0};
    ordo_error err = {0};
    ordo__json_text_fast_enabled = fast;
    memset(docs, 0, sizeof *docs);
    *counts = (ordo__counts){0};
    ordo_status status = ordo__scan_records(ORDO_FORMAT_JSONL, data, strlen(data), &spec, &origin,
                                            collect, docs, counts, &err);
    ordo__json_text_fast_enabled = 1;
    snprintf(error, ERROR_SIZE, "%d %s", (int)status, status == ORDO_OK ? "" : err.message);
}

TEST(json_lines_read_the_same_with_and_without_the_fast_path)
{
    static const char *buffers[] = {
        "{\"text\":\"one\"}\n\n   "
        "\n{\"text\":null}\n{\"text\":\"\"}\n{\"id\":1,\"text\":\"t\\u00e9\"}\n"
        "{\"text\":\"a\\u0000b\",\"n\":1e3}\n{\"text\":\"last\"}",
        "{\"text\":\"fine\"}\n{\"text\":\"lone \\ud800\"}\n{\"text\":\"never read\"}\n",
        "{\"text\":\"fine\"}\n{\"text\":7}\n",
        "{\"text\":\"fine\"}\n{\"other\":\"x\"}\n",
        "{\"text\":\"fine\"}\n[\"text\"]\n",
        "{\"text\":\"fine\"}\n{\"text\":\"t\",\"text\":\"dup\"}\n",
        "{\"text\":\"bad \xff byte\"}\n",
    };
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) {
        collected with, without;
        ordo__counts c1, c2;
        char e1[ERROR_SIZE], e2[ERROR_SIZE];
        scan(buffers[i], 1, &with, &c1, e1);
        scan(buffers[i], 0, &without, &c2, e2);
        ASSERT_EQ_STR(e1, e2);
        ASSERT_EQ_INT(with.used, without.used);
        ASSERT(memcmp(with.texts, without.texts, with.used) == 0);
        ASSERT_EQ_INT(c1.read, c2.read);
        ASSERT_EQ_INT(c1.passed, c2.passed);
        ASSERT_EQ_INT(c1.empty, c2.empty);
        if (i == 0) {
            ASSERT_EQ_STR(e1, "0 ");
            ASSERT_EQ_INT(c1.read, 8);
            ASSERT_EQ_INT(c1.passed, 4);
            static const char nul_doc[] = "6:3:a\0b";
            int seen = 0;
            for (size_t at = 0; at + 7 <= with.used; at++)
                seen |= memcmp(with.texts + at, nul_doc, 7) == 0;
            ASSERT(seen);
        } else if (i != 5) {
            ASSERT_CONTAINS(e1, "shard one.jsonl");
        }
    }
}
