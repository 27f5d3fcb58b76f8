/* tokenizer.json regexes under PCRE2: the library compiles them with
 * Oniguruma (Ruby syntax, Unicode 16); this translates what PCRE2 would
 * read differently and refuses what it cannot express. */
#include <stdlib.h>
#include <string.h>

#include "hf_pretok.h"
#include "unicode_classes.h"

typedef struct translator {
    const char *start, *p, *end;
    int named; /* the pattern has a named group: Oniguruma then refuses \1 */
    const char *where;
    ordo__text out;
    ordo_error *err;
} translator;

static ordo_status put(translator *t, const char *s)
{
    return ordo__text_append(&t->out, s, strlen(s), t->err);
}

static ordo_status refuse(translator *t, const char *construct)
{
    return ordo__error(t->err, ORDO_INVALID,
                       "%s: the regex's %s is not supported (at byte %zu of the pattern)", t->where,
                       construct, (size_t)(t->p - t->start));
}

/* Appends a class body for escape letter c (s w d h, lower case), or
 * \p{...} at t->p (after "\p"). */
static ordo_status body_of(translator *t, char c)
{
    if (c == 's')
        return put(t, ORDO_U_WS);
    if (c == 'w')
        return ordo__hf_unicode_body(ORDO__HF_ONIG_WORD, &t->out, t->err);
    if (c == 'd')
        return ordo__hf_unicode_body(ORDO__HF_ND16, &t->out, t->err);
    if (c == 'h')
        return put(t, "0-9a-fA-F"); /* Oniguruma's \h: a hex digit */
    /* \p{Name} or \p{^Name} */
    if (t->p >= t->end || *t->p != '{')
        return refuse(t, "\\p without braces");
    const char *close = memchr(t->p, '}', (size_t)(t->end - t->p));
    if (!close)
        return refuse(t, "unterminated \\p{");
    const char *name = t->p + 1;
    if (name < close && *name == '^')
        name++; /* \p{^Name}: the caller negates */
    ordo_status status = ORDO_OK;
    if (!ordo__hf_property_body(name, (size_t)(close - name), &t->out, &status, t->err))
        return ordo__error(t->err, ORDO_INVALID,
                           "%s: the regex's property \\p{%.*s} is not supported (supported: "
                           "Unicode General_Category and Script names)",
                           t->where, (int)(close - name), name);
    t->p = close + 1;
    return status;
}

/* One escape (t->p just after the backslash). */
static ordo_status escape(translator *t, int in_class)
{
    if (t->p >= t->end)
        return refuse(t, "trailing backslash");
    char c = *t->p++;
    char lower = (char)(c | 0x20);
    if (strchr("swdhpSWDHP", c)) {
        int negated = c >= 'A' && c <= 'Z';
        if (lower == 'p' && t->end - t->p >= 2 && t->p[0] == '{' && t->p[1] == '^')
            negated = !negated;
        if (in_class && negated)
            return refuse(t, "negated class escape inside a character class");
        /* outside a class Oniguruma does not case-fold a property, even
         * under (?i) ((?i)\p{Lu} does not match a); inside one it does */
        ordo_status status = in_class ? ORDO_OK : put(t, negated ? "(?-i:[^" : "(?-i:[");
        if (status == ORDO_OK)
            status = body_of(t, lower);
        return status == ORDO_OK && !in_class ? put(t, "])") : status;
    }
    if (c == 'u') { /* \uHHHH */
        if (t->end - t->p < 4)
            return refuse(t, "short \\u escape");
        char hex[16] = "\\x{";
        memcpy(hex + 3, t->p, 4);
        strcpy(hex + 7, "}");
        t->p += 4;
        return put(t, hex);
    }
    if (c == 'v')
        return put(t, "\\x{0b}"); /* Oniguruma's \v is the character VT */
    if (c >= '1' && c <= '9' && !in_class && t->named)
        return refuse(t, "numbered backreference in a pattern with named groups");
    if (strchr("bBRXKGyYgNOQECc", c) && !(in_class && c == 'b')) {
        char what[32] = "escape \\";
        what[8] = c;
        what[9] = '\0';
        return refuse(t, what);
    }
    char two[3] = {'\\', c, '\0'};
    return put(t, two);
}

