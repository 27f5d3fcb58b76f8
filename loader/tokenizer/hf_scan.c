/* Hand-written scanners for the split regexes of common tokenizer.json
 * files (GPT-2's, Qwen's, Llama 3's, GPT-4o's), chosen when a file's pattern string is exactly one of them; each
 * gives the match starting at i, as Oniguruma (leftmost alternative
 * first, Unicode 16 classes) gives it. tests/test_tokenizer_hf_pretok.c
 * checks them piece for piece against the PCRE2 translation. */
#include <string.h>

#include "hf_pretok.h"
#include "pretokenize.h"

/* GPT-2's pattern (ByteLevel with use_regex). */
const char ordo__hf_gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* Qwen2/Qwen3's: Llama 3's with single digits. */
static const char qwen_pattern[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{"
                                   "N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                                   "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* Llama 3's (tiktoken's llama3 pattern, pretokenize.h). */
static const char llama3_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* GPT-4o's (tiktoken's o200k_base pattern, pretokenize.h). */
static const char o200k_pattern[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

#define LNW (ORDO__U_L | ORDO__U_N | ORDO__U_WS)

static unsigned class_at(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                         uint32_t *cp, size_t *len)
{
    if (i >= n) {
        *cp = UINT32_MAX;
        *len = 0;
        return 0;
    }
    *cp = ordo__hf_utf8_at(s, i, len);
    return ordo__unicode_class(u, *cp);
}

/* The end of the run from i of code points whose class meets `bits`
 * (other 0), or misses all of LNW (other 1). */
static size_t run(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                  unsigned bits, int other)
{
    while (i < n) {
        size_t len;
        uint32_t cp;
        unsigned cls = class_at(u, s, n, i, &cp, &len);
        if (other ? (cls & LNW) != 0 : (cls & bits) == 0)
            break;
        i += len;
    }
    return i;
}

/* 's|'t|'re|'ve|'m|'ll|'d, case-sensitive (caseless: with (?i), where
 * LONG S folds to s): the end, or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t i, int caseless)
{
    if (s[i] != '\'' || i + 1 >= n)
        return 0;
    unsigned char a = s[i + 1], fold = caseless ? 0x20 : 0;
    if (caseless && a == 0xC5 && i + 2 < n && s[i + 2] == 0xBF)
        return i + 3; /* U+017F */
    a |= fold;
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return i + 2;
    if (i + 2 >= n)
        return 0;
    unsigned char b = s[i + 2] | fold;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return i + 3;
    return 0;
}

/* \s*[\r\n]+ (newlines 1) | \s+(?!\S) | \s+ at whitespace i. */
static size_t whitespace(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                         int newlines)
{
    size_t end = i, last_newline = 0, last_start = i, first_len = 0;
    while (end < n) {
        size_t len;
        uint32_t cp;
        if (!(class_at(u, s, n, end, &cp, &len) & ORDO__U_WS))
            break;
        if (newlines && (cp == '\r' || cp == '\n'))
            last_newline = end + 1;
        if (!first_len)
            first_len = len;
        last_start = end;
        end += len;
    }
    if (last_newline)
        return last_newline;
    if (end == n)
        return n;
    if (last_start > i)
        return last_start;
    return i + first_len;
}

/* Qwen's pattern; see qwen_pattern. */
static size_t qwen_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    size_t end = contraction(s, n, i, 1), len, next_len;
    if (end)
        return end;
    uint32_t c, next;
    unsigned cls = class_at(u, s, n, i, &c, &len);
    if (cls & ORDO__U_L)
        return run(u, s, n, i, ORDO__U_L, 0);
    if (!(cls & ORDO__U_N) && c != '\r' && c != '\n' &&
        (class_at(u, s, n, i + len, &next, &next_len) & ORDO__U_L))
        return run(u, s, n, i + len, ORDO__U_L, 0);
    if (cls & ORDO__U_N)
        return i + len;
    size_t from = c == ' ' ? i + len : i;
    if (from < n && !(class_at(u, s, n, from, &next, &next_len) & LNW)) {
        end = run(u, s, n, from, 0, 1);
        while (end < n && (s[end] == '\r' || s[end] == '\n'))
            end++;
        return end;
    }
    return whitespace(u, s, n, i, 1);
}

/* GPT-2's pattern; see ordo__hf_gpt2_pattern. */
static size_t gpt2_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    size_t end = contraction(s, n, i, 0), len, next_len;
    if (end)
        return end;
    uint32_t c, next;
    unsigned cls = class_at(u, s, n, i, &c, &len);
    size_t from = i;
    if (c == ' ' && i + len < n) {
        unsigned after = class_at(u, s, n, i + len, &next, &next_len);
        if (!(after & ORDO__U_WS))
            from = i + len, cls = after;
    }
    if (cls & ORDO__U_L)
        return run(u, s, n, from, ORDO__U_L, 0);
    if (cls & ORDO__U_N)
        return run(u, s, n, from, ORDO__U_N, 0);
    if (!(cls & ORDO__U_WS))
        return run(u, s, n, from, 0, 1);
    return whitespace(u, s, n, i, 0);
}

/* See hf_pretok.h. */
ordo__hf_scan_fn ordo__hf_scanner_for(const char *pattern, size_t len)
{
    static const struct {
        const char *pattern;
        ordo__hf_scan_fn scan;
    } known[] = {
        {ordo__hf_gpt2_pattern, gpt2_piece},
        {qwen_pattern, qwen_piece},
        {llama3_pattern, ordo__llama3_piece},
        {o200k_pattern, ordo__o200k_piece},
    };
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (strlen(known[k].pattern) == len && memcmp(known[k].pattern, pattern, len) == 0)
            return known[k].scan;
    return NULL;
}
