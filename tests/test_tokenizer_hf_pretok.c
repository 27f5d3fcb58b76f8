/* tokenizer.json pre-tokenizers: every pre-tokenizer and behavior on hand
 * strings, bad pre-tokenizers refused by name and place, and the hand
 * scanners piece for piece against PCRE2 running the same pattern. */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "testing.h"

static ordo__hf_pretokenizer *compile(const char *json, int scanners, ordo_error *err,
                                      ordo_status *status)
{
    json_error_t jerr;
    json_t *value = json_loads(json, 0, &jerr);
    if (!value)
        test_fail(__FILE__, __LINE__, "bad test JSON %s: %s", json, jerr.text);
    ordo__hf_pretokenizer *p = NULL;
    *status = ordo__hf_pretokenizer_parse_with(value, "pre_tokenizer", scanners, &p, err);
    json_decref(value);
    return p;
}

typedef struct pieces {
    json_t *list;
    int byte_level;
} pieces;

/* GPT-2's byte map, to show raw-byte pieces as the library shows them. */
static unsigned mapped(unsigned char b)
{
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
        return b;
    unsigned c = 0x100;
    for (unsigned k = 0; k < b; k++)
        c += !((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE);
    return c;
}

static ordo_status collect(void *context, const char *piece, size_t len, ordo_error *err)
{
    (void)err;
    pieces *ps = context;
    char out[1024];
    size_t n = 0;
    for (size_t i = 0; i < len && n + 2 < sizeof out; i++) {
        unsigned c = ps->byte_level ? mapped((unsigned char)piece[i]) : (unsigned char)piece[i];
        if (ps->byte_level && c >= 0x80)
            out[n++] = (char)(0xC0 | c >> 6), out[n++] = (char)(0x80 | (c & 0x3F));
        else
            out[n++] = (char)c;
    }
    json_array_append_new(ps->list, json_stringn(out, n));
    return ORDO_OK;
}

/* [pre_tokenizer, text, [pieces]]: the pieces are what the library's
 * preTokenizeString gives (tokenizers 0.23.2, read off it when these were
 * written), through the scanners and through PCRE2 alone. */
static const char *const cases[] = {
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"Isolated\",\"invert\":"
    "false}, \"a-b--c-\", [\"a\",\"-\",\"b\",\"-\",\"-\",\"c\",\"-\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"Removed\",\"invert\":false}"
    ", \"a-b--c-\", [\"a\",\"b\",\"c\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithPrevious\","
    "\"invert\":false}, \"-a-b--c-\", [\"-\",\"a-\",\"b-\",\"-\",\"c-\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithNext\","
    "\"invert\":false}, \"-a-b--c-\", [\"-a\",\"-b\",\"-\",\"-c\",\"-\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"Contiguous\",\"invert\":"
    "false}, \"-a-b--c-\", [\"-\",\"a\",\"-\",\"b\",\"--\",\"c\",\"-\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"Removed\",\"invert\":true},"
    " \"-a-b--c-\", [\"-\",\"-\",\"-\",\"-\",\"-\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"String\":\".\"},\"behavior\":\"Isolated\",\"invert\":"
    "false}, \"a.b*c\", [\"a\",\".\",\"b*c\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"x*\"},\"behavior\":\"Isolated\",\"invert\":"
    "false}, \"axxbx\", [\"a\",\"xx\",\"b\",\"x\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"x*|b\"},\"behavior\":\"Removed\",\"invert\":"
    "false}, \"axxbx\", [\"a\",\"b\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"$\"},\"behavior\":\"Isolated\",\"invert\":false}"
    ", \"ab\\ncd\\n\", [\"ab\",\"\\ncd\",\"\\n\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\h+\"},\"behavior\":\"Isolated\",\"invert\":"
    "false}, \"ab12 \\t xg\", [\"ab12\",\" \\t xg\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a{,2}\"},\"behavior\":\"Removed\",\"invert\":"
    "false}, \"aaaaba\", [\"b\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\s+\"},\"behavior\":\"Removed\",\"invert\":"
    "false}, \"a\\u0085b\\u180ec\\ufeffd\\u3000e\", [\"a\",\"b\\u180ec\\ufeffd\",\"e\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\w+\"},\"behavior\":\"Isolated\",\"invert\":"
    "false}, \"x\\u00b2y\\u200dz_1\", [\"x\\u00b2y\",\"\\u200d\",\"z_1\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i:'s|'ll)\"},\"behavior\":\"Isolated\","
    "\"invert\":false}, \"it's IT'S it'\\u017f he'LL\", [\"it\",\"'s\",\" IT\",\"'S\",\" "
    "it\",\"'\\u017f\",\" he\",\"'LL\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[^\\\\s\\\\p{L}]+\"},\"behavior\":\"Isolated\","
    "\"invert\":false}, \"ab, cd! 12\", [\"ab\",\",\",\" cd\",\"!\",\" \",\"12\"]]",
    "[{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}, "
    "\"Hello world's  end\\n\\n \\u00e9 12\", "
    "[\"\\u0120Hello\",\"\\u0120world\",\"'s\",\"\\u0120\",\"\\u0120end\",\"\\u010a\\u010a\","
    "\"\\u0120\\u00c3\\u00a9\",\"\\u012012\"]]",
    "[{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,\"use_regex\":"
    "false}, \"a b\\n\\u00e9\", [\"a\\u0120b\\u010a\\u00c3\\u00a9\"]]",
    "[{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
    "\"trim_offsets\":true},{\"type\":\"Split\",\"pattern\":{\"String\":\"\\u0120\"},\"behavior\":"
    "\"MergedWithNext\",\"invert\":false}]}, \"one two  \\u00e9\", "
    "[\"one\",\"\\u0120two\",\"\\u0120\",\"\\u0120\\u00c3\\u00a9\"]]",
    "[{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"prepend_scheme\":\"always\",\"split\":"
    "true}, \"Hey  friend \\u2581x\", "
    "[\"\\u2581Hey\",\"\\u2581\",\"\\u2581friend\",\"\\u2581\",\"\\u2581x\"]]",
    "[{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"prepend_scheme\":\"never\",\"split\":"
    "true}, \"Hey friend\", [\"Hey\",\"\\u2581friend\"]]",
    "[{\"type\":\"Metaspace\",\"replacement\":\"_\",\"prepend_scheme\":\"first\",\"split\":false}, "
    "\"Hey friend\", [\"_Hey_friend\"]]",
    "[{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"add_prefix_space\":false,\"prepend_"
    "scheme\":\"never\"}, \"a b\", [\"a\",\"\\u2581b\"]]",
    "[{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"String\":\"|\"},"
    "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"Metaspace\",\"replacement\":"
    "\"\\u2581\",\"prepend_scheme\":\"first\",\"split\":true}]}, \"a b|c d\", "
    "[\"\\u2581a\",\"\\u2581b\",\"|\",\"c\",\"\\u2581d\"]]",
    "[{\"type\":\"Digits\",\"individual_digits\":false}, \"a123b4\\u06635x\\ud838\\udef0\", "
    "[\"a\",\"123\",\"b\",\"4\\u06635\",\"x\",\"\\ud838\\udef0\"]]",
    "[{\"type\":\"Digits\",\"individual_digits\":true}, \"a123b4\\u0663\", "
    "[\"a\",\"1\",\"2\",\"3\",\"b\",\"4\",\"\\u0663\"]]",
    "[{\"type\":\"Punctuation\",\"behavior\":\"Isolated\"}, \"Hey, you!! $5 \\u00a1x\\u00ab "
    "\\u2010\", [\"Hey\",\",\",\" you\",\"!\",\"!\",\" \",\"$\",\"5 "
    "\",\"\\u00a1\",\"x\",\"\\u00ab\",\" \",\"\\u2010\"]]",
    "[{\"type\":\"Punctuation\"}, \"a.b\", [\"a\",\".\",\"b\"]]",
    "[{\"type\":\"Punctuation\",\"behavior\":\"MergedWithPrevious\"}, \"Hey, you!!\", [\"Hey,\",\" "
    "you!\",\"!\"]]",
    "[{\"type\":\"Whitespace\"}, \"Hey man!!, what's   up? x\\u00b2y\\u200dz\", "
    "[\"Hey\",\"man\",\"!!,\",\"what\",\"'\",\"s\",\"up\",\"?\",\"x\",\"\\u00b2\",\"y\\u200dz\"]]",
    "[{\"type\":\"WhitespaceSplit\"}, \"Hey man!!\\u3000what's\\u0085up? \\n\", "
    "[\"Hey\",\"man!!\",\"what's\",\"up?\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\" "
    "?[^(\\\\s|[.,!?\\u2026\\u3002\\uff0c\\u3001\\u0964\\u06d4\\u060c])]+\"},\"behavior\":"
    "\"Isolated\",\"invert\":false}, \"Hello, world! (a|b) \\u4f60\\u597d\\u3002ok\\u2026x\", "
    "[\"Hello\",\",\",\" world\",\"! (\",\"a\",\"|\",\"b\",\")\",\" "
    "\\u4f60\\u597d\",\"\\u3002\",\"ok\",\"\\u2026\",\"x\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a[b-d][\\\\p{N}]]+\"},\"behavior\":"
    "\"Isolated\",\"invert\":false}, \"xabcdez123a\", [\"x\",\"abcd\",\"ez\",\"123a\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\p{N}{1,3}+|[ab]{2}+c\"},\"behavior\":"
    "\"Isolated\",\"invert\":false}, \"12345 6 ababac abc\", [\"12345\",\" \",\"6\",\" "
    "a\",\"babac\",\" \",\"abc\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i)\\\\p{Lu}\"},\"behavior\":\"Removed\","
    "\"invert\":false}, \"aAbB\\u01c5\\u017fK\", [\"a\",\"b\",\"\\u01c5\\u017f\"]]",
    "[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i)[\\\\p{Lu}]|(?i:\\\\S)\"},\"behavior\":"
    "\"Removed\",\"invert\":false}, \"aAbB\\u01c5\", []]",
};

TEST(hf_pretok_every_pre_tokenizer_and_behavior_as_the_library)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        json_error_t jerr;
        json_t *c = json_loads(cases[k], 0, &jerr);
        ASSERT(c != NULL);
        char *pre = json_dumps(json_array_get(c, 0), JSON_COMPACT);
        json_t *text = json_array_get(c, 1);
        for (int scanners = 0; scanners < 2; scanners++) {
            ordo_error err;
            ordo_status status;
            ordo__hf_pretokenizer *p = compile(pre, scanners, &err, &status);
            ASSERT_OK(status, &err);
            pieces got = {json_array(), ordo__hf_pretokenizer_byte_level(p)};
            ASSERT_OK(ordo__hf_pretokenize(p, json_string_value(text), json_string_length(text),
                                           collect, &got, &err),
                      &err);
            if (!json_equal(got.list, json_array_get(c, 2))) {
                char *have = json_dumps(got.list, JSON_COMPACT);
                test_fail(__FILE__, __LINE__, "case %zu %s: got %s", k, cases[k], have);
            }
            json_decref(got.list);
            ordo__hf_pretokenizer_free(p);
        }
        free(pre);
        json_decref(c);
    }
}

