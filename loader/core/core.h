/* core: what every module of libordo uses (internal, not installed):
 * errors and messages, strings and names, SHA-256, seeded random numbers,
 * reading files. Depends on ordo.h, OpenSSL libcrypto and Jansson only. */
#ifndef ORDO_CORE_H
#define ORDO_CORE_H

#include <openssl/types.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ordo.h"
#include "rng.h"

#if defined(__GNUC__)
#define ORDO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ORDO_PRINTF(f, a)
#endif

/* SHA-256 through a reused context (falls back to ordo_sha256). */
void ordo__sha256_with(EVP_MD_CTX *ctx, const void *data, size_t len,
                       unsigned char out[ORDO_DIGEST_SIZE]);

/* Fills `err` (when not NULL) and returns `status`. */
ordo_status ordo__error(ordo_error *err, ordo_status status, const char *fmt, ...)
    ORDO_PRINTF(3, 4);

/* Puts formatted text before err's message (where the error happened:
 * "shard 'x.jsonl' record 41: "); keeps its status. NULL err: nothing. */
void ordo__error_prefix(ordo_error *err, const char *fmt, ...) ORDO_PRINTF(2, 3);

/* Describes an errno value in `buf` (thread-safe, unlike strerror);
 * returns buf. */
#define ORDO__ERRNO_TEXT_SIZE 128
const char *ordo__errno_text(int errnum, char buf[ORDO__ERRNO_TEXT_SIZE]);

/* Clears `err` to ORDO_OK and returns ORDO_OK. */
ordo_status ordo__ok(ordo_error *err);

/* Checks a run name or group tag: 1..255 bytes, valid UTF-8, no control
 * characters. `what` names the field in the message. */
ordo_status ordo__check_name(const char *name, const char *what, ordo_error *err);

/* Checks a run's name: as ordo__check_name, and no '/' ("run names may not
 * contain '/' (they are URL path segments)"). */
ordo_status ordo__check_run_name(const char *name, const char *what, ordo_error *err);

/* Checks that `text` is a JSON object; `what` names it in the message. */
ordo_status ordo__check_json_object(const char *text, const char *what, ordo_error *err);

/* Copies `src` into the fixed buffer `dst` of `size` bytes (NULL → ""). */
void ordo__copy(char *dst, size_t size, const char *src);

/* strdup that returns NULL for NULL. */
char *ordo__strdup(const char *s);

/* Opens `path` read-only into *fd (the caller closes it) if it is a
 * regular file, refusing FIFOs, devices and links to them without blocking;
 * `what` names the file in the error ("shard", "file"). */
ordo_status ordo__open_regular(const char *path, const char *what, int *fd, ordo_error *err);

/* Reads a whole file of at most `max` bytes; *data (NUL-terminated) is
 * owned by the caller. */
ordo_status ordo__read_file(const char *path, size_t max, char **data, size_t *size,
                            ordo_error *err);

/* Reads a regular file or a pipe whole (at most `max` bytes, a longer one
 * is refused naming the limit); *pipe says which it was. Anything else (a
 * device, a folder) is refused at once naming it. *data as ordo__read_file. */
ordo_status ordo__read_file_or_pipe(const char *path, size_t max, char **data, size_t *size,
                                    int *pipe, ordo_error *err);

/* Reads what `fd` holds (at most `max` bytes) into *data (NUL-terminated,
 * the caller's) and closes `fd`; `path` names it in errors. */
ordo_status ordo__read_fd(int fd, const char *path, size_t max, char **data, size_t *size,
                          ordo_error *err);

/* SHA-256 and size of a file; ORDO_IO naming it when unreadable. */
ordo_status ordo__sha256_file(const char *path, unsigned char out[ORDO_DIGEST_SIZE], uint64_t *size,
                              ordo_error *err);

/* The `bytes` low bytes of v, least significant first (the ledger's and
 * the plan's chunk tables, gzip access points). */
static inline void ordo__put_le(unsigned char *out, uint64_t v, int bytes)
{
    for (int b = 0; b < bytes; b++)
        out[b] = (unsigned char)(v >> (8 * b));
}

/* The number of `bytes` bytes stored least significant first. */
static inline uint64_t ordo__get_le(const unsigned char *in, int bytes)
{
    uint64_t v = 0;
    for (int b = bytes - 1; b >= 0; b--)
        v = v << 8 | in[b];
    return v;
}

/* Decodes exactly `len` characters of padded base64 (no blanks) into `out`
 * (room for len / 4 * 3 bytes); returns the decoded length, -1 when the
 * text is not padded base64. */
int ordo__base64_decode_into(const char *text, size_t len, unsigned char *out);

/* `size` bytes as padded base64, NUL-terminated, the caller's (free);
 * NULL when out of memory. */
char *ordo__base64_encode(const unsigned char *data, size_t size);

#endif
