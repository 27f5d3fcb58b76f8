/* Opening data files, whole-file reads and file hashing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core.h"

/* Opens `path` for reading only if it is a regular file; see core.h.
 * O_NONBLOCK keeps open() itself from waiting for a FIFO's writer; fstat on
 * the descriptor follows symlinks, so a link to /dev/zero is refused too. */
ordo_status ordo__open_regular(const char *path, const char *what, int *fd, ordo_error *err)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (*fd < 0)
        return ordo__error(err, ORDO_IO, "cannot open %s '%s': %s", what, path,
                           ordo__errno_text(errno, (char[ORDO__ERRNO_TEXT_SIZE]){0}));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return ordo__error(err, ORDO_INVALID, "%s '%s' is not a regular file", what, path);
    }
    int flags = fcntl(*fd, F_GETFL);
    if (flags >= 0)
        fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
    return ORDO_OK;
}

/* The regular-file open for programs over the library; see ordo.h. */
ordo_status ordo_open_regular(const char *path, const char *what, int *fd, ordo_error *err)
{
    ordo_status status = ordo__open_regular(path, what && *what ? what : "file", fd, err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Opens a file that may be a regular file or a pipe (read whole and small,
 * as `<(cat recipe.json)` gives); anything else is refused at once. A
 * FIFO is opened waiting for its writer (opened without waiting, it reads
 * as empty until the writer comes); anything else without waiting, so a
 * device is refused before it is read. */
static ordo_status open_file_or_pipe(const char *path, int *fd, int *pipe, ordo_error *err)
{
    struct stat st;
    *pipe = stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (*pipe ? 0 : O_NONBLOCK));
    if (*fd < 0)
        return ordo__error(err, ORDO_IO, "cannot open file '%s': %s", path,
                           ordo__errno_text(errno, (char[ORDO__ERRNO_TEXT_SIZE]){0}));
    if (fstat(*fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(*fd);
        *fd = -1;
        return ordo__error(err, ORDO_INVALID, "file '%s' is neither a regular file nor a pipe",
                           path);
    }
    *pipe = S_ISFIFO(st.st_mode);
    int flags = fcntl(*fd, F_GETFL);
    if (flags >= 0)
        fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
    return ORDO_OK;
}

/* Reads a whole regular file or pipe of at most `max` bytes; see
 * core.h. */
ordo_status ordo__read_file_or_pipe(const char *path, size_t max, char **data, size_t *size,
                                    int *pipe, ordo_error *err)
{
    *data = NULL;
    *size = 0;
    int fd = -1;
    ordo_status opened = open_file_or_pipe(path, &fd, pipe, err);
    if (opened != ORDO_OK)
        return opened;
    return ordo__read_fd(fd, path, max, data, size, err);
}

/* Reads a whole file of at most `max` bytes; *data (NUL-terminated) is
 * owned by the caller. */
ordo_status ordo__read_file(const char *path, size_t max, char **data, size_t *size,
                            ordo_error *err)
{
    *data = NULL;
    *size = 0;
    int fd = -1;
    ordo_status opened = ordo__open_regular(path, "file", &fd, err);
    if (opened != ORDO_OK)
        return opened;
    return ordo__read_fd(fd, path, max, data, size, err);
}

/* Reads what `fd` holds, at most `max` bytes, and closes it. */
ordo_status ordo__read_fd(int fd, const char *path, size_t max, char **data, size_t *size,
                          ordo_error *err)
{
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return ordo__error(err, ORDO_NOMEM, "out of memory reading '%s'", path);
    }
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

/* SHA-256 and size of a regular file, streamed. */
ordo_status ordo__sha256_file(const char *path, unsigned char out[ORDO_DIGEST_SIZE], uint64_t *size,
                              ordo_error *err)
{
    int fd = -1;
    ordo_status opened = ordo__open_regular(path, "shard", &fd, err);
    if (opened != ORDO_OK)
        return opened;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *buffer = malloc(1 << 20);
    ordo_status status = ORDO_OK;
    if (!ctx || !buffer || !EVP_DigestInit_ex2(ctx, EVP_sha256(), NULL))
        status = ordo__error(err, ORDO_NOMEM, "out of memory hashing '%s'", path);
    uint64_t total = 0;
    while (status == ORDO_OK) {
        ssize_t n = read(fd, buffer, 1 << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            status = ordo__error(err, ORDO_IO, "cannot read shard '%s'", path);
        if (n <= 0)
            break;
        EVP_DigestUpdate(ctx, buffer, (size_t)n);
        total += (uint64_t)n;
    }
    unsigned int out_len = 0;
    if (status == ORDO_OK && !EVP_DigestFinal_ex(ctx, out, &out_len))
        status = ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", path);
    if (size)
        *size = total;
    EVP_MD_CTX_free(ctx);
    free(buffer);
    close(fd);
    return status;
}