TEST(hf_pretok_byte_level_last_leaves_bytes_to_the_model)
{
    ordo_error err;
    ordo_status status;
    const char *last = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":"
                       "{\"String\":\" \"},\"behavior\":\"Isolated\",\"invert\":false},"
                       "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,"
                       "\"use_regex\":false}]}";
    ordo__hf_pretokenizer *p = compile(last, 1, &err, &status);
    ASSERT_OK(status, &err);
    ASSERT_EQ_INT(ordo__hf_pretokenizer_byte_level(p), 1);
    pieces got = {json_array(), 0}; /* raw: no map */
    ASSERT_OK(ordo__hf_pretokenize(p, "a \xc3\xa9", 4, collect, &got, &err), &err);
    json_t *want = json_pack("[sss]", "a", " ", "\xc3\xa9");
    ASSERT(json_equal(got.list, want));
    json_decref(want);
    json_decref(got.list);
    ordo__hf_pretokenizer_free(p);
    const char *middle = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"ByteLevel\","
                         "\"add_prefix_space\":false,\"trim_offsets\":true},{\"type\":"
                         "\"WhitespaceSplit\"}]}";
    p = compile(middle, 1, &err, &status);
    ASSERT_OK(status, &err);
    ASSERT_EQ_INT(ordo__hf_pretokenizer_byte_level(p), 0);
    ordo__hf_pretokenizer_free(p);
    ASSERT_EQ_INT(ordo__hf_pretokenizer_byte_level(NULL), 0);
    ASSERT_OK(ordo__hf_pretokenizer_parse(json_null(), "pre_tokenizer", &p, &err), &err);
    ASSERT(p == NULL);
}

