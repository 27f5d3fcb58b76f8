/* Fuzzes the BPE tokenizer (cl100k_base: the scanner; o200k_base: PCRE2)
 * on arbitrary bytes: never a crash, never a special token, and decoding
 * gives back the input when it is valid UTF-8. Rank files from
 * $ORDO_VOCAB (default build/vocab). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ordo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static ordo_tokenizer *open_encoding(const char *name)
{
    char path[1024];
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir ? dir : "build/vocab", name);
    ordo_tokenizer *t = NULL;
    ordo_error err;
    if (ordo_tokenizer_open(name, path, &t, &err) != ORDO_OK) {
        fprintf(stderr, "%s\n", err.message);
        abort();
    }
    return t;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80                 ? 1
                     : c >= 0xC2 && c <= 0xDF ? 2
                     : c >= 0xE0 && c <= 0xEF ? 3
                     : c >= 0xF0 && c <= 0xF4 ? 4
                                              : 0;
        if (!len || i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] > 0x9F) ||
            (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] > 0x8F))
            return 0;
        i += len;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static ordo_tokenizer *tokenizers[2];
    if (!tokenizers[0]) {
        tokenizers[0] = open_encoding("cl100k_base");
        tokenizers[1] = open_encoding("o200k_base");
    }
    for (int k = 0; k < 2; k++) {
        uint32_t *ids = NULL;
        size_t count = 0;
        ordo_error err;
        if (ordo_tokenizer_encode(tokenizers[k], (const char *)data, size, &ids, &count, &err) !=
            ORDO_OK)
            abort();
        for (size_t i = 0; i < count; i++)
            if (ids[i] >= ordo_tokenizer_eot(tokenizers[k]) && k == 0)
                abort(); /* cl100k's specials start at its end-of-text */
        char *bytes = NULL;
        size_t len = 0;
        if (ordo_tokenizer_decode(tokenizers[k], ids, count, &bytes, &len, &err) != ORDO_OK)
            abort();
        if (valid_utf8(data, size) && (len != size || (size && memcmp(bytes, data, size) != 0)))
            abort();
        ordo_free(bytes);
        ordo_free(ids);
    }
    return 0;
}
