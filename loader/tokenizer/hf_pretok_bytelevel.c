/* The ByteLevel pre-tokenizer: an optional leading space, GPT-2's split
 * (use_regex), then each byte as a character of GPT-2's byte map. When it
 * is the last step the map is left to the model (the pieces stay bytes);
 * before other steps the mapped characters are written out as UTF-8. */
#include <stdio.h>
#include <string.h>

#include "hf_pretok.h"

/* GPT-2's byte-to-character map: printable bytes stand for themselves,
 * the others for U+0100 onward in byte order. */
static uint32_t byte_char(unsigned char b)
{
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
        return b;
    uint32_t n = 0;
    for (unsigned c = 0; c < b; c++)
        n += !((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE);
    return 0x100 + n;
}

/* The mapped pieces go on to the next step. */
static ordo_status mapped(ordo__hf_run *r, size_t step, const char *piece, size_t len, int at_start,
                          ordo_error *err)
{
    if (r->p->byte_level_last && step + 1 == r->p->count)
        return ordo__hf_run_from(r, step + 1, piece, len, at_start, err);
    ordo__text *out = &r->scratch[2 * step + 1];
    out->len = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = byte_char((unsigned char)piece[i]);
        char utf8[2] = {(char)c, 0};
        size_t n = 1;
        if (c >= 0x80)
            utf8[0] = (char)(0xC0 | c >> 6), utf8[1] = (char)(0x80 | (c & 0x3F)), n = 2;
        ordo_status status = ordo__text_append(out, utf8, n, err);
        if (status != ORDO_OK)
            return status;
    }
    return ordo__hf_run_from(r, step + 1, out->data, out->len, at_start, err);
}

typedef struct bl_split {
    ordo__hf_run *r;
    size_t step;
    const char *base;
    int at_start;
} bl_split;

static ordo_status on_piece(void *context, size_t start, size_t end, int match, ordo_error *err)
{
    (void)match;
    bl_split *b = context;
    return mapped(b->r, b->step, b->base + start, end - start, b->at_start && start == 0, err);
}

/* The ByteLevel step's piece; see hf_pretok.h. */
ordo_status ordo__hf_byte_level_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                     int at_start, ordo_error *err)
{
    const ordo__hf_step *s = &r->p->steps[step];
    if (s->add_prefix_space && piece[0] != ' ') {
        ordo__text *t = &r->scratch[2 * step];
        t->len = 0;
        ordo_status status = ordo__text_append(t, " ", 1, err);
        if (status == ORDO_OK)
            status = ordo__text_append(t, piece, len, err);
        if (status != ORDO_OK)
            return status;
        piece = t->data, len = t->len;
    }
    if (!s->use_regex)
        return mapped(r, step, piece, len, at_start, err);
    bl_split b = {r, step, piece, at_start};
    return ordo__hf_regex_spans(s, piece, len, on_piece, &b, err);
}

/* See hf_pretok.h. */
ordo_status ordo__hf_byte_level_parse(const json_t *json, const char *where, int scanners,
                                      ordo__hf_step *step, ordo_error *err)
{
    step->kind = ORDO__HF_BYTE_LEVEL;
    int trim = 0;
    ordo_status status =
        ordo__hf_member_bool(json, where, "add_prefix_space", 1, 0, &step->add_prefix_space, err);
    if (status == ORDO_OK)
        status = ordo__hf_member_bool(json, where, "trim_offsets", 1, 0, &trim, err);
    if (status == ORDO_OK)
        status = ordo__hf_member_bool(json, where, "use_regex", 0, 1, &step->use_regex, err);
    if (status != ORDO_OK || !step->use_regex)
        return status;
    char member[600];
    snprintf(member, sizeof member, "%s (GPT-2's split)", where);
    status = ordo__hf_split_regex_compile(ordo__hf_gpt2_pattern, strlen(ordo__hf_gpt2_pattern), 0,
                                          member, &step->regex, err);
    if (status == ORDO_OK && scanners)
        step->scan = ordo__hf_scanner_for(ordo__hf_gpt2_pattern, strlen(ordo__hf_gpt2_pattern));
    return status;
}
