/* Growable byte strings and printable renderings of tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

/* Makes room; see hf.h. */
ordo_status ordo__text_reserve(ordo__text *t, size_t n, ordo_error *err)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        t->data = grown;
        t->cap = cap;
    }
    return ORDO_OK;
}

/* Appends bytes; see hf.h. */
ordo_status ordo__text_append(ordo__text *t, const void *p, size_t n, ordo_error *err)
{
    ordo_status status = ordo__text_reserve(t, n, err);
    if (status != ORDO_OK)
        return status;
    if (n)
        memcpy(t->data + t->len, p, n);
    t->len += n;
    t->data[t->len] = '\0';
    return ORDO_OK;
}

/* A token for messages; see hf_model.h. */
const char *ordo__hf_quote(const char *s, size_t n, char buf[200])
{
    size_t o = 0;
    for (size_t i = 0; i < n && o < 160; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '\\')
            o += (size_t)snprintf(buf + o, 200 - o, "\\x%02X", c);
        else
            buf[o++] = (char)c;
        if (i + 1 < n && o >= 160) {
            memcpy(buf + o, "...", 3);
            o += 3;
        }
    }
    buf[o] = '\0';
    return buf;
}
