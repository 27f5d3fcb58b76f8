/* tokenizer.json's "normalizer": NFC, NFD, NFKC, NFKD, Lowercase, Strip,
 * Replace, Prepend and Sequence, as Hugging Face tokenizers reads and
 * applies them (docs/tokenizer.md, "tokenizer.json normalizers"). The
 * Unicode work is in hf_normalize_unicode.c. */
#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"

#define SUPPORTED "NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend, Sequence"

static const struct {
    const char *name;
    ordo__hf_normalizer_kind kind;
} kinds[] = {
    {"NFC", KIND_NFC},         {"NFKC", KIND_NFKC},           {"NFD", KIND_NFD},
    {"NFKD", KIND_NFKD},       {"Lowercase", KIND_LOWERCASE}, {"Strip", KIND_STRIP},
    {"Prepend", KIND_PREPEND}, {"Replace", KIND_REPLACE},     {"Sequence", KIND_SEQUENCE},
};

/* Frees a normalizer and its members; see hf.h. */
void ordo__hf_normalizer_free(ordo__hf_normalizer *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->members; i++)
        ordo__hf_normalizer_free(n->member[i]);
    free(n->member);
    free(n->content);
    free(n->literal);
    pcre2_code_free(n->regex);
    free(n);
}

/* A copy of a JSON string member `key` of `json`, refused by name when it
 * is missing or not a string. */
static ordo_status string_member(const json_t *json, const char *key, const char *where, char **out,
                                 size_t *len, ordo_error *err)
{
    const json_t *v = json_object_get(json, key);
    if (!v)
        return ordo__error(err, ORDO_INVALID, "%s: missing \"%s\"", where, key);
    if (!json_is_string(v))
        return ordo__error(err, ORDO_INVALID, "%s.%s: not a string", where, key);
    *len = json_string_length(v);
    *out = malloc(*len + 1);
    if (!*out)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memcpy(*out, json_string_value(v), *len + 1);
    return ORDO_OK;
}

static ordo_status bool_member(const json_t *json, const char *key, const char *where, int *out,
                               ordo_error *err)
{
    const json_t *v = json_object_get(json, key);
    if (!v)
        return ordo__error(err, ORDO_INVALID, "%s: missing \"%s\"", where, key);
    if (!json_is_boolean(v))
        return ordo__error(err, ORDO_INVALID, "%s.%s: not a boolean", where, key);
    *out = json_is_true(v);
    return ORDO_OK;
}

/* Replace: "pattern" is {"String": s} or {"Regex": r}; "content" a string. */
static ordo_status parse_replace(ordo__hf_normalizer *n, const json_t *json, const char *where,
                                 ordo_error *err)
{
    const json_t *pattern = json_object_get(json, "pattern");
    if (!pattern)
        return ordo__error(err, ORDO_INVALID, "%s: missing \"pattern\"", where);
    const char *key = json_is_object(pattern) && json_object_size(pattern) == 1
                          ? json_object_iter_key(json_object_iter((json_t *)pattern))
                          : NULL;
    const json_t *value = key ? json_object_get(pattern, key) : NULL;
    if (!key || (strcmp(key, "String") != 0 && strcmp(key, "Regex") != 0))
        return ordo__error(err, ORDO_INVALID,
                           "%s.pattern: not {\"String\": ...} or {\"Regex\": ...}", where);
    if (!json_is_string(value))
        return ordo__error(err, ORDO_INVALID, "%s.pattern.%s: not a string", where, key);
    ordo_status st = string_member(json, "content", where, &n->content, &n->content_len, err);
    if (st != ORDO_OK)
        return st;
    if (strcmp(key, "Regex") == 0)
        return ordo__hf_regex_compile(json_string_value(value), json_string_length(value), where,
                                      &n->regex, err);
    n->literal_len = json_string_length(value);
    n->literal = malloc(n->literal_len + 1);
    if (!n->literal)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memcpy(n->literal, json_string_value(value), n->literal_len + 1);
    return ORDO_OK;
}

static ordo_status parse_sequence(ordo__hf_normalizer *n, const json_t *json, const char *where,
                                  ordo_error *err)
{
    const json_t *list = json_object_get(json, "normalizers");
    if (!list)
        return ordo__error(err, ORDO_INVALID, "%s: missing \"normalizers\"", where);
    if (!json_is_array(list))
        return ordo__error(err, ORDO_INVALID, "%s.normalizers: not an array", where);
    size_t count = json_array_size(list);
    n->member = calloc(count ? count : 1, sizeof *n->member);
    if (!n->member)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        char at[512];
        snprintf(at, sizeof at, "%s.normalizers[%zu]", where, i);
        const json_t *item = json_array_get(list, i);
        if (json_is_null(item))
            return ordo__error(err, ORDO_INVALID, "%s: null", at);
        ordo_status st = ordo__hf_normalizer_parse(item, at, &n->member[i], err);
        if (st != ORDO_OK)
            return st;
        n->members++;
    }
    return ORDO_OK;
}

static ordo_status parse_fields(ordo__hf_normalizer *n, const json_t *json, const char *where,
                                ordo_error *err)
{
    ordo_status st = ORDO_OK;
    switch (n->kind) {
    case KIND_STRIP:
        st = bool_member(json, "strip_left", where, &n->strip_left, err);
        if (st == ORDO_OK)
            st = bool_member(json, "strip_right", where, &n->strip_right, err);
        return st;
    case KIND_PREPEND:
        return string_member(json, "prepend", where, &n->content, &n->content_len, err);
    case KIND_REPLACE: return parse_replace(n, json, where, err);
    case KIND_SEQUENCE: return parse_sequence(n, json, where, err);
    default: return ORDO_OK;
    }
}

/* Compiles a "normalizer" value; see hf.h. */
ordo_status ordo__hf_normalizer_parse(const json_t *json, const char *where,
                                      ordo__hf_normalizer **out, ordo_error *err)
{
    *out = NULL;
    if (!json || json_is_null(json))
        return ORDO_OK;
    if (!json_is_object(json))
        return ordo__error(err, ORDO_INVALID, "%s: not an object", where);
    const json_t *type = json_object_get(json, "type");
    if (!type)
        return ordo__error(err, ORDO_INVALID, "%s: missing \"type\" (supported: " SUPPORTED ")",
                           where);
    if (!json_is_string(type))
        return ordo__error(err, ORDO_INVALID, "%s.type: not a string", where);
    size_t k = 0;
    while (k < sizeof kinds / sizeof kinds[0] && strcmp(kinds[k].name, json_string_value(type)))
        k++;
    if (k == sizeof kinds / sizeof kinds[0])
        return ordo__error(err, ORDO_INVALID,
                           "%s: '%s' is not supported (supported: " SUPPORTED ")", where,
                           json_string_value(type));
    ordo__hf_normalizer *n = calloc(1, sizeof *n);
    if (!n)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    n->kind = kinds[k].kind;
    ordo_status st = parse_fields(n, json, where, err);
    if (st != ORDO_OK) {
        ordo__hf_normalizer_free(n);
        return st;
    }
    *out = n;
    return ORDO_OK;
}
