/* Base64 (RFC 4648, padded), through OpenSSL's EVP block coder. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Decodes exactly `len` characters of padded base64; see core.h. */
int ordo__base64_decode_into(const char *text, size_t len, unsigned char *out)
{
    if (len == 0 || len % 4 != 0 || len > INT32_MAX)
        return -1;
    /* The alphabet alone, '=' only as the last one or two: EVP_DecodeBlock
     * itself skips blanks at the ends and stops at '-'. */
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t pad = text[len - 1] == '=' ? (text[len - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < len - pad; i++)
        if (!text[i] || !strchr(alphabet, text[i]))
            return -1;
    int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
    if (n < 0)
        return -1;
    return n - (text[len - 1] == '=') - (text[len - 2] == '=');
}

/* Decodes padded base64 into a new buffer; see ordo.h. */
ordo_status ordo_base64_decode(const char *text, size_t len, unsigned char **out, size_t *size,
                               ordo_error *err)
{
    *out = NULL;
    *size = 0;
    unsigned char *data = text && len ? malloc(len / 4 * 3 + 1) : NULL;
    if (text && len && !data)
        return ordo__error(err, ORDO_NOMEM, "out of memory decoding base64");
    int n = data ? ordo__base64_decode_into(text, len, data) : -1;
    if (n < 0) {
        free(data);
        return ordo__error(err, ORDO_INVALID, "not padded base64 (%zu characters)", len);
    }
    *out = data;
    *size = (size_t)n;
    return ordo__ok(err);
}

/* Encodes `size` bytes as padded base64, NUL-terminated; see core.h. */
char *ordo__base64_encode(const unsigned char *data, size_t size)
{
    if (size > (size_t)INT32_MAX / 4 * 3)
        return NULL;
    char *out = malloc((size + 2) / 3 * 4 + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)size);
    return out;
}
