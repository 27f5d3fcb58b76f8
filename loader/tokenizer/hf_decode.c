/* Decoding ids of a tokenizer.json, one token at a time through the
 * file's decoder: ByteLevel, Replace (a string), ByteFallback, Fuse,
 * Strip, Metaspace and Sequences of them. Steps after a Fuse see the
 * whole text: a Strip there strips the start of the output only. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

static ordo_status refuse(const char *what, const char *where, const char *why, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': %s: %s", what, where, why);
}

static ordo_status copy_string(const json_t *v, char **out, size_t *len, ordo_error *err)
{
    *len = json_string_length(v);
    *out = malloc(*len + 1);
    if (!*out)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memcpy(*out, json_string_value(v), *len + 1);
    return ORDO_OK;
}

static int one_character(const json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) == 0)
        return 0;
    uint32_t cp;
    return ordo__hf_utf8((const unsigned char *)json_string_value(v), &cp) == json_string_length(v);
}

static ordo_status parse_step(ordo__hf_decoder *d, const json_t *j, const char *where,
                              const char *what, ordo_error *err);

static ordo_status parse_fields(ordo__hf_decode_step *st, const char *type, const json_t *j,
                                const char *where, const char *what, ordo_error *err)
{
    if (strcmp(type, "ByteLevel") == 0 || strcmp(type, "ByteFallback") == 0 ||
        strcmp(type, "Fuse") == 0) {
        st->kind = strcmp(type, "ByteLevel") == 0      ? ORDO__HF_DECODE_BYTE_LEVEL
                   : strcmp(type, "ByteFallback") == 0 ? ORDO__HF_DECODE_BYTE_FALLBACK
                                                       : ORDO__HF_DECODE_FUSE;
        return ORDO_OK;
    }
    if (strcmp(type, "Replace") == 0) {
        const json_t *pattern = json_object_get(j, "pattern"),
                     *content = json_object_get(j, "content");
        const json_t *literal = json_object_get(pattern, "String");
        if (!json_is_string(literal) || json_string_length(literal) == 0 ||
            !json_is_string(content))
            return refuse(what, where,
                          "Replace needs a non-empty pattern {\"String\": ...} and a content "
                          "string (a Regex pattern is not supported)",
                          err);
        st->kind = ORDO__HF_DECODE_REPLACE;
        ordo_status s = copy_string(literal, &st->from, &st->from_len, err);
        return s == ORDO_OK ? copy_string(content, &st->to, &st->to_len, err) : s;
    }
    if (strcmp(type, "Strip") == 0) {
        const json_t *content = json_object_get(j, "content"), *start = json_object_get(j, "start"),
                     *stop = json_object_get(j, "stop");
        if (!one_character(content) || !json_is_integer(start) || !json_is_integer(stop) ||
            json_integer_value(start) < 0 || json_integer_value(stop) < 0)
            return refuse(what, where, "Strip needs a one-character content, start and stop", err);
        st->kind = ORDO__HF_DECODE_STRIP;
        st->start = (size_t)json_integer_value(start);
        st->stop = (size_t)json_integer_value(stop);
        return copy_string(content, &st->from, &st->from_len, err);
    }
    if (strcmp(type, "Metaspace") == 0) {
        const json_t *replacement = json_object_get(j, "replacement"),
                     *scheme = json_object_get(j, "prepend_scheme"),
                     *legacy = json_object_get(j, "add_prefix_space");
        if (!one_character(replacement))
            return refuse(what, where, "Metaspace needs a one-character replacement", err);
        st->kind = ORDO__HF_DECODE_METASPACE;
        st->prepend = json_is_string(scheme)    ? strcmp(json_string_value(scheme), "never") != 0
                      : json_is_boolean(legacy) ? json_is_true(legacy)
                                                : 1;
        return copy_string(replacement, &st->from, &st->from_len, err);
    }
    char why[160];
    snprintf(why, sizeof why, "the decoder '%.60s' is not supported", type);
    return refuse(what, where, why, err);
}

static ordo_status parse_step(ordo__hf_decoder *d, const json_t *j, const char *where,
                              const char *what, ordo_error *err)
{
    const json_t *type = json_object_get(j, "type");
    if (!json_is_object(j) || !json_is_string(type))
        return refuse(what, where, "a decoder must be an object with a \"type\"", err);
    if (strcmp(json_string_value(type), "Sequence") == 0) {
        const json_t *list = json_object_get(j, "decoders");
        if (!json_is_array(list))
            return refuse(what, where, "a Sequence needs a \"decoders\" array", err);
        for (size_t i = 0; i < json_array_size(list); i++) {
            char inner[200];
            snprintf(inner, sizeof inner, "%.150s.decoders[%zu]", where, i);
            ordo_status s = parse_step(d, json_array_get(list, i), inner, what, err);
            if (s != ORDO_OK)
                return s;
        }
        return ORDO_OK;
    }
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 4;
        ordo__hf_decode_step *grown = realloc(d->steps, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        d->steps = grown;
        d->cap = cap;
    }
    ordo__hf_decode_step *st = &d->steps[d->count++];
    memset(st, 0, sizeof *st);
    return parse_fields(st, json_string_value(type), j, where, what, err);
}

/* Compiles "decoder" (null: the library joins tokens with spaces). */
ordo_status ordo__hf_decoder_parse(const json_t *json, const char *what, ordo__hf_decoder **out,
                                   ordo_error *err)
{
    *out = NULL;
    if (!json || json_is_null(json))
        return ORDO_OK;
    ordo__hf_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status s = parse_step(d, json, "decoder", what, err);
    if (s != ORDO_OK) {
        ordo__hf_decoder_free(d);
        return s;
    }
    *out = d;
    return ORDO_OK;
}

/* Frees a decoder (NULL is fine). */
void ordo__hf_decoder_free(ordo__hf_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++)
        free(d->steps[i].from), free(d->steps[i].to);
    free(d->steps);
    free(d);
}