/* The items of a character class up to its ']' (t->p just after the
 * '[' or "[^"); a class nested in it (Oniguruma's union) is read inline,
 * unless negated. */
static ordo_status class_items(translator *t, int depth)
{
    ordo_status status = ORDO_OK;
    int first = 1;
    while (status == ORDO_OK) {
        if (t->p >= t->end)
            return refuse(t, "unterminated character class");
        char c = *t->p;
        if (c == ']' && !first) {
            t->p++;
            return ORDO_OK;
        }
        if (c == ']')
            return refuse(t, "']' first in a character class");
        if (c == '&' && t->p + 1 < t->end && t->p[1] == '&')
            return refuse(t, "class intersection &&");
        t->p++;
        if (c == '[') {
            if (t->p < t->end && (*t->p == '^' || *t->p == ':'))
                return refuse(t, *t->p == '^' ? "negated class nested in a class"
                                              : "POSIX bracket class");
            if (depth > 8)
                return refuse(t, "class nested deeper than 8");
            status = class_items(t, depth + 1);
        } else if (c == '\\') {
            status = escape(t, 1);
        } else {
            status = ordo__text_append(&t->out, &c, 1, t->err);
        }
        first = 0;
    }
    return status;
}

/* A character class, t->p just after its '['. */
static ordo_status char_class(translator *t)
{
    ordo_status status = put(t, "[");
    if (status == ORDO_OK && t->p < t->end && *t->p == '^')
        status = put(t, "^"), t->p++;
    if (status == ORDO_OK)
        status = class_items(t, 0);
    return status == ORDO_OK ? put(t, "]") : status;
}

/* "(?flags" or "(?flags:": Ruby's m is PCRE2's s; Ruby has no s. */
static ordo_status group_open(translator *t)
{
    ordo_status status = put(t, "(?");
    const char *q = t->p;
    while (q < t->end && (*q == 'i' || *q == 'm' || *q == 'x' || *q == '-'))
        q++;
    if (q < t->end && q > t->p && (*q == ')' || *q == ':')) {
        for (; status == ORDO_OK && t->p < q; t->p++)
            status = put(t, *t->p == 'm' ? "s" : *t->p == 'i' ? "i" : *t->p == 'x' ? "x" : "-");
        return status;
    }
    if (t->p < t->end && *t->p == '~')
        return refuse(t, "absent operator (?~");
    return status;
}

static int contains(const char *s, size_t len, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(s + i, needle, k) == 0)
            return 1;
    return 0;
}

/* Oniguruma also matches a multi-character fold (ß for ss, ﬁ for fi):
 * refuse caseless patterns whose text holds one. */
static ordo_status folds(translator *t, const char *pattern, size_t len)
{
    static const char *const pairs[] = {"ss", "st", "ff", "fi", "fl", NULL};
    if (!contains(pattern, len, "(?i") && !contains(pattern, len, "(?mi") &&
        !contains(pattern, len, "(?xi"))
        return ORDO_OK;
    for (size_t i = 0; i + 1 < len; i++)
        for (int k = 0; pairs[k]; k++)
            if ((pattern[i] | 0x20) == pairs[k][0] && (pattern[i + 1] | 0x20) == pairs[k][1]) {
                t->p = pattern + i;
                return refuse(t, "case-insensitive letter pair with a one-character fold");
            }
    return ORDO_OK;
}

/* An interval {n} {n,} {,m} {n,m} at t->p (just after its '{'): its
 * length through the '}', or 0 when the braces are literal. */
static size_t interval_length(const translator *t)
{
    const char *q = t->p;
    int digits = 0, comma = 0;
    for (; q < t->end && ((*q >= '0' && *q <= '9') || (*q == ',' && !comma)); q++)
        if (*q == ',')
            comma = 1;
        else
            digits++;
    return q < t->end && *q == '}' && digits ? (size_t)(q - t->p) + 1 : 0;
}

