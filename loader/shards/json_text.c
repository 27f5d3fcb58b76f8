/* The text field of a JSON line read without building the record: a strict
 * scan that gives exactly what Jansson (JSON_ALLOW_NUL, as record.c parses a
 * line) would give, or declines and leaves the line to Jansson. It declines
 * whatever it is not certain of: any JSON Jansson could refuse or read
 * otherwise (numbers with an exponent or of 19 digits and more, escaped keys,
 * a repeated text key, nesting deeper than 32, a top level that is not an
 * object), so a refusal's message is always Jansson's own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shards.h"

int ordo__json_text_fast_enabled = 1;

enum { MAX_DEPTH = 32 };

typedef struct {
    const unsigned char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* 8 bytes at once: none is a quote, a backslash, a control byte or >= 0x80. */
static int plain8(const unsigned char *p)
{
    const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t quote = x ^ (lo * '"'), slash = x ^ (lo * '\\');
    uint64_t bad = (x & hi) | ((x - lo * 0x20) & ~x & hi) | ((quote - lo) & ~quote & hi) |
                   ((slash - lo) & ~slash & hi);
    return bad == 0;
}

/* A UTF-8 sequence at p (first byte >= 0x80) as Jansson accepts it: its
 * length, or 0 (overlong, surrogate, above U+10FFFF, cut short). */
static size_t utf8_length(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0];
    size_t n = b >= 0xC2 && b <= 0xDF   ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || (size_t)(end - p) < n)
        return 0;
    uint32_t v = b & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return n;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *v)
{
    if (end - p < 4)
        return 0;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char h = p[i];
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
            return 0;
        *v = *v << 4 | (uint32_t)d;
    }
    return 1;
}

