/* Whole-file reads and file hashing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_model.h"

/* Reads a whole file of at most `max` bytes; *data (NUL-terminated) is
 * owned by the caller. */
ordo_status ordo__read_file(const char *path, size_t max, char **data, size_t *size,
                            ordo_error *err)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ordo__error(err, ORDO_IO, "cannot open '%s': %s", path, ordo__errno_text(errno, (char[ORDO__ERRNO_TEXT_SIZE]){0}));
    char *buffer = malloc(max + 1);
    size_t n = buffer ? fread(buffer, 1, max + 1, f) : 0;
    int failed = ferror(f);
    fclose(f);
    if (!buffer)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    if (failed || n > max) {
        free(buffer);
        if (failed)
            return ordo__error(err, ORDO_IO, "cannot read '%s'", path);
        return ordo__error(err, ORDO_INVALID, "'%s' is larger than %zu bytes", path, max);
    }
    buffer[n] = '\0';
    *data = buffer;
    *size = n;
    return ORDO_OK;
}

/* SHA-256 and size of a file, streamed. */
ordo_status ordo__sha256_file(const char *path, unsigned char out[ORDO_DIGEST_SIZE],
                              uint64_t *size, ordo_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ordo__error(err, ORDO_IO, "cannot open shard '%s': %s", path, ordo__errno_text(errno, (char[ORDO__ERRNO_TEXT_SIZE]){0}));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *buffer = malloc(1 << 20);
    ordo_status status = ORDO_OK;
    if (!ctx || !buffer || !EVP_DigestInit_ex2(ctx, EVP_sha256(), NULL))
        status = ordo__error(err, ORDO_NOMEM, "out of memory hashing '%s'", path);
    uint64_t total = 0;
    size_t n;
    while (status == ORDO_OK && (n = fread(buffer, 1, 1 << 20, f)) > 0) {
        EVP_DigestUpdate(ctx, buffer, n);
        total += n;
    }
    if (status == ORDO_OK && ferror(f))
        status = ordo__error(err, ORDO_IO, "cannot read shard '%s'", path);
    unsigned int out_len = 0;
    if (status == ORDO_OK && !EVP_DigestFinal_ex(ctx, out, &out_len))
        status = ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", path);
    if (size)
        *size = total;
    EVP_MD_CTX_free(ctx);
    free(buffer);
    fclose(f);
    return status;
}
