/* Encoding text: UTF-8 repair, the split pattern, merges per piece. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_merge.h"

/* Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), or 0
 * when it is ill-formed; *bad gets the maximal ill-formed subpart then. */
static size_t utf8_sequence(const unsigned char *p, size_t n, size_t *bad)
{
    unsigned char c = p[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
        if (i >= n || p[i] < min || p[i] > max) {
            *bad = i;
            return 0;
        }
    }
    return need;
}

/* A copy with every maximal ill-formed subpart replaced by U+FFFD, or
 * NULL (and *repaired 0) when the text is valid already. */
static ordo_status repair_utf8(const char *text, size_t len, char **copy, size_t *copy_len,
                               ordo_error *err)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0, bad = 0;
    while (i < len) {
        size_t n = utf8_sequence(p + i, len - i, &bad);
        if (!n)
            break;
        i += n;
    }
    *copy = NULL;
    if (i == len)
        return ORDO_OK;
    char *out = malloc(3 * len + 1);
    if (!out)
        return ordo__error(err, ORDO_NOMEM, "out of memory repairing UTF-8");
    size_t o = 0;
    for (i = 0; i < len;) {
        size_t n = utf8_sequence(p + i, len - i, &bad);
        if (n) {
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += bad;
        }
    }
    *copy = out;
    *copy_len = o;
    return ORDO_OK;
}

/* What is done with each piece: merged into tokens, or (tests) its end
 * offset noted. */
typedef struct {
    const ordo__bpe *bpe;
    ordo__tokens *out;
    int ends_only;
    const char *text;
} piece_sink;

static ordo_status take_piece(piece_sink *sink, const unsigned char *p, size_t n, ordo_error *err)
{
    if (sink->ends_only)
        return ordo__tokens_push(sink->out, (uint32_t)((const char *)p + n - sink->text), err);
    return ordo__bpe_merge(sink->bpe, p, n, sink->out, err);
}

static ordo_status split_and_merge(const pcre2_code *pattern, const char *text, size_t len,
                                   piece_sink *sink, ordo_error *err)
{
    pcre2_match_data *match = pcre2_match_data_create(2, NULL);
    if (!match)
        return ordo__error(err, ORDO_NOMEM, "out of memory tokenizing");
    ordo_status status = ORDO_OK;
    PCRE2_SIZE at = 0;
    while (status == ORDO_OK && at < len) {
        int rc =
            pcre2_jit_match(pattern, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_JIT_BADOPTION) /* not compiled by the JIT: the interpreter */
            rc = pcre2_match(pattern, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break; /* cannot happen: the patterns cover every character */
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            status = ordo__error(err, ORDO_INVALID, "split pattern failed at byte %zu: %s",
                                 (size_t)at, (const char *)message);
            break;
        }
        PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(match);
        if (ovector[1] <= ovector[0]) { /* an empty match: step one character */
            at = ovector[0] + 1;
            while (at < len && ((unsigned char)text[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        status = take_piece(sink, (const unsigned char *)text + ovector[0], ovector[1] - ovector[0],
                            err);
        at = ovector[1];
    }
    pcre2_match_data_free(match);
    return status;
}

static ordo_status scan_and_merge(const ordo__bpe *bpe, const char *text, size_t len,
                                  piece_sink *sink, ordo_error *err)
{
    const ordo__unicode_table *u = ordo__unicode();
    if (!u)
        return ordo__error(err, ORDO_NOMEM, "out of memory building the Unicode table");
    size_t (*scan)(const ordo__unicode_table *, const unsigned char *, size_t, size_t) =
        ordo__bpe_encoding(bpe)->scan;
    const unsigned char *s = (const unsigned char *)text;
    ordo_status status = ORDO_OK;
    for (size_t at = 0; status == ORDO_OK && at < len;) {
        size_t end = scan(u, s, len, at);
        status = take_piece(sink, s + at, end - at, err);
        at = end;
    }
    return status;
}

/* Encodes ordinary text; see tokenizer.h. */
ordo_status ordo__bpe_encode_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                  size_t len, ordo__tokens *out, ordo_error *err)
{
    char *copy = NULL;
    size_t copy_len = 0;
    ordo_status status = repair_utf8(text, len, &copy, &copy_len, err);
    if (status != ORDO_OK)
        return status;
    const char *valid = copy ? copy : text;
    size_t valid_len = copy ? copy_len : len;
    piece_sink sink = {bpe, out, 0, valid};
    status = pattern ? split_and_merge(pattern, valid, valid_len, &sink, err)
                     : scan_and_merge(bpe, valid, valid_len, &sink, err);
    free(copy);
    return status;
}

/* Piece ends of valid UTF-8 text; see bpe_merge.h. */
ordo_status ordo__bpe_split_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                 size_t len, ordo__tokens *ends, ordo_error *err)
{
    piece_sink sink = {bpe, ends, 1, text};
    return pattern ? split_and_merge(pattern, text, len, &sink, err)
                   : scan_and_merge(bpe, text, len, &sink, err);
}