/* An interval; `atom` is where the atom it repeats starts in the output.
 * Ruby's {,m} is {0,m}; its X{n,m}+ repeats X{n,m} (PCRE2 would read a
 * possessive interval), so it becomes (?:X{n,m})+. */
static ordo_status interval(translator *t, size_t atom, size_t n)
{
    int repeated = t->p + n < t->end && t->p[n] == '+';
    ordo_status status = ORDO_OK;
    if (repeated) {
        status = ordo__text_append(&t->out, "(?:", 3, t->err);
        if (status != ORDO_OK)
            return status;
        memmove(t->out.data + atom + 3, t->out.data + atom, t->out.len - atom - 3);
        memcpy(t->out.data + atom, "(?:", 3);
    }
    status = put(t, *t->p == ',' ? "{0" : "{");
    if (status == ORDO_OK)
        status = ordo__text_append(&t->out, t->p, n, t->err);
    t->p += n;
    return status == ORDO_OK && repeated ? put(t, ")") : status;
}

/* The pattern outside classes, tracking where the last atom starts (for
 * interval), groups included. */
static ordo_status sequence(translator *t)
{
    size_t groups[256], depth = 0, atom = 0, n;
    ordo_status status = ORDO_OK;
    while (status == ORDO_OK && t->p < t->end) {
        size_t here = t->out.len;
        char c = *t->p++;
        if (c == '(') {
            if (depth == sizeof groups / sizeof *groups)
                return refuse(t, "groups nested deeper than 256");
            groups[depth++] = here;
            if (t->p < t->end && *t->p == '?')
                t->p++, status = group_open(t);
            else
                status = put(t, "(");
        } else if (c == ')') {
            atom = depth ? groups[--depth] : here;
            status = put(t, ")");
        } else if (c == '{' && (n = interval_length(t))) {
            status = interval(t, atom, n);
        } else {
            if (c != '*' && c != '+' && c != '?' && ((unsigned char)c & 0xC0) != 0x80)
                atom = here;
            if (c == '\\')
                status = escape(t, 0);
            else if (c == '[')
                status = char_class(t);
            else
                status = ordo__text_append(&t->out, &c, 1, t->err);
        }
    }
    return status;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_split_regex_translate(const char *pattern, size_t len, const char *where,
                                           char **out, ordo_error *err)
{
    translator t = {pattern, pattern, pattern + len, 0, where, {0}, err};
    for (size_t i = 0; i + 3 < len; i++) /* (?<name> or (?'name' */
        if (pattern[i] == '(' && pattern[i + 1] == '?' &&
            ((pattern[i + 2] == '<' && pattern[i + 3] != '=' && pattern[i + 3] != '!') ||
             pattern[i + 2] == '\'') &&
            (i == 0 || pattern[i - 1] != '\\'))
            t.named = 1;
    ordo_status status = folds(&t, pattern, len);
    t.p = pattern;
    if (status == ORDO_OK)
        status = sequence(&t);
    if (status == ORDO_OK && !t.out.data)
        status = ordo__text_append(&t.out, "", 0, err);
    if (status != ORDO_OK) {
        free(t.out.data);
        return status;
    }
    *out = t.out.data;
    return ORDO_OK;
}

/* A literal: every character quoted. */
static ordo_status quote(const char *s, size_t len, char **out, ordo_error *err)
{
    ordo__text t = {0};
    ordo_status status = ordo__text_append(&t, "", 0, err);
    for (size_t i = 0; status == ORDO_OK && i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80 && !((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
            status = ordo__text_append(&t, "\\", 1, err);
        if (status == ORDO_OK)
            status = ordo__text_append(&t, s + i, 1, err);
    }
    if (status != ORDO_OK) {
        free(t.data);
        return status;
    }
    *out = t.data;
    return ORDO_OK;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_split_regex_compile(const char *pattern, size_t len, int literal,
                                         const char *where, pcre2_code **out, ordo_error *err)
{
    char *text = NULL;
    ordo_status status = literal ? quote(pattern, len, &text, err)
                                 : ordo__hf_split_regex_translate(pattern, len, where, &text, err);
    if (status != ORDO_OK)
        return status;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        free(text);
        return ordo__error(err, ORDO_NOMEM, "out of memory compiling %s", where);
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int code = 0;
    PCRE2_SIZE offset = 0;
    *out = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MULTILINE,
                         &code, &offset, cc);
    pcre2_compile_context_free(cc);
    free(text);
    if (!*out) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        return ordo__error(err, ORDO_INVALID, "%s: the regex does not compile: %s", where,
                           (const char *)message);
    }
    pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    return ORDO_OK;
}

static ordo_status scanned_spans(const ordo__hf_step *step, const char *s, size_t n,
                                 ordo__hf_span_fn fn, void *context, ordo_error *err)
{
    const ordo__unicode_table *u = ordo__unicode();
    if (!u)
        return ordo__error(err, ORDO_NOMEM, "out of memory building the Unicode table");
    ordo_status status = ORDO_OK;
    for (size_t i = 0; status == ORDO_OK && i < n;) {
        size_t end = step->scan(u, (const unsigned char *)s, n, i);
        status = fn(context, i, end, 1, err);
        i = end;
    }
    return status;
}

/* A match deeper than the JIT's default 32 KB stack: again with a stack
 * of up to 256 MB (mapped, touched only as deep as the match goes). */
static int deeper(const pcre2_code *re, const char *s, size_t n, size_t at, pcre2_match_data *match,
                  pcre2_match_context **deep, pcre2_jit_stack **stack)
{
    *deep = pcre2_match_context_create(NULL);
    *stack = pcre2_jit_stack_create(32 * 1024, 256 * 1024 * 1024, NULL);
    if (!*deep || !*stack)
        return PCRE2_ERROR_NOMEMORY;
    pcre2_jit_stack_assign(*deep, NULL, *stack);
    return pcre2_jit_match(re, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, match, *deep);
}

/* See hf_pretok.h. */
ordo_status ordo__hf_regex_spans(const ordo__hf_step *step, const char *s, size_t n,
                                 ordo__hf_span_fn fn, void *context, ordo_error *err)
{
    if (step->scan)
        return scanned_spans(step, s, n, fn, context, err);
    pcre2_match_data *match = pcre2_match_data_create_from_pattern(step->regex, NULL);
    if (!match)
        return ordo__error(err, ORDO_NOMEM, "out of memory splitting");
    ordo_status status = ORDO_OK;
    size_t at = 0, prev = 0, last_end = (size_t)-1;
    pcre2_match_context *deep = NULL;
    pcre2_jit_stack *stack = NULL;
    while (status == ORDO_OK && at <= n) {
        int rc =
            pcre2_jit_match(step->regex, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !deep)
            rc = deeper(step->regex, s, n, at, match, &deep, &stack);
        else if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc =
                pcre2_jit_match(step->regex, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, match, deep);
        if (rc == PCRE2_ERROR_JIT_BADOPTION) /* not compiled by the JIT: the interpreter */
            rc = pcre2_match(step->regex, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            status = ordo__error(err, ORDO_INVALID,
                                 "pre_tokenizer regex: its pattern failed matching from byte %zu "
                                 "of a %zu-byte piece: %s",
                                 at, n, (const char *)message);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(match);
        size_t start = ov[0], end = ov[1];
        if (start == end && last_end == end) { /* an empty match right after a match */
            at++;
            while (at < n && ((unsigned char)s[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        if (prev != start)
            status = fn(context, prev, start, 0, err);
        if (status == ORDO_OK)
            status = fn(context, start, end, 1, err);
        prev = at = last_end = end;
    }
    if (status == ORDO_OK && prev != n)
        status = fn(context, prev, n, 0, err);
    pcre2_match_data_free(match);
    pcre2_match_context_free(deep);
    pcre2_jit_stack_free(stack);
    return status;
}
