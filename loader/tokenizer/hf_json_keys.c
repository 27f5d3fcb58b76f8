/* Object keys holding U+0000 (InternLM2's vocab has the token "\u0000"):
 * Jansson cannot hold a NUL in a key, so before parsing, each "\u0000"
 * escape inside a key becomes "\uFDD0" (six bytes for six: lines and
 * columns stay) and the vocab reader turns U+FDD0 back into U+0000. A
 * file whose keys already hold U+FDD0 as well is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

/* Does the string whose opening quote is at s[at] end in a key? Its end
 * (one past the closing quote) in *end; the "\u0000" escapes and U+FDD0s
 * it holds counted in *nuls and *fdd0s. */
static int scan_string(const char *s, size_t len, size_t at, size_t *end, size_t *nuls,
                       size_t *fdd0s)
{
    size_t i = at + 1;
    *nuls = *fdd0s = 0;
    while (i < len && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < len) {
            if (s[i + 1] == 'u' && i + 6 <= len) {
                if (memcmp(s + i + 2, "0000", 4) == 0)
                    (*nuls)++;
                else if ((s[i + 2] | 0x20) == 'f' && (s[i + 3] | 0x20) == 'd' &&
                         (s[i + 4] | 0x20) == 'd' && s[i + 5] == '0')
                    (*fdd0s)++;
                i += 6;
            } else
                i += 2;
            continue;
        }
        if (i + 3 <= len && memcmp(s + i, "\xef\xb7\x90", 3) == 0)
            (*fdd0s)++;
        i++;
    }
    *end = i < len ? i + 1 : len;
    size_t j = *end;
    while (j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
        j++;
    return j < len && s[j] == ':';
}

/* Rewrites the key's "\u0000" escapes in copy[at..end). */
static void rewrite(char *copy, size_t at, size_t end)
{
    for (size_t i = at + 1; i + 6 <= end; i++) {
        if (copy[i] != '\\')
            continue;
        if (copy[i + 1] == 'u' && memcmp(copy + i + 2, "0000", 4) == 0)
            memcpy(copy + i + 2, "FDD0", 4);
        i++; /* the escaped character is never a backslash that escapes */
    }
}

/* The line of byte `at` (1 for the first). */
static size_t line_of(const char *s, size_t at)
{
    size_t line = 1;
    for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + at - p))) != NULL; p++)
        line++;
    return line;
}

/* The text to parse; see hf_model.h. */
ordo_status ordo__hf_json_nul_keys(const char *json, size_t len, const char *what, char **copy,
                                   ordo_error *err)
{
    *copy = NULL;
    size_t nul_at = SIZE_MAX, fdd0_at = SIZE_MAX;
    for (const char *q = memchr(json, '"', len); q; q = memchr(q, '"', len - (size_t)(q - json))) {
        size_t i = (size_t)(q - json), end, nuls, fdd0s;
        int key = scan_string(json, len, i, &end, &nuls, &fdd0s);
        if (key && nuls) {
            if (!*copy) {
                if (!(*copy = malloc(len)))
                    return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", what);
                memcpy(*copy, json, len);
                nul_at = i;
            }
            rewrite(*copy, i, end);
        }
        if (key && fdd0s && fdd0_at == SIZE_MAX)
            fdd0_at = i;
        if (end >= len)
            break;
        q = json + end;
    }
    if (nul_at != SIZE_MAX && fdd0_at != SIZE_MAX) {
        free(*copy);
        *copy = NULL;
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': keys hold both U+0000 (line %zu) and U+FDD0 "
                           "(line %zu), which ordo's JSON reader cannot tell apart: not supported",
                           what, line_of(json, nul_at), line_of(json, fdd0_at));
    }
    return ORDO_OK;
}

/* A key read from the rewritten text, back as the file had it; see
 * hf_model.h. */
size_t ordo__hf_json_key_restore(char *key, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (i + 3 <= len && memcmp(key + i, "\xef\xb7\x90", 3) == 0) {
            key[o++] = '\0';
            i += 2;
            continue;
        }
        key[o++] = key[i];
    }
    return o;
}
