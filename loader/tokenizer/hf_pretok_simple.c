/* The character-class pre-tokenizers: Metaspace, Digits, Punctuation,
 * Whitespace, WhitespaceSplit, with the library's Unicode classes. */
#include <stdio.h>
#include <string.h>

#include "hf_pretok.h"

/* Whether code point c is a "match" of the step's character predicate. */
static int predicate(const ordo__hf_step *s, uint32_t c)
{
    switch (s->kind) {
    case ORDO__HF_METASPACE: return c == s->replacement_cp;
    case ORDO__HF_DIGITS: return ordo__hf_unicode_is(ORDO__HF_NUMERIC17, c);
    case ORDO__HF_PUNCTUATION: return ordo__hf_unicode_is(ORDO__HF_PUNCT8, c);
    default: /* WhitespaceSplit: char::is_whitespace, White_Space */
        return (ordo__unicode_class(ordo__unicode(), c) & ORDO__U_WS) != 0;
    }
}

/* Each character meeting the predicate is a match; the runs between are
 * the gaps (the library's Pattern for Fn(char) -> bool). */
static ordo_status char_spans(const ordo__hf_step *step, const char *s, size_t n,
                              ordo__hf_span_fn fn, void *context, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    size_t gap = 0, len;
    for (size_t i = 0; status == ORDO_OK && i < n; i += len) {
        uint32_t c = ordo__hf_utf8_at((const unsigned char *)s, i, &len);
        if (!predicate(step, c))
            continue;
        if (gap < i)
            status = fn(context, gap, i, 0, err);
        if (status == ORDO_OK)
            status = fn(context, i, i + len, 1, err);
        gap = i + len;
    }
    if (status == ORDO_OK && gap < n)
        status = fn(context, gap, n, 0, err);
    return status;
}

/* Whitespace: the matches of \w+|[^\w\s]+ (Rust regex, Unicode 16) are the
 * pieces; what lies between is dropped. */
static ordo_status whitespace(ordo__hf_run *r, size_t step, const char *piece, size_t n,
                              int at_start, ordo_error *err)
{
    const ordo__unicode_table *u = ordo__unicode();
    const unsigned char *s = (const unsigned char *)piece;
    ordo_status status = ORDO_OK;
    size_t i = 0, len;
    while (status == ORDO_OK && i < n) {
        uint32_t c = ordo__hf_utf8_at(s, i, &len);
        int word = ordo__hf_unicode_is(ORDO__HF_WORD16, c);
        if (!word && (ordo__unicode_class(u, c) & ORDO__U_WS)) {
            i += len;
            continue;
        }
        size_t start = i;
        for (i += len; i < n; i += len) {
            c = ordo__hf_utf8_at(s, i, &len);
            int w = ordo__hf_unicode_is(ORDO__HF_WORD16, c);
            if (w != word || (!w && (ordo__unicode_class(u, c) & ORDO__U_WS)))
                break;
        }
        status =
            ordo__hf_run_from(r, step + 1, piece + start, i - start, at_start && start == 0, err);
    }
    return status;
}

/* Metaspace: spaces become the replacement, which is prepended by the
 * scheme, then (split) each replacement begins a piece. */
static ordo_status metaspace(ordo__hf_run *r, size_t step, const char *piece, size_t n,
                             int at_start, ordo_error *err)
{
    const ordo__hf_step *s = &r->p->steps[step];
    ordo__text *t = &r->scratch[2 * step];
    t->len = 0;
    int starts = n >= 1 && piece[0] == ' ';
    starts = starts ||
             (n >= s->replacement_len && memcmp(piece, s->replacement, s->replacement_len) == 0);
    ordo_status status = ORDO_OK;
    if (!starts && (s->prepend == 2 || (s->prepend == 1 && at_start)))
        status = ordo__text_append(t, s->replacement, s->replacement_len, err);
    for (size_t i = 0, from = 0; status == ORDO_OK && i <= n; i++)
        if (i == n || piece[i] == ' ') {
            status = ordo__text_append(t, piece + from, i - from, err);
            if (status == ORDO_OK && i < n)
                status = ordo__text_append(t, s->replacement, s->replacement_len, err);
            from = i + 1;
        }
    if (status != ORDO_OK)
        return status;
    if (!s->split)
        return ordo__hf_run_from(r, step + 1, t->data, t->len, at_start, err);
    return ordo__hf_split_piece(r, step, t->data, t->len, at_start, char_spans,
                                ORDO__HF_MERGED_WITH_NEXT, 0, err);
}

