/* tokenizer.json's "normalizer": NFC, NFD, NFKC, NFKD, Lowercase, Strip,
 * Replace, Prepend and Sequence, as Hugging Face tokenizers reads and
 * applies them (docs/tokenizer.md, "tokenizer.json normalizers"). The
 * Unicode work is in hf_normalize_unicode.c. */
#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"
#include "unicode_classes.h"

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

/* Character classes the library's regex engine (Oniguruma, Unicode 16.0)
 * and PCRE2 10.42 (Unicode 14) read differently, spelled out from
 * unicode_classes.h (Unicode 16.0). */
static const struct {
    const char *name, *long_name, *body;
} classes[] = {
    {"L", "Letter", ORDO_U_L},
    {"N", "Number", ORDO_U_N},
    {"M", "Mark", ORDO_U_M},
    {"Lu", "Uppercase_Letter", ORDO_U_LU},
    {"Ll", "Lowercase_Letter", ORDO_U_LL},
    {"Lt", "Titlecase_Letter", ORDO_U_LT},
    {"Lm", "Modifier_Letter", ORDO_U_LM},
    {"Lo", "Other_Letter", ORDO_U_LO},
};

/* Oniguruma's \w: letters, marks, numbers and connector punctuation. */
#define WORD ORDO_U_L ORDO_U_M ORDO_U_N "\\p{Pc}"

/* ASCII case-insensitive equality of a NUL-terminated name and n bytes. */
static int same_name(const char *name, const char *p, size_t n)
{
    if (strlen(name) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char a = name[i], b = p[i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a + 32);
        if (b >= 'A' && b <= 'Z')
            b = (char)(b + 32);
        if (a != b)
            return 0;
    }
    return 1;
}

/* The class body of the property escape at p (after its backslash:
 * "p{L}", "P{Mark}", "p{^Lu}"), its length in *used and whether it is
 * negated ("\P", "{^"); NULL when it is not in the table. */
static const char *property_class(const char *p, size_t left, size_t *used, int *negated)
{
    if (left < 3 || p[1] != '{')
        return NULL;
    const char *close = memchr(p + 2, '}', left - 2);
    if (!close)
        return NULL;
    const char *name = p + 2;
    if (*name == '^')
        name++, *negated = !*negated;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (same_name(classes[i].name, name, (size_t)(close - name)) ||
            same_name(classes[i].long_name, name, (size_t)(close - name))) {
            *used = (size_t)(close - p) + 1;
            return classes[i].body;
        }
    return NULL;
}

/* Appends what the escape at p (after its backslash) is in PCRE2's syntax
 * when it reads differently there (\s \S: White_Space; \h \H: hexadecimal
 * digits in Oniguruma's Ruby syntax; \w \W; \p{X} \P{X}); returns the
 * escape's length, 0 when it is the same, (size_t)-1 out of memory. */
static size_t translate_escape(const char *p, size_t left, int in_class, ordo__text *out,
                               ordo_error *err)
{
    const char *body = NULL;
    size_t used = 1;
    int negated = p[0] == 'S' || p[0] == 'H' || p[0] == 'W' || p[0] == 'P';
    if (p[0] == 's' || p[0] == 'S')
        body = ORDO_U_WS;
    else if (p[0] == 'h' || p[0] == 'H')
        body = "0-9a-fA-F";
    else if (p[0] == 'w' || p[0] == 'W')
        body = WORD;
    else if (p[0] == 'p' || p[0] == 'P')
        body = property_class(p, left, &used, &negated);
    if (!body || (negated && in_class))
        return 0; /* the same, or a negated class inside a class: PCRE2's */
    const char *open = in_class ? "" : negated ? "[^" : "[", *close = in_class ? "" : "]";
    if (ordo__text_append(out, open, strlen(open), err) != ORDO_OK ||
        ordo__text_append(out, body, strlen(body), err) != ORDO_OK ||
        ordo__text_append(out, close, strlen(close), err) != ORDO_OK)
        return (size_t)-1;
    return used;
}

/* The pattern in PCRE2's syntax (see translate_escape) in *out. */
static ordo_status translate_regex(const char *pattern, size_t len, ordo__text *out,
                                   ordo_error *err)
{
    int in_class = 0;
    ordo_status st = ordo__text_append(out, "", 0, err);
    for (size_t i = 0; st == ORDO_OK && i < len; i++) {
        char c = pattern[i];
        if (c == '\\' && i + 1 < len) {
            size_t used = translate_escape(pattern + i + 1, len - i - 1, in_class, out, err);
            if (used == (size_t)-1)
                return ORDO_NOMEM;
            if (used == 0)
                st = ordo__text_append(out, pattern + i, 2, err), used = 1;
            i += used;
            continue;
        }
        if (c == '[' && !in_class)
            in_class = 1;
        else if (c == ']' && in_class && i > 0 && pattern[i - 1] != '[' &&
                 !(i > 1 && pattern[i - 1] == '^' && pattern[i - 2] == '['))
            in_class = 0;
        st = ordo__text_append(out, &c, 1, err);
    }
    return st;
}

static ordo_status compile_regex(ordo__hf_normalizer *n, const char *pattern, size_t len,
                                 const char *where, ordo_error *err)
{
    ordo__text p = {0};
    ordo_status st = translate_regex(pattern, len, &p, err);
    if (st != ORDO_OK) {
        free(p.data);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    int code;
    PCRE2_SIZE offset;
    n->regex = pcre2_compile((PCRE2_SPTR)p.data, p.len, PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE,
                             &code, &offset, NULL);
    free(p.data);
    if (!n->regex) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        return ordo__error(err, ORDO_INVALID, "%s.pattern.Regex: %s", where, (const char *)message);
    }
    pcre2_jit_compile(n->regex, PCRE2_JIT_COMPLETE); /* without JIT it still works */
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
        return compile_regex(n, json_string_value(value), json_string_length(value), where, err);
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
