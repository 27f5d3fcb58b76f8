/* Applying a compiled normalizer (hf_normalize.c) to text, as Hugging Face
 * tokenizers' NormalizedString does: Replace replaces every match, left to
 * right, never overlapping (an empty match right after the previous one is
 * skipped, as the library's regex iterator does); Prepend prepends to a
 * non-empty string only; Strip removes White_Space. */
#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"

/* Normalizers may lengthen a text (Replace, Prepend, NFKC) but not without
 * bound: nested Replaces of "a" by "aaaaaaaaaa" would otherwise grow five
 * bytes to terabytes. No published normalizer comes near 64 times. */
#define GROWTH 64
#define GROWTH_SLACK 4096

typedef struct {
    size_t limit, original; /* most bytes a step may make; the text's own */
} bound;

static const char *kind_name(int kind)
{
    switch (kind) {
    case KIND_NFC: return "NFC";
    case KIND_NFKC: return "NFKC";
    case KIND_NFD: return "NFD";
    case KIND_NFKD: return "NFKD";
    case KIND_LOWERCASE: return "Lowercase";
    case KIND_STRIP: return "Strip";
    case KIND_PREPEND: return "Prepend";
    case KIND_REPLACE: return "Replace";
    default: return "Sequence";
    }
}

static ordo_status too_long(const ordo__hf_normalizer *n, const bound *b, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID,
                       "normalizer %s makes more than %zu bytes of a %zu-byte text (%d times it "
                       "and %d): refused",
                       kind_name(n->kind), b->limit, b->original, GROWTH, GROWTH_SLACK);
}

/* Bytes of the character starting at s[i] (1 at the end). */
static size_t char_length(const unsigned char *s, size_t len, size_t i)
{
    uint32_t c;
    return i < len ? ordo__hf_utf8_decode(s + i, &c) : 1;
}

/* The next match at or after `from`: 1 and [*start, *end), or 0. */
static int next_literal(const ordo__hf_normalizer *n, const char *text, size_t len, size_t from,
                        size_t *start, size_t *end)
{
    if (n->literal_len == 0) {
        *start = *end = from;
        return from <= len;
    }
    if (from + n->literal_len > len)
        return 0;
    const char *p = text + from, *last = text + len - n->literal_len;
    while ((p = memchr(p, n->literal[0], (size_t)(last - p) + 1)) != NULL) {
        if (memcmp(p + 1, n->literal + 1, n->literal_len - 1) == 0) {
            *start = (size_t)(p - text);
            *end = *start + n->literal_len;
            return 1;
        }
        if (p++ == last)
            break;
    }
    return 0;
}

static int next_regex(const ordo__hf_normalizer *n, pcre2_match_data *md, const char *text,
                      size_t len, size_t from, size_t *start, size_t *end, int *failed)
{
    int rc = pcre2_match(n->regex, (PCRE2_SPTR)text, len, from, PCRE2_NO_UTF_CHECK, md, NULL);
    if (rc < 0) {
        *failed = rc != PCRE2_ERROR_NOMATCH ? rc : 0;
        return 0;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *start = ov[0];
    *end = ov[1];
    return 1;
}

/* Replace of a one-byte string (Gemma's and Llama 2's space): every
 * occurrence is a match, none empty, so the runs between them are copied
 * into room made once: for content of up to four bytes room for four
 * times the text (every byte a match), for longer content
 * room for the matches counted first (refused as too long, as replace()
 * refuses it, before any is made). */
static ordo_status replace_byte(const ordo__hf_normalizer *n, const char *text, size_t len,
                                const bound *b, ordo__text *out, ordo_error *err)
{
    size_t total = len * 4; /* a text in memory is far below SIZE_MAX / 4 */
    if (n->content_len > 4) {
        size_t count = 0;
        for (size_t i = 0; i < len; i++)
            count += text[i] == n->literal[0];
        size_t kept = len - count;
        if (kept > b->limit || (count && n->content_len > (b->limit - kept) / count))
            return too_long(n, b, err);
        total = kept + count * n->content_len;
    }
    ordo_status st = ordo__text_reserve(out, total, err);
    if (st != ORDO_OK)
        return st;
    const char *p = text, *end = text + len;
    char *o = out->data + out->len;
    while (p < end) {
        const char *hit = memchr(p, n->literal[0], (size_t)(end - p));
        size_t run = (size_t)((hit ? hit : end) - p);
        memcpy(o, p, run);
        o += run;
        if (!hit)
            break;
        memcpy(o, n->content, n->content_len);
        o += n->content_len;
        p = hit + 1;
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = '\0';
    return out->len > b->limit ? too_long(n, b, err) : ORDO_OK;
}

static ordo_status replace(const ordo__hf_normalizer *n, const char *text, size_t len,
                           const bound *b, ordo__text *out, ordo_error *err)
{
    if (!n->regex && n->literal_len == 1)
        return replace_byte(n, text, len, b, out, err);
    pcre2_match_data *md = NULL;
    if (n->regex && !(md = pcre2_match_data_create_from_pattern(n->regex, NULL)))
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    size_t copied = 0, from = 0, start, end, last_end = 0;
    int have_last = 0, failed = 0;
    ordo_status st = ORDO_OK;
    while (st == ORDO_OK && len > 0 && from <= len &&
           (n->regex ? next_regex(n, md, text, len, from, &start, &end, &failed)
                     : next_literal(n, text, len, from, &start, &end))) {
        if (start == end && have_last && last_end == end) {
            from += char_length((const unsigned char *)text, len, from);
            continue;
        }
        st = ordo__text_append(out, text + copied, start - copied, err);
        if (st == ORDO_OK)
            st = ordo__text_append(out, n->content, n->content_len, err);
        if (st == ORDO_OK && out->len > b->limit)
            st = too_long(n, b, err);
        copied = from = last_end = end;
        have_last = 1;
    }
    pcre2_match_data_free(md);
    if (st == ORDO_OK && failed) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(failed, message, sizeof message);
        st = ordo__error(err, ORDO_INVALID,
                         "normalizer Replace: its pattern failed matching from byte %zu of the "
                         "text: %s",
                         from, (const char *)message);
    }
    return st == ORDO_OK ? ordo__text_append(out, text + copied, len - copied, err) : st;
}

/* The length of the White_Space prefix (left) or suffix (right). */
static size_t white_space_prefix(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint32_t c;
        size_t n = ordo__hf_utf8_decode(s + i, &c);
        if (!ordo__hf_white_space(c))
            break;
        i += n;
    }
    return i;
}

