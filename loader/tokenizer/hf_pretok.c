/* tokenizer.json pre-tokenizers: parsing the "pre_tokenizer" value (one
 * step or a Sequence of them) and running the steps over a text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_pretok.h"

static const char supported[] =
    "supported: Split, ByteLevel, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, "
    "Sequence";

/* See hf_pretok.h. */
ordo_status ordo__hf_member_bool(const json_t *json, const char *where, const char *name,
                                 int required, int fallback, int *out, ordo_error *err)
{
    const json_t *v = json_object_get(json, name);
    if (!v && !required) {
        *out = fallback;
        return ORDO_OK;
    }
    if (!json_is_boolean(v))
        return ordo__error(err, ORDO_INVALID, "%s.%s: %s", where, name,
                           v ? "must be true or false" : "missing (true or false)");
    *out = json_is_true(v);
    return ORDO_OK;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_step_parse(const json_t *json, const char *where, int scanners,
                                ordo__hf_step *step, ordo_error *err)
{
    memset(step, 0, sizeof *step);
    if (!json_is_object(json))
        return ordo__error(err, ORDO_INVALID, "%s: must be an object with a \"type\"", where);
    const char *type = json_string_value(json_object_get(json, "type"));
    if (!type)
        return ordo__error(err, ORDO_INVALID, "%s.type: missing (a string; %s)", where, supported);
    if (strcmp(type, "Split") == 0)
        return ordo__hf_split_parse(json, where, scanners, step, err);
    if (strcmp(type, "ByteLevel") == 0)
        return ordo__hf_byte_level_parse(json, where, scanners, step, err);
    return ordo__hf_simple_parse(json, where, type, step, err);
}

static void free_steps(ordo__hf_step *steps, size_t count)
{
    for (size_t k = 0; k < count; k++)
        pcre2_code_free(steps[k].regex);
    free(steps);
}

/* Appends the steps of `json` (flattening Sequences) to p. */
static ordo_status add_steps(const json_t *json, const char *where, int scanners,
                             ordo__hf_pretokenizer *p, ordo_error *err)
{
    const char *type = json_string_value(json_object_get(json, "type"));
    if (type && strcmp(type, "Sequence") == 0) {
        const json_t *list = json_object_get(json, "pretokenizers");
        if (!json_is_array(list))
            return ordo__error(err, ORDO_INVALID, "%s.pretokenizers: %s", where,
                               list ? "must be an array" : "missing (an array)");
        for (size_t k = 0; k < json_array_size(list); k++) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s.pretokenizers[%zu]", where, k);
            ordo_status status = add_steps(json_array_get(list, k), inner, scanners, p, err);
            if (status != ORDO_OK)
                return status;
        }
        return ORDO_OK;
    }
    ordo__hf_step *grown = realloc(p->steps, (p->count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading %s", where);
    p->steps = grown;
    ordo_status status = ordo__hf_step_parse(json, where, scanners, &p->steps[p->count], err);
    if (status == ORDO_OK)
        p->count++;
    else
        pcre2_code_free(p->steps[p->count].regex);
    return status;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_pretokenizer_parse_with(const json_t *json, const char *where, int scanners,
                                             ordo__hf_pretokenizer **out, ordo_error *err)
{
    *out = NULL;
    if (!json || json_is_null(json))
        return ORDO_OK;
    if (!json_is_object(json))
        return ordo__error(err, ORDO_INVALID, "%s: must be an object or null", where);
    ordo__hf_pretokenizer *p = calloc(1, sizeof *p);
    if (!p)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading %s", where);
    ordo_status status = add_steps(json, where, scanners, p, err);
    if (status != ORDO_OK) {
        ordo__hf_pretokenizer_free(p);
        return status;
    }
    p->byte_level_last = p->count && p->steps[p->count - 1].kind == ORDO__HF_BYTE_LEVEL;
    *out = p;
    return ORDO_OK;
}

/* Compiles a "pre_tokenizer" value; see hf.h. */
ordo_status ordo__hf_pretokenizer_parse(const json_t *json, const char *where,
                                        ordo__hf_pretokenizer **out, ordo_error *err)
{
    return ordo__hf_pretokenizer_parse_with(json, where, 1, out, err);
}

/* Frees a pre-tokenizer (NULL is fine); see hf.h. */
void ordo__hf_pretokenizer_free(ordo__hf_pretokenizer *p)
{
    if (!p)
        return;
    free_steps(p->steps, p->count);
    free(p);
}

/* Whether the pieces are raw bytes for the model's byte map; see hf.h. */
int ordo__hf_pretokenizer_byte_level(const ordo__hf_pretokenizer *p)
{
    return p ? p->byte_level_last : 0;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_run_from(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                              int at_start, ordo_error *err)
{
    if (!len)
        return ORDO_OK;
    if (step == r->p->count)
        return r->fn(r->context, piece, len, err);
    switch (r->p->steps[step].kind) {
    case ORDO__HF_SPLIT: return ordo__hf_split_step(r, step, piece, len, at_start, err);
    case ORDO__HF_BYTE_LEVEL: return ordo__hf_byte_level_step(r, step, piece, len, at_start, err);
    default: return ordo__hf_simple_step(r, step, piece, len, at_start, err);
    }
}

/* Splits text into pieces through every step; see hf.h. */
ordo_status ordo__hf_pretokenize(const ordo__hf_pretokenizer *p, const char *text, size_t len,
                                 ordo__hf_piece_fn fn, void *context, ordo_error *err)
{
    return ordo__hf_pretokenize_segment(p, text, len, 1, fn, context, err);
}

/* The same for a segment that may not begin the document; see hf.h. */
ordo_status ordo__hf_pretokenize_segment(const ordo__hf_pretokenizer *p, const char *text,
                                         size_t len, int first, ordo__hf_piece_fn fn, void *context,
                                         ordo_error *err)
{
    if (!p || !p->count)
        return len ? fn(context, text, len, err) : ORDO_OK;
    ordo__text scratch[16];
    ordo__hf_run r = {p, fn, context, scratch};
    if (2 * p->count > sizeof scratch / sizeof *scratch) {
        r.scratch = calloc(2 * p->count, sizeof *r.scratch);
        if (!r.scratch)
            return ordo__error(err, ORDO_NOMEM, "out of memory pre-tokenizing");
    } else {
        memset(scratch, 0, sizeof scratch);
    }
    ordo_status status = ordo__hf_run_from(&r, 0, text, len, first != 0, err);
    for (size_t k = 0; k < 2 * p->count; k++)
        free(r.scratch[k].data);
    if (r.scratch != scratch)
        free(r.scratch);
    return status;
}
