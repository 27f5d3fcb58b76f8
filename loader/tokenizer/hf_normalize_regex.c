/* Replace's Regex patterns: the library compiles them with Oniguruma (Ruby
 * syntax, Unicode 16.0); ordo with PCRE2 (UTF, UCP, multiline ^ and $),
 * after spelling out what the two read differently (docs/tokenizer.md,
 * "tokenizer.json normalizers"). */
#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"
#include "unicode_classes.h"

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

/* Compiles a Replace's Regex pattern; see hf_normalize.h. */
ordo_status ordo__hf_regex_compile(const char *pattern, size_t len, const char *where,
                                   pcre2_code **out, ordo_error *err)
{
    ordo__text p = {0};
    ordo_status st = translate_regex(pattern, len, &p, err);
    if (st != ORDO_OK) {
        free(p.data);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    int code;
    PCRE2_SIZE offset;
    *out = pcre2_compile((PCRE2_SPTR)p.data, p.len, PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &code,
                         &offset, NULL);
    free(p.data);
    if (!*out) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        return ordo__error(err, ORDO_INVALID, "%s.pattern.Regex: %s", where, (const char *)message);
    }
    pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE); /* without JIT it still works */
    return ORDO_OK;
}
