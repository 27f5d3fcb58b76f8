/* One token through the decoder's steps (hf_decode.c parses them). */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* "<0xHH>" (u8::from_str_radix also takes "+H") -> the byte, or -1. */
static int fallback_byte(const char *s, size_t n)
{
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
        return -1;
    if (s[3] == '+')
        return hex(s[4]);
    int hi = hex(s[3]), lo = hex(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* ByteLevel: every character back to its byte, or the token unchanged
 * when one is not a ByteLevel character. */
static ordo_status byte_level(ordo__text *t, ordo__text *tmp, ordo_error *err)
{
    uint32_t cp[256];
    ordo__hf_byte_level_table(cp);
    int inverse[256 + 68];
    memset(inverse, 0xff, sizeof inverse);
    for (unsigned b = 0; b < 256; b++)
        inverse[cp[b]] = (int)b;
    tmp->len = 0;
    for (size_t i = 0; i < t->len;) {
        uint32_t c;
        i += ordo__hf_utf8((const unsigned char *)t->data + i, &c);
        if (c >= 256 + 68 || inverse[c] < 0)
            return ORDO_OK;
        char byte = (char)inverse[c];
        ordo_status s = ordo__text_append(tmp, &byte, 1, err);
        if (s != ORDO_OK)
            return s;
    }
    ordo__text swap = *t;
    *t = *tmp;
    *tmp = swap;
    return ORDO_OK;
}

/* Replaces every occurrence of from (left to right) by to; with
 * drop, removes it. */
static ordo_status replace(ordo__text *t, ordo__text *tmp, const char *from, size_t from_len,
                           const char *to, size_t to_len, ordo_error *err)
{
    tmp->len = 0;
    ordo_status s = ordo__text_append(tmp, "", 0, err);
    for (size_t i = 0; s == ORDO_OK && i < t->len;) {
        if (i + from_len <= t->len && memcmp(t->data + i, from, from_len) == 0) {
            s = ordo__text_append(tmp, to, to_len, err);
            i += from_len;
        } else
            s = ordo__text_append(tmp, t->data + i++, 1, err);
    }
    if (s == ORDO_OK) {
        ordo__text swap = *t;
        *t = *tmp;
        *tmp = swap;
    }
    return s;
}

static void strip(ordo__text *t, const char *c, size_t clen, size_t start, size_t stop)
{
    size_t cut = 0;
    for (size_t k = 0; k < start && cut + clen <= t->len && memcmp(t->data + cut, c, clen) == 0;
         k++)
        cut += clen;
    size_t end = t->len;
    for (size_t k = 0; k < stop && end >= cut + clen && memcmp(t->data + end - clen, c, clen) == 0;
         k++)
        end -= clen;
    memmove(t->data, t->data + cut, end - cut);
    t->len = end - cut;
}

static ordo_status apply_step(const ordo__hf_decode_step *st, int fused, int at_start,
                              ordo__text *t, ordo__text *tmp, ordo_error *err)
{
    int byte;
    switch (st->kind) {
    case ORDO__HF_DECODE_BYTE_LEVEL: return byte_level(t, tmp, err);
    case ORDO__HF_DECODE_REPLACE:
        return replace(t, tmp, st->from, st->from_len, st->to, st->to_len, err);
    case ORDO__HF_DECODE_BYTE_FALLBACK:
        if ((byte = fallback_byte(t->data, t->len)) >= 0) {
            t->data[0] = (char)byte;
            t->len = 1;
        }
        return ORDO_OK;
    case ORDO__HF_DECODE_STRIP:
        if (!fused)
            strip(t, st->from, st->from_len, st->start, st->stop);
        else if (at_start) /* the start of the whole text; its end is not known here */
            strip(t, st->from, st->from_len, st->start, 0);
        return ORDO_OK;
    case ORDO__HF_DECODE_METASPACE: /* the first token loses its replacement characters */
        return replace(t, tmp, st->from, st->from_len, " ", at_start && st->prepend ? 0 : 1, err);
    case ORDO__HF_DECODE_FUSE: return ORDO_OK;
    }
    return ORDO_OK;
}

/* One token's text through the decoder; see hf_model.h. */
ordo_status ordo__hf_decoder_apply(const ordo__hf_decoder *d, const char *token, size_t len,
                                   char **buffer, size_t *used, size_t *capacity, ordo_error *err)
{
    /* the first token of a sequence: the caller's buffer is still
     * unallocated (it is allocated below even when nothing is appended) */
    int at_start = *buffer == NULL;
    ordo__text t = {0}, tmp = {0}, out = {*buffer, *used, *capacity};
    ordo_status s = ORDO_OK;
    if (!d && !at_start) /* no decoder: the library joins tokens with spaces */
        s = ordo__text_append(&t, " ", 1, err);
    if (s == ORDO_OK)
        s = ordo__text_append(&t, token, len, err);
    int fused = 0;
    for (size_t i = 0; d && s == ORDO_OK && i < d->count; i++) {
        s = apply_step(&d->steps[i], fused, at_start, &t, &tmp, err);
        fused |= d->steps[i].kind == ORDO__HF_DECODE_FUSE;
    }
    if (s == ORDO_OK)
        s = ordo__text_append(&out, t.data, t.len, err);
    *buffer = out.data, *used = out.len, *capacity = out.cap;
    free(t.data), free(tmp.data);
    return s;
}

/* Appends one token's text; see hf.h. */
ordo_status ordo__hf_decode(const ordo__hf *hf, uint32_t id, char **buffer, size_t *len,
                            size_t *capacity, ordo_error *err)
{
    if (id >= hf->size)
        return ordo__error(err, ORDO_INVALID, "token %u is out of range (ids are 0..%u)", id,
                           hf->size - 1);
    uint32_t k = hf->added_of_id[id];
    const char *text;
    size_t n;
    if (k != ORDO__HF_NONE) {
        const ordo__hf_added_token *token = &hf->added.tokens[k];
        char q[200];
        if (token->special)
            return ordo__error(err, ORDO_INVALID, "token %u '%s' is a special token", id,
                               ordo__hf_quote(token->content, token->len, q));
        text = token->pattern;
        n = token->pattern_len;
    } else if (id < hf->bpe->count && hf->bpe->tokens[id].p) { /* not an id the vocab skips */
        text = hf->bpe->tokens[id].p;
        n = hf->bpe->tokens[id].n;
    } else
        return ordo__error(err, ORDO_INVALID, "token %u is not a token of the tokenizer.json", id);
    return ordo__hf_decoder_apply(hf->decoder, text, n, buffer, len, capacity, err);
}