/* The step's piece; see hf_pretok.h. */
ordo_status ordo__hf_simple_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                 int at_start, ordo_error *err)
{
    const ordo__hf_step *s = &r->p->steps[step];
    if (!ordo__unicode())
        return ordo__error(err, ORDO_NOMEM, "out of memory building the Unicode table");
    switch (s->kind) {
    case ORDO__HF_METASPACE: return metaspace(r, step, piece, len, at_start, err);
    case ORDO__HF_WHITESPACE: return whitespace(r, step, piece, len, at_start, err);
    case ORDO__HF_DIGITS:
        return ordo__hf_split_piece(r, step, piece, len, at_start, char_spans,
                                    s->individual_digits ? ORDO__HF_ISOLATED : ORDO__HF_CONTIGUOUS,
                                    0, err);
    case ORDO__HF_PUNCTUATION:
        return ordo__hf_split_piece(r, step, piece, len, at_start, char_spans, s->behavior, 0, err);
    default:
        return ordo__hf_split_piece(r, step, piece, len, at_start, char_spans, ORDO__HF_REMOVED, 0,
                                    err);
    }
}

static ordo_status metaspace_parse(const json_t *json, const char *where, ordo__hf_step *step,
                                   ordo_error *err)
{
    const json_t *rep = json_object_get(json, "replacement");
    const char *text = json_string_value(rep);
    size_t n = json_string_length(rep), len = 0;
    if (!text || !n || n > 4 || (ordo__hf_utf8_at((const unsigned char *)text, 0, &len), len != n))
        return ordo__error(err, ORDO_INVALID, "%s.replacement: must be one character", where);
    memcpy(step->replacement, text, n);
    step->replacement_len = n;
    step->replacement_cp = ordo__hf_utf8_at((const unsigned char *)text, 0, &len);
    const json_t *scheme = json_object_get(json, "prepend_scheme");
    const char *name = scheme ? json_string_value(scheme) : "always";
    static const char *const schemes[] = {"never", "first", "always"};
    step->prepend = -1;
    for (int k = 0; name && k < 3; k++)
        if (strcmp(name, schemes[k]) == 0)
            step->prepend = k;
    if (step->prepend < 0)
        return ordo__error(err, ORDO_INVALID, "%s.prepend_scheme: must be first, always or never",
                           where);
    int add = 1;
    ordo_status status = ordo__hf_member_bool(json, where, "add_prefix_space", 0, 1, &add, err);
    if (status == ORDO_OK && !add) { /* the older form: add_prefix_space false is never */
        if (step->prepend != 0)
            return ordo__error(err, ORDO_INVALID,
                               "%s: add_prefix_space does not match declared prepend_scheme",
                               where);
    }
    if (status == ORDO_OK)
        status = ordo__hf_member_bool(json, where, "split", 0, 1, &step->split, err);
    return status;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_simple_parse(const json_t *json, const char *where, const char *type,
                                  ordo__hf_step *step, ordo_error *err)
{
    if (strcmp(type, "Metaspace") == 0) {
        step->kind = ORDO__HF_METASPACE;
        return metaspace_parse(json, where, step, err);
    }
    if (strcmp(type, "Digits") == 0) {
        step->kind = ORDO__HF_DIGITS;
        return ordo__hf_member_bool(json, where, "individual_digits", 1, 0,
                                    &step->individual_digits, err);
    }
    if (strcmp(type, "Punctuation") == 0) {
        step->kind = ORDO__HF_PUNCTUATION;
        step->behavior = ORDO__HF_ISOLATED;
        const json_t *b = json_object_get(json, "behavior");
        char member[600];
        snprintf(member, sizeof member, "%s.behavior", where);
        return b ? ordo__hf_behavior_parse(b, member, &step->behavior, err) : ORDO_OK;
    }
    if (strcmp(type, "Whitespace") == 0 || strcmp(type, "WhitespaceSplit") == 0) {
        step->kind = type[10] ? ORDO__HF_WHITESPACE_SPLIT : ORDO__HF_WHITESPACE;
        return ORDO_OK;
    }
    return ordo__error(err, ORDO_INVALID,
                       "%s: '%s' is not supported (supported: Split, ByteLevel, Metaspace, Digits, "
                       "Punctuation, Whitespace, WhitespaceSplit, Sequence)",
                       where, type);
}
