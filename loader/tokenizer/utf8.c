/* UTF-8 repair: every maximal ill-formed subpart becomes U+FFFD. */
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

/* Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), or 0
 * when it is ill-formed; *bad gets the maximal ill-formed subpart then. */
static size_t utf8_sequence(const unsigned char *p, size_t n, size_t *bad)
{
    unsigned char c = p[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
        if (i >= n || p[i] < min || p[i] > max) {
            *bad = i;
            return 0;
        }
    }
    return need;
}

/* Repairs invalid UTF-8; see tokenizer.h. */
ordo_status ordo__utf8_repair(const char *text, size_t len, char **copy, size_t *copy_len,
                              ordo_error *err)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0, bad = 0;
    while (i < len) { /* the common sequences checked here, the rest by utf8_sequence */
        uint64_t word;
        if (i + 8 <= len && (memcpy(&word, p + i, 8), !(word & 0x8080808080808080ull))) {
            i += 8; /* eight ASCII bytes */
            continue;
        }
        unsigned char c = p[i];
        if (c >= 0xC2 && c <= 0xDF && i + 1 < len && (p[i + 1] & 0xC0) == 0x80) {
            i += 2; /* two bytes: any continuation byte will do */
            continue;
        }
        if ((c & 0xF0) == 0xE0 && i + 2 < len && (p[i + 2] & 0xC0) == 0x80) {
            unsigned char second = p[i + 1]; /* E0: A0-BF, ED: 80-9F, others 80-BF */
            int fits = c == 0xE0   ? (second & 0xE0) == 0xA0
                       : c == 0xED ? (second & 0xE0) == 0x80
                                   : (second & 0xC0) == 0x80;
            if (fits) {
                i += 3;
                continue;
            }
        }
        size_t n = utf8_sequence(p + i, len - i, &bad);
        if (!n)
            break;
        i += n;
    }
    *copy = NULL;
    if (i == len)
        return ORDO_OK;
    char *out = malloc(3 * len + 1);
    if (!out)
        return ordo__error(err, ORDO_NOMEM, "out of memory repairing UTF-8");
    size_t o = 0;
    for (i = 0; i < len;) {
        size_t n = utf8_sequence(p + i, len - i, &bad);
        if (n) {
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += bad;
        }
    }
    *copy = out;
    *copy_len = o;
    return ORDO_OK;
}