static size_t white_space_suffix(const unsigned char *s, size_t len)
{
    size_t end = len;
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (s[start] & 0xC0) == 0x80)
            start--;
        uint32_t c;
        ordo__hf_utf8_decode(s + start, &c);
        if (!ordo__hf_white_space(c))
            break;
        end = start;
    }
    return len - end;
}

static ordo_status strip(const ordo__hf_normalizer *n, const char *text, size_t len,
                         ordo__text *out, ordo_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t left = n->strip_left ? white_space_prefix(s, len) : 0;
    size_t right = n->strip_right && left < len ? white_space_suffix(s + left, len - left) : 0;
    return ordo__text_append(out, text + left, len - left - right, err);
}

static ordo_status within(const ordo__hf_normalizer *n, const char *text, size_t len,
                          const bound *b, ordo__text *out, ordo_error *err);

/* One normalizer from text to out (emptied first). */
static ordo_status step(const ordo__hf_normalizer *n, const char *text, size_t len, const bound *b,
                        ordo__text *out, ordo_error *err)
{
    out->len = 0;
    switch (n->kind) {
    case KIND_NFC:
    case KIND_NFKC:
    case KIND_NFD:
    case KIND_NFKD: {
        ordo_status st = ordo__text_append(out, "", 0, err);
        return st == ORDO_OK
                   ? ordo__hf_unicode_normalize((ordo__nf_form)n->kind, text, len, out, err)
                   : st;
    }
    case KIND_LOWERCASE: {
        ordo_status st = ordo__text_append(out, "", 0, err);
        return st == ORDO_OK ? ordo__hf_lowercase(text, len, out, err) : st;
    }
    case KIND_STRIP: return strip(n, text, len, out, err);
    case KIND_PREPEND:
        if (len > 0) {
            ordo_status st = ordo__text_append(out, n->content, n->content_len, err);
            if (st != ORDO_OK)
                return st;
        }
        return ordo__text_append(out, text, len, err);
    case KIND_REPLACE: {
        ordo_status st = ordo__text_append(out, "", 0, err);
        return st == ORDO_OK ? replace(n, text, len, b, out, err) : st;
    }
    case KIND_SEQUENCE: return within(n, text, len, b, out, err);
    }
    return ordo__error(err, ORDO_INVALID, "normalizer: unknown kind");
}

/* step, refusing a result past the bound. */
static ordo_status apply(const ordo__hf_normalizer *n, const char *text, size_t len, const bound *b,
                         ordo__text *out, ordo_error *err)
{
    ordo_status st = step(n, text, len, b, out, err);
    return st == ORDO_OK && out->len > b->limit ? too_long(n, b, err) : st;
}

/* A Sequence passes the text from member to member through two buffers,
 * the last writing to out. */
static ordo_status within(const ordo__hf_normalizer *n, const char *text, size_t len,
                          const bound *b, ordo__text *out, ordo_error *err)
{
    out->len = 0;
    if (!n || (n->kind == KIND_SEQUENCE && n->members == 0))
        return ordo__text_append(out, text, len, err);
    if (n->kind != KIND_SEQUENCE)
        return apply(n, text, len, b, out, err);
    ordo__text spare = {0};
    ordo_status st = apply(n->member[0], text, len, b, out, err);
    for (size_t i = 1; st == ORDO_OK && i < n->members; i++) {
        ordo__text input = *out; /* out's buffer becomes the input */
        *out = spare;
        st = apply(n->member[i], input.data, input.len, b, out, err);
        spare = input;
    }
    free(spare.data);
    return st;
}

/* Normalizes text; see hf.h. */
ordo_status ordo__hf_normalize(const ordo__hf_normalizer *n, const char *text, size_t len,
                               ordo__text *out, ordo_error *err)
{
    bound b = {len > (SIZE_MAX - GROWTH_SLACK) / GROWTH ? SIZE_MAX : len * GROWTH + GROWTH_SLACK,
               len};
    return within(n, text, len, &b, out, err);
}