TEST(hf_pretok_refuses_what_it_cannot_read_by_name_and_place)
{
    static const char *const bad[][2] = {
        {"{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Whitespace\"},{\"type\":"
         "\"Digits\",\"individual_digits\":true},{\"type\":\"UnicodeScripts\"}]}",
         "pre_tokenizer.pretokenizers[2]: 'UnicodeScripts' is not supported (supported: Split, "
         "ByteLevel, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, Sequence)"},
        {"{\"type\":\"BertPreTokenizer\"}", "pre_tokenizer: 'BertPreTokenizer' is not supported"},
        {"{\"type\":\"CharDelimiterSplit\",\"delimiter\":\" \"}", "'CharDelimiterSplit'"},
        {"{\"type\":\"FixedLength\",\"length\":5}", "'FixedLength' is not supported"},
        {"{\"pretokenizers\":[]}", "pre_tokenizer.type: missing"},
        {"[1]", "pre_tokenizer: must be an object or null"},
        {"{\"type\":\"Sequence\"}", "pre_tokenizer.pretokenizers: missing"},
        {"{\"type\":\"Sequence\",\"pretokenizers\":[7]}",
         "pre_tokenizer.pretokenizers[0]: must be"},
        {"{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"Isolated\"}",
         "pre_tokenizer.invert: missing"},
        {"{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"Apart\",\"invert\":"
         "false}",
         "pre_tokenizer.behavior: unknown behavior"},
        {"{\"type\":\"Split\",\"pattern\":\" \",\"behavior\":\"Isolated\",\"invert\":false}",
         "pre_tokenizer.pattern: must be {\"String\": s} or {\"Regex\": r}"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\bx\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "pre_tokenizer.pattern: the regex's escape \\b is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\p{Alphabetic}\"},\"behavior\":"
         "\"Isolated\","
         "\"invert\":false}",
         "property \\p{Alphabetic} is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a[^b]]\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "negated class nested in a class is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[[:alpha:]]\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "POSIX bracket class is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?<w>a)(b)\\\\1\"},\"behavior\":"
         "\"Isolated\",\"invert\":false}",
         "numbered backreference in a pattern with named groups is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a&&b]\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "class intersection && is not supported"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[^\\\\S]\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "negated class escape inside a character class"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i:ss)\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "case-insensitive letter pair with a one-character fold"},
        {"{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(a\"},\"behavior\":\"Isolated\","
         "\"invert\":false}",
         "pre_tokenizer.pattern: the regex does not compile"},
        {"{\"type\":\"ByteLevel\",\"trim_offsets\":true}",
         "pre_tokenizer.add_prefix_space: missing"},
        {"{\"type\":\"ByteLevel\",\"add_prefix_space\":1,\"trim_offsets\":true}",
         "pre_tokenizer.add_prefix_space: must be true or false"},
        {"{\"type\":\"Metaspace\",\"replacement\":\"ab\"}",
         "pre_tokenizer.replacement: must be one character"},
        {"{\"type\":\"Metaspace\",\"replacement\":\"_\",\"prepend_scheme\":\"sometimes\"}",
         "pre_tokenizer.prepend_scheme: must be first, always or never"},
        {"{\"type\":\"Metaspace\",\"replacement\":\"_\",\"add_prefix_space\":false}",
         "add_prefix_space does not match declared prepend_scheme"},
        {"{\"type\":\"Digits\"}", "pre_tokenizer.individual_digits: missing"},
        {"{\"type\":\"Punctuation\",\"behavior\":3}", "pre_tokenizer.behavior: unknown behavior"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ordo_error err;
        ordo_status status;
        ordo__hf_pretokenizer *p = compile(bad[k][0], 1, &err, &status);
        ASSERT_EQ_INT(status, ORDO_INVALID);
        ASSERT(p == NULL);
        ASSERT_CONTAINS(err.message, bad[k][1]);
    }
}

/* ---- the scanners against PCRE2 ---- */

typedef struct ends {
    size_t *at;
    size_t count, cap;
    const char *base;
} ends;

static ordo_status record(void *context, const char *piece, size_t len, ordo_error *err)
{
    (void)err;
    ends *e = context;
    if (e->count == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 1024;
        e->at = realloc(e->at, e->cap * sizeof *e->at);
        ASSERT(e->at != NULL);
    }
    e->at[e->count++] = (size_t)(piece - e->base) + len; /* ends in the text (Split alone) */
    return ORDO_OK;
}

static const char *const alphabet[] = {
    "a",
    "b",
    "Z",
    "s",
    "S",
    "t",
    "T",
    "d",
    "m",
    "M",
    "l",
    "L",
    "v",
    "e",
    "E",
    "r",
    "R",
    "\xc5\xbf",
    "'",
    "'",
    "'",
    "0",
    "7",
    "\xd9\xa3",
    "\xe2\x85\xa0",
    "\xc2\xb2",
    " ",
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
    "\xef\xbb\xbf",
    "\xe1\xa0\x8e",
    "\xcc\x81",
    "\xe0\xa4\x95",
    "\xe4\xb8\xad",
    "\xd0\x96",
    "!",
    ".",
    ",",
    "?",
    "-",
    "/",
    "\xca\xb0",
    "\xc7\x85",
    "$",
    "\xe2\x82\xac",
    "\xf0\x9f\x98\x80",
    "_",
    "\"",
    "(",
    "\x01",
    "\xf0\x9e\x8b\xb0",
};

/* Every code point, each in one of the corpus' contexts in turn (the
 * rest is the same for every code point of a class), then random strings
 * over the characters the patterns treat differently. */
static void build_text(ordo__text *t)
{
    ordo_error err;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char c[4];
        size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (n == 1)
            c[0] = (char)cp;
        else if (n == 2)
            c[0] = (char)(0xC0 | cp >> 6), c[1] = (char)(0x80 | (cp & 0x3F));
        else if (n == 3)
            c[0] = (char)(0xE0 | cp >> 12), c[1] = (char)(0x80 | (cp >> 6 & 0x3F)),
            c[2] = (char)(0x80 | (cp & 0x3F));
        else
            c[0] = (char)(0xF0 | cp >> 18), c[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
            c[2] = (char)(0x80 | (cp >> 6 & 0x3F)), c[3] = (char)(0x80 | (cp & 0x3F));
        static const char *const around[] = {"a", "b ", "1 ", "", "'s  ", "\n", "! "};
        ordo__text_append(t, c, n, &err);
        ordo__text_append(t, around[cp % 7], strlen(around[cp % 7]), &err);
    }
    unsigned state = 12345;
    for (int k = 0; k < 200000; k++) {
        state = state * 1103515245u + 12345u;
        const char *c = alphabet[(state >> 16) % (sizeof alphabet / sizeof *alphabet)];
        ordo__text_append(t, c, strlen(c), &err);
    }
}

static void scanner_matches_pcre2(const char *pre)
{
    ordo__text text = {0};
    build_text(&text);
    ordo_error err;
    ordo_status status;
    ordo__hf_pretokenizer *fast = compile(pre, 1, &err, &status);
    ASSERT_OK(status, &err);
    ordo__hf_pretokenizer *slow = compile(pre, 0, &err, &status);
    ASSERT_OK(status, &err);
    ASSERT(fast->steps[0].scan != NULL);
    ASSERT(slow->steps[0].scan == NULL);
    /* in pieces of 4 KB at character boundaries, so a difference is found near */
    for (size_t from = 0; from < text.len;) {
        size_t to = from + 4096 < text.len ? from + 4096 : text.len;
        while (to < text.len && ((unsigned char)text.data[to] & 0xC0) == 0x80)
            to++;
        ends a = {NULL, 0, 0, text.data + from}, b = {NULL, 0, 0, text.data + from};
        ASSERT_OK(ordo__hf_pretokenize(fast, text.data + from, to - from, record, &a, &err), &err);
        ASSERT_OK(ordo__hf_pretokenize(slow, text.data + from, to - from, record, &b, &err), &err);
        size_t k = 0;
        while (k < a.count && k < b.count && a.at[k] == b.at[k])
            k++;
        if (k < a.count || k < b.count) {
            size_t at = k ? a.at[k - 1] : 0;
            test_fail(__FILE__, __LINE__, "%s: scanner and PCRE2 differ after byte %zu: \"%.24s\"",
                      pre, from + at, text.data + from + at);
        }
        free(a.at);
        free(b.at);
        from = to;
    }
    ordo__hf_pretokenizer_free(fast);
    ordo__hf_pretokenizer_free(slow);
    free(text.data);
}

#define SPLIT(re)                                                                                  \
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"" re "\"},\"behavior\":\"Isolated\","            \
    "\"invert\":false}"

TEST(hf_pretok_qwen_scanner_matches_pcre2)
{
    scanner_matches_pcre2(
        SPLIT("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|"
              "\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|"
              "\\\\s+(?!\\\\S)|\\\\s+"));
}

TEST(hf_pretok_llama3_scanner_matches_pcre2)
{
    scanner_matches_pcre2(
        SPLIT("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|"
              "\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|"
              "\\\\s+(?!\\\\S)|\\\\s+"));
}

TEST(hf_pretok_gpt2_byte_level_scanner_matches_pcre2)
{
    scanner_matches_pcre2("{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":"
                          "true,\"use_regex\":true}");
}

/* Metaspace "first" after an added token: the library gives "QQhi" as
 * ["QQ", "hi"] and "hi" as ["▁hi"] (tokenizers 0.23.2, an added token QQ). */
TEST(hf_pretok_metaspace_first_only_where_the_document_begins)
{
    ordo_error err;
    ordo_status status;
    ordo__hf_pretokenizer *p = compile("{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\","
                                       "\"prepend_scheme\":\"first\",\"split\":true}",
                                       1, &err, &status);
    ASSERT_OK(status, &err);
    pieces got = {json_array(), 0};
    ASSERT_OK(ordo__hf_pretokenize_segment(p, "hi", 2, 0, collect, &got, &err), &err);
    ASSERT_OK(ordo__hf_pretokenize_segment(p, "hi", 2, 1, collect, &got, &err), &err);
    json_t *want = json_pack("[ss]", "hi", "\xe2\x96\x81hi");
    ASSERT(json_equal(got.list, want));
    json_decref(want);
    json_decref(got.list);
    ordo__hf_pretokenizer_free(p);
}

/* A match deeper than PCRE2's default JIT stack (a group repeated a
 * million times) still splits, as Oniguruma does. */
TEST(hf_pretok_deep_regex_match_is_not_refused)
{
    ordo_error err;
    ordo_status status;
    ordo__hf_pretokenizer *p = compile(SPLIT("(?:(a)|b)+"), 1, &err, &status);
    ASSERT_OK(status, &err);
    size_t n = 1000001;
    char *text = malloc(n);
    ASSERT(text != NULL);
    for (size_t i = 0; i + 1 < n; i++)
        text[i] = i % 2 ? 'b' : 'a';
    text[n - 1] = 'c';
    ends e = {NULL, 0, 0, text};
    ASSERT_OK(ordo__hf_pretokenize(p, text, n, record, &e, &err), &err);
    ASSERT_EQ_INT(e.count, 2);
    ASSERT_EQ_INT(e.at[0], n - 1);
    free(e.at);
    free(text);
    ordo__hf_pretokenizer_free(p);
}

TEST(hf_pretok_o200k_scanner_matches_pcre2)
{
    scanner_matches_pcre2(
        SPLIT("[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*"
              "[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
              "[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+"
              "[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\\\p{N}{1,3}| "
              "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n/]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|"
              "\\\\s+"));
}

/* One compiled pre-tokenizer serves several threads at once: each gets
 * the pieces one thread alone gets (scanner and PCRE2 paths). */
typedef struct worker {
    const ordo__hf_pretokenizer *p;
    const char *text;
    ordo__text got; /* the pieces, each followed by \x01 */
    ordo_status status;
} worker;

static ordo_status concat(void *context, const char *piece, size_t len, ordo_error *err)
{
    ordo__text *t = context;
    ordo_status status = ordo__text_append(t, piece, len, err);
    return status == ORDO_OK ? ordo__text_append(t, "\x01", 1, err) : status;
}

static void *work(void *arg)
{
    worker *w = arg;
    ordo_error err;
    for (int round = 0; round < 20 && w->status == ORDO_OK; round++) {
        w->got.len = 0;
        w->status = ordo__hf_pretokenize(w->p, w->text, strlen(w->text), concat, &w->got, &err);
    }
    return NULL;
}

TEST(hf_pretok_one_pre_tokenizer_serves_threads_at_once)
{
    const char *text =
        "Hello world's 12345  \n\n\tend \xc5\xbf'S \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
        "x\xe2\x80\x8dy!!\r\n  ";
    for (int scanners = 0; scanners < 2; scanners++) {
        ordo_error err;
        ordo_status status;
        ordo__hf_pretokenizer *p = compile(
            "{\"type\":\"Sequence\",\"pretokenizers\":[" SPLIT(
                "\\\\p{N}{1,3}|\\\\s+|[^\\\\s\\\\p{N}]+") ",{\"type\":\"ByteLevel\",\"add_prefix_"
                                                          "space\":true,\"trim_offsets\":true}]}",
            scanners, &err, &status);
        ASSERT_OK(status, &err);
        worker alone = {p, text, {0}, ORDO_OK};
        work(&alone);
        ASSERT_OK(alone.status, &err);
        ASSERT(alone.got.len > 40);
        worker w[4];
        pthread_t threads[4];
        for (int k = 0; k < 4; k++) {
            w[k] = (worker){p, text, {0}, ORDO_OK};
            ASSERT(pthread_create(&threads[k], NULL, work, &w[k]) == 0);
        }
        for (int k = 0; k < 4; k++) {
            pthread_join(threads[k], NULL);
            ASSERT_EQ_INT(w[k].status, ORDO_OK);
            ASSERT_EQ_INT(w[k].got.len, alone.got.len);
            ASSERT(memcmp(w[k].got.data, alone.got.data, alone.got.len) == 0);
            free(w[k].got.data);
        }
        free(alone.got.data);
        ordo__hf_pretokenizer_free(p);
    }
}
