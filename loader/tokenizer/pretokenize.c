/* The cl100k_base split pattern as a scanner: one pass, no backtracking
 * beyond what the pattern's alternatives need. */
#include <string.h>

#include "pretokenize.h"

/* The code point at s[i] (valid UTF-8) and its length. */
static uint32_t decode(const unsigned char *s, size_t i, size_t *len)
{
    unsigned char c = s[i];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
    }
    if (c < 0xF0) {
        *len = 3;
        return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
    }
    *len = 4;
    return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
           (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
}

static unsigned class_at(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                         uint32_t *cp, size_t *len)
{
    if (i >= n) {
        *cp = UINT32_MAX;
        *len = 0;
        return 0;
    }
    *cp = decode(s, i, len);
    return ordo__unicode_class(u, *cp);
}

/* The end of the run of code points starting at i whose classes meet
 * `bits`. */
static size_t run_of(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                     unsigned bits)
{
    while (i < n) {
        if (s[i] < 0x80) { /* ASCII: no decoding */
            if (!(ordo__unicode_class(u, s[i]) & bits))
                break;
            i++;
            continue;
        }
        size_t len;
        uint32_t cp = decode(s, i, &len);
        if (!(ordo__unicode_class(u, cp) & bits))
            break;
        i += len;
    }
    return i;
}

/* The end of the run of code points not in L, N or White_Space. */
static size_t run_of_other(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    while (i < n) {
        size_t len;
        uint32_t cp;
        if (class_at(u, s, n, i, &cp, &len) & (ORDO__U_L | ORDO__U_N | ORDO__U_WS))
            break;
        i += len;
    }
    return i;
}

static int is_s(uint32_t c)
{
    return c == 's' || c == 'S' || c == 0x17F; /* (?i) folds LONG S to s */
}

/* '(?i:[sdmt]|ll|ve|re): the contraction's end, or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t i)
{
    if (s[i] != '\'' || i + 1 >= n)
        return 0;
    size_t len;
    uint32_t c = decode(s, i + 1, &len);
    if (is_s(c) || c == 'd' || c == 'D' || c == 'm' || c == 'M' || c == 't' || c == 'T')
        return i + 1 + len;
    if (i + 2 >= n)
        return 0;
    unsigned char a = s[i + 1] | 0x20, b = s[i + 2] | 0x20; /* ASCII only from here */
    if ((s[i + 2] & 0x80) == 0 &&
        ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')))
        return i + 3;
    return 0;
}

/* The whitespace alternatives: cl100k's \s++$ | \s*[\r\n] | \s+(?!\S) | \s,
 * or (end_first 0) Llama 3's \s*[\r\n]+ | \s+(?!\S) | \s+. */
static size_t whitespace(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                         size_t first_len, int end_first)
{
    size_t end = i, last_newline = 0, last_start = i;
    while (end < n) {
        size_t len;
        uint32_t cp;
        if (!(class_at(u, s, n, end, &cp, &len) & ORDO__U_WS))
            break;
        if (cp == '\r' || cp == '\n')
            last_newline = end + 1;
        last_start = end;
        end += len;
    }
    if (end == n && end_first)
        return n;
    if (last_newline)
        return last_newline;
    if (end == n)
        return n;
    if (last_start > i)
        return last_start;
    return i + first_len;
}

/* \p{N}{1,3}: the first digit ends at `after`; up to two more follow. */
static size_t digits(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t after)
{
    size_t len;
    uint32_t c;
    for (int k = 1; k < 3 && (class_at(u, s, n, after, &c, &len) & ORDO__U_N); k++)
        after += len;
    return after;
}

/* ' '?[^\s\p{L}\p{N}]+ followed by any of `trailing`, from `from` (after
 * the optional space): its end, or 0 when no such character is there. */
static size_t punctuation(const ordo__unicode_table *u, const unsigned char *s, size_t n,
                          size_t from, const char *trailing)
{
    size_t len;
    uint32_t c;
    if (from >= n || (class_at(u, s, n, from, &c, &len) & (ORDO__U_L | ORDO__U_N | ORDO__U_WS)))
        return 0;
    size_t end = run_of_other(u, s, n, from);
    while (end < n && s[end] && strchr(trailing, s[end]))
        end++;
    return end;
}

