/* The library's Unicode classes that differ from Unicode 16's General
 * Categories: lookups and PCRE2 class bodies over generated ranges. */
#include <stdio.h>
#include <string.h>

#include "hf_pretok.h"
#include "hf_unicode_ranges.h"

#define RANGES(a)                                                                                  \
    {                                                                                              \
        a, sizeof a / sizeof *a                                                                    \
    }

static const struct {
    const uint32_t (*ranges)[2];
    size_t count;
} classes[] = {
    RANGES(ordo__hf_word16),    RANGES(ordo__hf_onig_word), RANGES(ordo__hf_nd16),
    RANGES(ordo__hf_numeric17), RANGES(ordo__hf_punct8),
};

/* See hf_pretok.h. */
int ordo__hf_unicode_is(int which, uint32_t cp)
{
    const uint32_t(*r)[2] = classes[which].ranges;
    size_t lo = 0, hi = classes[which].count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static ordo_status body(const uint32_t (*ranges)[2], size_t count, ordo__text *out, ordo_error *err)
{
    for (size_t k = 0; k < count; k++) {
        char item[40];
        uint32_t lo = ranges[k][0], hi = ranges[k][1];
        int n = lo == hi ? snprintf(item, sizeof item, "\\x{%x}", lo)
                         : snprintf(item, sizeof item, "\\x{%x}-\\x{%x}", lo, hi);
        ordo_status status = ordo__text_append(out, item, (size_t)n, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_unicode_body(int which, ordo__text *out, ordo_error *err)
{
    return body(classes[which].ranges, classes[which].count, out, err);
}

/* See hf_pretok.h. */
int ordo__hf_property_body(const char *name, size_t n, ordo__text *out, ordo_status *status,
                           ordo_error *err)
{
    char key[64];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c == ' ' || c == '_' || c == '-')
            continue;
        if (len + 1 >= sizeof key)
            return 0;
        key[len++] = c >= 'A' && c <= 'Z' ? (char)(c | 0x20) : c;
    }
    key[len] = '\0';
    size_t lo = 0, hi = sizeof ordo__hf_properties / sizeof *ordo__hf_properties;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int order = strcmp(key, ordo__hf_properties[mid].name);
        if (order == 0) {
            *status =
                body(ordo__hf_properties[mid].ranges, ordo__hf_properties[mid].count, out, err);
            return 1;
        }
        if (order < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* See hf_pretok.h. */
uint32_t ordo__hf_utf8_at(const unsigned char *s, size_t i, size_t *len)
{
    unsigned char c = s[i];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
    }
    if (c < 0xF0) {
        *len = 3;
        return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
    }
    *len = 4;
    return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 |
           (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
}