static size_t put_utf8(unsigned char *out, uint32_t v)
{
    if (v < 0x80) {
        out[0] = (unsigned char)v;
        return 1;
    }
    if (v < 0x800) {
        out[0] = (unsigned char)(0xC0 | v >> 6);
        out[1] = (unsigned char)(0x80 | (v & 0x3F));
        return 2;
    }
    if (v < 0x10000) {
        out[0] = (unsigned char)(0xE0 | v >> 12);
        out[1] = (unsigned char)(0x80 | (v >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (v & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | v >> 18);
    out[1] = (unsigned char)(0x80 | (v >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (v >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (v & 0x3F));
    return 4;
}

/* One escape after its backslash: the code point, or 0 when refused. */
static int escape(cursor *c, uint32_t *v)
{
    if (c->p >= c->end)
        return 0;
    unsigned char e = *c->p++;
    static const char simple[] = "\"\\/bfnrt", value[] = "\"\\/\b\f\n\r\t";
    const char *at = e ? strchr(simple, e) : NULL;
    if (at) {
        *v = (unsigned char)value[at - simple];
        return 1;
    }
    if (e != 'u' || !hex4(c->p, c->end, v))
        return 0;
    c->p += 4;
    if (*v >= 0xDC00 && *v <= 0xDFFF)
        return 0;
    if (*v >= 0xD800 && *v <= 0xDBFF) {
        uint32_t low;
        if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u' ||
            !hex4(c->p + 2, c->end, &low) || low < 0xDC00 || low > 0xDFFF)
            return 0;
        c->p += 6;
        *v = 0x10000 + ((*v - 0xD800) << 10) + (low - 0xDC00);
    }
    return 1;
}

/* A string from its opening quote: checked, and decoded into `out` when
 * not NULL (room for as many bytes as the string's raw text holds). Keys
 * (`key`) may have no escape. 1, or 0 when declined. */
static int string(cursor *c, unsigned char *out, size_t *out_len, int key)
{
    c->p++;
    size_t n = 0;
    for (;;) {
        while (c->end - c->p >= 8 && plain8(c->p)) {
            if (out)
                memcpy(out + n, c->p, 8);
            n += 8;
            c->p += 8;
        }
        if (c->p >= c->end)
            return 0;
        unsigned char b = *c->p;
        if (b == '"') {
            c->p++;
            if (out_len)
                *out_len = n;
            return 1;
        }
        if (b < 0x20)
            return 0;
        if (b == '\\') {
            uint32_t v;
            c->p++;
            if (key || !escape(c, &v))
                return 0;
            n += out ? put_utf8(out + n, v) : 1;
            continue;
        }
        size_t len = b < 0x80 ? 1 : utf8_length(c->p, c->end);
        if (len == 0)
            return 0;
        if (out)
            memcpy(out + n, c->p, len);
        n += len;
        c->p += len;
    }
}

static int is_letter(unsigned char b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

static int literal(cursor *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return 0;
    c->p += n;
    return c->p >= c->end || !is_letter(*c->p);
}

static int digits(cursor *c)
{
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return (int)(c->p - start);
}

/* A number Jansson reads without overflow: an integer of at most 18
 * digits, or a fraction without exponent of at most 300 integer digits. */
static int number(cursor *c)
{
    if (*c->p == '-')
        c->p++;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return 0;
    int whole = digits(c);
    if (whole > 1 && c->p[-whole] == '0')
        return 0;
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E'))
        return 0;
    if (c->p >= c->end || *c->p != '.')
        return whole <= 18;
    c->p++;
    if (digits(c) == 0 || (c->p < c->end && (*c->p == 'e' || *c->p == 'E')))
        return 0;
    return whole <= 300;
}

static int value(cursor *c, int depth);

static int object_or_array(cursor *c, int depth)
{
    if (depth > MAX_DEPTH)
        return 0;
    unsigned char close = *c->p == '{' ? '}' : ']';
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 1;
    }
    for (;;) {
        if (close == '}') {
            if (c->p >= c->end || *c->p != '"' || !string(c, NULL, NULL, 1))
                return 0;
            skip_ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return 0;
            skip_ws(c);
        }
        if (!value(c, depth + 1))
            return 0;
        skip_ws(c);
        if (c->p >= c->end)
            return 0;
        unsigned char b = *c->p++;
        if (b == close)
            return 1;
        if (b != ',')
            return 0;
        skip_ws(c);
    }
}

static int value(cursor *c, int depth)
{
    if (c->p >= c->end)
        return 0;
    switch (*c->p) {
    case '{':
    case '[': return object_or_array(c, depth);
    case '"': return string(c, NULL, NULL, 0);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: return (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) && number(c);
    }
}

/* The text field of a JSON line, or a refusal to say; see shards.h. */
int ordo__json_text_fast(const char *line, size_t len, const char *field, char **buffer,
                         size_t *capacity, const char **text, size_t *text_len)
{
    cursor c = {(const unsigned char *)line, (const unsigned char *)line + len};
    size_t field_len = strlen(field);
    int found = 0;
    skip_ws(&c);
    if (!ordo__json_text_fast_enabled || strchr(field, '.') || c.p >= c.end || *c.p != '{')
        return 0;
    c.p++;
    skip_ws(&c);
    int empty = c.p < c.end && *c.p == '}';
    if (empty)
        c.p++;
    while (!empty) {
        const unsigned char *key = c.p + 1;
        if (c.p >= c.end || *c.p != '"' || !string(&c, NULL, NULL, 1))
            return 0;
        int is_text = (size_t)(c.p - 1 - key) == field_len && memcmp(key, field, field_len) == 0;
        skip_ws(&c);
        if (c.p >= c.end || *c.p++ != ':')
            return 0;
        skip_ws(&c);
        if (is_text && found++) /* a repeated key: Jansson keeps the last */
            return 0;
        if (is_text && c.p < c.end && *c.p == '"') {
            size_t raw = (size_t)(c.end - c.p);
            if (raw > *capacity) {
                char *grown = realloc(*buffer, raw);
                if (!grown)
                    return 0;
                *buffer = grown;
                *capacity = raw;
            }
            if (!string(&c, (unsigned char *)*buffer, text_len, 0))
                return 0;
            *text = *buffer;
        } else if (is_text) {
            if (!literal(&c, "null"))
                return 0;
            *text = NULL;
            *text_len = 0;
        } else if (!value(&c, 1)) {
            return 0;
        }
        skip_ws(&c);
        if (c.p >= c.end)
            return 0;
        unsigned char b = *c.p++;
        if (b == '}')
            break;
        if (b != ',')
            return 0;
        skip_ws(&c);
    }
    skip_ws(&c);
    return found && c.p == c.end;
}