static size_t cl100k_like(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i,
                          int end_first)
{
    size_t end = contraction(s, n, i);
    if (end)
        return end;
    size_t len, next_len;
    uint32_t c, next;
    unsigned cls = class_at(u, s, n, i, &c, &len);
    if (cls & ORDO__U_L)
        return run_of(u, s, n, i, ORDO__U_L);
    if (!(cls & ORDO__U_N) && c != '\r' && c != '\n' &&
        (class_at(u, s, n, i + len, &next, &next_len) & ORDO__U_L))
        return run_of(u, s, n, i + len, ORDO__U_L);
    if (cls & ORDO__U_N)
        return digits(u, s, n, i + len);
    if ((end = punctuation(u, s, n, c == ' ' ? i + len : i, "\r\n")))
        return end;
    return whitespace(u, s, n, i, len, end_first);
}

/* The cl100k_base piece starting at i; see pretokenize.h. */
size_t ordo__cl100k_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    return cl100k_like(u, s, n, i, 1);
}

/* The Llama 3 piece starting at i; see pretokenize.h. */
size_t ordo__llama3_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    return cl100k_like(u, s, n, i, 0);
}

/* ---- o200k_base ---- */

#define UPPERISH (ORDO__U_LU | ORDO__U_LT | ORDO__U_LM | ORDO__U_LO | ORDO__U_M)
#define LOWERISH (ORDO__U_LL | ORDO__U_LM | ORDO__U_LO | ORDO__U_M)

/* The start of the code point before byte p (valid UTF-8). */
static size_t back_one(const unsigned char *s, size_t p)
{
    do
        p--;
    while (p > 0 && (s[p] & 0xC0) == 0x80);
    return p;
}

/* The optional contraction suffix at i: where the word ends. */
static size_t with_suffix(const unsigned char *s, size_t n, size_t i)
{
    size_t end = i < n ? contraction(s, n, i) : 0;
    return end ? end : i;
}

/* [\p{Upperish}]*[\p{Lowerish}]+ contraction? from `start`, with the
 * regex's backtracking: the longest upperish run, then as few of its
 * characters given back as it takes for a lowerish one to follow. */
static size_t upper_then_lower(const ordo__unicode_table *u, const unsigned char *s, size_t n,
                               size_t start)
{
    size_t upper_end = run_of(u, s, n, start, UPPERISH), len;
    uint32_t c;
    for (size_t p = upper_end;; p = back_one(s, p)) {
        if (class_at(u, s, n, p, &c, &len) & LOWERISH)
            return with_suffix(s, n, run_of(u, s, n, p, LOWERISH));
        if (p == start)
            return 0;
    }
}

/* [\p{Upperish}]+[\p{Lowerish}]* contraction? from `start`. */
static size_t upper_and_lower(const ordo__unicode_table *u, const unsigned char *s, size_t n,
                              size_t start)
{
    size_t upper_end = run_of(u, s, n, start, UPPERISH);
    if (upper_end == start)
        return 0;
    return with_suffix(s, n, run_of(u, s, n, upper_end, LOWERISH));
}

/* The o200k_base piece starting at i; see pretokenize.h. */
size_t ordo__o200k_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i)
{
    size_t len, end;
    uint32_t c;
    unsigned cls = class_at(u, s, n, i, &c, &len);
    /* the optional prefix [^\r\n\p{L}\p{N}] is tried taken, then not */
    int prefix = c != '\r' && c != '\n' && !(cls & (ORDO__U_L | ORDO__U_N));
    if ((prefix && (end = upper_then_lower(u, s, n, i + len))) ||
        (end = upper_then_lower(u, s, n, i)))
        return end;
    if ((prefix && (end = upper_and_lower(u, s, n, i + len))) ||
        (end = upper_and_lower(u, s, n, i)))
        return end;
    if (cls & ORDO__U_N)
        return digits(u, s, n, i + len);
    if ((end = punctuation(u, s, n, c == ' ' ? i + len : i, "\r\n/")))
        return end;
    return whitespace(u, s, n, i, len, 0);
}
