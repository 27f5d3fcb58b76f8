/* A shard's SHA-256 at open without hashing the corpus again (docs/ledger.md):
 * the ledger remembers each shard file's size, modification time and digest
 * as last hashed; a file that still has that size and time keeps that
 * digest, and its content is checked chunk by chunk as it is read. */
#define _DEFAULT_SOURCE /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recipe.h"

/* Size and modification time of a shard, refusing what is not a regular
 * file (opened without waiting, like every shard open). */
static ordo_status look_at(const char *path, uint64_t *size, int64_t *mtime_ns, ordo_error *err)
{
    int fd = -1;
    ordo_status status = ordo__open_regular(path, "shard", &fd, err);
    if (status != ORDO_OK)
        return status;
    struct stat st;
    if (fstat(fd, &st) != 0)
        status = ordo__error(err, ORDO_IO, "cannot look at shard '%s'", path);
    close(fd);
    *size = status == ORDO_OK ? (uint64_t)st.st_size : 0;
    *mtime_ns =
        status == ORDO_OK ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
    return status;
}

/* The ledger's name for a shard file: its resolved absolute path, so the
 * same file is known however the data root was spelled. NULL when it
 * cannot be resolved (the file is then simply not known). */
static char *file_key(const char *path)
{
    return realpath(path, NULL);
}

static ordo_status hash_whole(ordo_recipe *r, ordo__shard *shard, const char *path,
                              unsigned char out[ORDO_DIGEST_SIZE], ordo_error *err)
{
    uint64_t size = 0;
    ordo_status status = ordo__sha256_file(path, out, &size, err);
    r->hashed_shards++;
    r->hashed_bytes += size;
    if (status == ORDO_OK && size != shard->size)
        status = ordo__error(err, ORDO_CONFLICT,
                             "shard '%s' changed while it was hashed "
                             "(%llu bytes, then %llu)",
                             path, (unsigned long long)shard->size, (unsigned long long)size);
    return status;
}

static ordo_status refuse_changed(const char *path, const unsigned char was_digest[],
                                  const unsigned char is_digest[], uint64_t size, uint64_t bytes,
                                  ordo_error *err)
{
    char was[ORDO_DIGEST_HEX_SIZE], is[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(was_digest, was);
    ordo_digest_to_hex(is_digest, is);
    return ordo__error(err, ORDO_CONFLICT,
                       "shard '%s' changed since it was recorded: SHA-256 was %s, is %s "
                       "(%llu bytes, was %llu)",
                       path, was, is, (unsigned long long)size, (unsigned long long)bytes);
}

static ordo_status resolve_at(ordo_recipe *r, ordo__shard *shard, int recorded, const char *path,
                              ordo_error *err)
{
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    ordo_status status = look_at(path, &size, &mtime_ns, err);
    if (status != ORDO_OK)
        return status;
    if (recorded && size != shard->size)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s' changed since it was recorded: %llu bytes, was %llu", path,
                           (unsigned long long)size, (unsigned long long)shard->size);
    unsigned char known[ORDO_DIGEST_SIZE];
    int found = 0;
    char *key = r->known ? file_key(path) : NULL;
    if (key)
        status = ordo__shard_file_known(r->known, key, size, mtime_ns, known, &found, err);
    free(key);
    if (status != ORDO_OK)
        return status;
    shard->size = size;
    shard->mtime_ns = mtime_ns;
    if (found && (!recorded || memcmp(known, shard->sha256, ORDO_DIGEST_SIZE) == 0)) {
        memcpy(shard->sha256, known, ORDO_DIGEST_SIZE);
        return ORDO_OK;
    }
    unsigned char now[ORDO_DIGEST_SIZE];
    status = hash_whole(r, shard, path, now, err);
    if (status == ORDO_OK && recorded && memcmp(now, shard->sha256, ORDO_DIGEST_SIZE) != 0)
        return refuse_changed(path, shard->sha256, now, size, shard->size, err);
    if (status == ORDO_OK) {
        memcpy(shard->sha256, now, ORDO_DIGEST_SIZE);
        shard->hashed = 1;
    }
    return status;
}

/* Resolves a shard's digest at open; see recipe.h. */
ordo_status ordo__shard_resolve(ordo_recipe *r, ordo__shard *shard, int recorded, ordo_error *err)
{
    char *path = ordo__shard_path(r, shard);
    if (!path)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status status = resolve_at(r, shard, recorded, path, err);
    free(path);
    return status;
}

/* Hashes a shard not hashed yet and compares; see recipe.h. */
ordo_status ordo__shard_check_whole(ordo_recipe *r, ordo__shard *shard, ordo_error *err)
{
    if (shard->hashed)
        return ORDO_OK;
    char *path = ordo__shard_path(r, shard);
    if (!path)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    unsigned char now[ORDO_DIGEST_SIZE];
    ordo_status status = hash_whole(r, shard, path, now, err);
    if (status == ORDO_OK && memcmp(now, shard->sha256, ORDO_DIGEST_SIZE) != 0)
        status = refuse_changed(path, shard->sha256, now, shard->size, shard->size, err);
    shard->hashed = status == ORDO_OK;
    free(path);
    return status;
}

/* Remembers a hashed shard file in the ledger; see recipe.h. */
ordo_status ordo__shard_remember(ordo_ledger *ledger, const ordo_recipe *r,
                                 const ordo__shard *shard, ordo_error *err)
{
    if (!shard->hashed || !shard->mtime_ns)
        return ORDO_OK;
    char *full = ordo__shard_path(r, shard);
    char *path = full ? file_key(full) : NULL;
    free(full);
    if (!path)
        return ORDO_OK; /* not known next time: hashed again */
    ordo_status status =
        ordo__shard_file_record(ledger, path, shard->size, shard->mtime_ns, shard->sha256, err);
    free(path);
    return status;
}
