/* SHA-256 (OpenSSL libcrypto), hex forms, batch digests (docs/recipe.md,
 * "How a lane's data is decided"). */
#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>

#include "core.h"

/* OpenSSL 3 looks an algorithm up (under a lock) on every EVP_sha256()
 * digest; fetching it once per process took that off the step hot path.
 * The fetched method is immutable and shared, never freed. */
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_method;

static void fetch_sha256(void)
{
    sha256_method = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, fetch_sha256);
    return sha256_method ? sha256_method : EVP_sha256();
}

/* SHA-256 of a buffer via OpenSSL's one-shot EVP_Digest. */
void ordo_sha256(const void *data, size_t len, unsigned char out[ORDO_DIGEST_SIZE])
{
    unsigned int out_len = 0;
    /* EVP_Digest with SHA-256 only fails on allocation failure inside
     * OpenSSL; a zeroed digest then never matches a real one. */
    if (!EVP_Digest(data, len, out, &out_len, sha256(), NULL))
        memset(out, 0, ORDO_DIGEST_SIZE);
}

/* SHA-256 with a context the caller keeps (no allocation per digest). */
void ordo__sha256_with(EVP_MD_CTX *ctx, const void *data, size_t len,
                       unsigned char out[ORDO_DIGEST_SIZE])
{
    unsigned int out_len = 0;
    if (!ctx || !EVP_DigestInit_ex2(ctx, sha256(), NULL) || !EVP_DigestUpdate(ctx, data, len) ||
        !EVP_DigestFinal_ex(ctx, out, &out_len))
        ordo_sha256(data, len, out);
}

/* 64 lowercase hex characters and a NUL. */
void ordo_digest_to_hex(const unsigned char digest[ORDO_DIGEST_SIZE],
                        char hex[ORDO_DIGEST_HEX_SIZE])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < ORDO_DIGEST_SIZE; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[2 * ORDO_DIGEST_SIZE] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parses exactly 64 hex characters. */
ordo_status ordo_digest_from_hex(const char *hex, unsigned char digest[ORDO_DIGEST_SIZE],
                                 ordo_error *err)
{
    if (!hex)
        return ordo__error(err, ORDO_INVALID, "digest is missing");
    size_t len = strnlen(hex, 2 * ORDO_DIGEST_SIZE + 1);
    if (len != 2 * ORDO_DIGEST_SIZE)
        return ordo__error(err, ORDO_INVALID, "digest must be 64 hex characters, got %s%zu",
                           len > 2 * ORDO_DIGEST_SIZE ? "more than " : "",
                           len > 2 * ORDO_DIGEST_SIZE ? (size_t)(2 * ORDO_DIGEST_SIZE) : len);
    for (int i = 0; i < ORDO_DIGEST_SIZE; i++) {
        int high = hex_value(hex[2 * i]), low = hex_value(hex[2 * i + 1]);
        if (high < 0 || low < 0)
            return ordo__error(err, ORDO_INVALID, "digest has a non-hex character at offset %d",
                               high < 0 ? 2 * i : 2 * i + 1);
        digest[i] = (unsigned char)(high << 4 | low);
    }
    return ordo__ok(err);
}

/* SHA-256 over the concatenated lane digests. */
void ordo_batch_digest(const unsigned char *lane_digests, int lanes,
                       unsigned char out[ORDO_DIGEST_SIZE])
{
    ordo_sha256(lane_digests, (size_t)(lanes > 0 ? lanes : 0) * ORDO_DIGEST_SIZE, out);
}
