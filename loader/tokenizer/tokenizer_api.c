/* The public face of the tokenizers: a tiktoken encoding or a
 * tokenizer.json behind one ordo_tokenizer. */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hf.h"

struct ordo_tokenizer {
    ordo__bpe *bpe; /* a tiktoken encoding, or */
    ordo__hf *hf;   /* a tokenizer.json */
    /* opened through ordo__tokenizer_open_shared: the references held (the
     * registry's one among them); 0 for a tokenizer of its own */
    _Atomic int refs;
};

/* Opens an encoding with its rank file. */
ordo_status ordo_tokenizer_open(const char *encoding, const char *ranks_path, ordo_tokenizer **out,
                                ordo_error *err)
{
    *out = NULL;
    const ordo__encoding *e = ordo__encoding_find(encoding);
    char names[256];
    ordo_tokenizer_encodings(names, sizeof names);
    if (!e)
        return ordo__error(err, ORDO_INVALID, "encoding '%s' must be %s", encoding ? encoding : "",
                           names);
    ordo_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status status = ordo__bpe_load(ranks_path, e, &t->bpe, err);
    if (status != ORDO_OK) {
        free(t);
        return status;
    }
    *out = t;
    return ordo__ok(err);
}

/* Opens a tokenizer.json. */
ordo_status ordo_tokenizer_open_json(const char *path, ordo_tokenizer **out, ordo_error *err)
{
    *out = NULL;
    ordo_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status status = ordo__hf_load(path, &t->hf, err);
    if (status != ORDO_OK) {
        free(t);
        return status;
    }
    *out = t;
    return ordo__ok(err);
}

void ordo_tokenizer_close(ordo_tokenizer *t)
{
    if (t && atomic_load(&t->refs) && atomic_fetch_sub(&t->refs, 1) > 1)
        return; /* shared: others hold it */
    if (t) {
        ordo__bpe_free(t->bpe);
        ordo__hf_free(t->hf);
    }
    free(t);
}

/* Appends to a growable buffer; see tokenizer.h. */
ordo_status ordo__tokenizer_append(const ordo_tokenizer *t, const char *text, size_t len,
                                   ordo__tokens *out, ordo_error *err)
{
    return t->hf ? ordo__hf_encode(t->hf, text, len, out, err)
                 : ordo__bpe_encode(t->bpe, text, len, out, err);
}

/* A prefix of the ids of ordinary text; see tokenizer.h. */
ordo_status ordo__tokenizer_append_upto(const ordo_tokenizer *t, const char *text, size_t len,
                                        size_t stop, ordo__tokens *out, int *complete,
                                        ordo_error *err)
{
    return t->hf ? ordo__hf_encode_upto(t->hf, text, len, stop, out, complete, err)
                 : ordo__bpe_encode_upto(t->bpe, text, len, stop, out, complete, err);
}

/* The encoding, or NULL for a tokenizer.json. */
const ordo__encoding *ordo__tokenizer_encoding(const ordo_tokenizer *t)
{
    return t->bpe ? ordo__bpe_encoding(t->bpe) : NULL;
}

/* Encodes into a caller-owned array. */
ordo_status ordo_tokenizer_encode(const ordo_tokenizer *t, const char *text, size_t len,
                                  uint32_t **ids, size_t *count, ordo_error *err)
{
    ordo__tokens tokens = {0};
    ordo_status status = ordo__tokenizer_append(t, text, len, &tokens, err);
    if (status != ORDO_OK) {
        free(tokens.ids);
        *ids = NULL;
        *count = 0;
        return status;
    }
    *ids = tokens.ids;
    *count = tokens.count;
    return ordo__ok(err);
}

/* Decodes into a caller-owned buffer. */
ordo_status ordo_tokenizer_decode(const ordo_tokenizer *t, const uint32_t *ids, size_t count,
                                  char **bytes, size_t *len, ordo_error *err)
{
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_status status = ORDO_OK;
    for (size_t i = 0; i < count && status == ORDO_OK; i++)
        status = t->hf ? ordo__hf_decode(t->hf, ids[i], &buffer, &used, &capacity, err)
                       : ordo__bpe_decode(t->bpe, ids[i], &buffer, &used, &capacity, err);
    if (status != ORDO_OK) {
        free(buffer);
        *bytes = NULL;
        *len = 0;
        return status;
    }
    *bytes = buffer;
    *len = used;
    return ordo__ok(err);
}

/* Valid UTF-8 of any bytes, as the tokenizers read them. */
ordo_status ordo_utf8_repair(const char *text, size_t len, char **copy, size_t *copy_len,
                             ordo_error *err)
{
    return ordo__utf8_repair(text, len, copy, copy_len, err);
}

/* A special token of an encoding, or a token of a tokenizer.json. */
ordo_status ordo_tokenizer_token_id(const ordo_tokenizer *t, const char *content, uint32_t *id,
                                    ordo_error *err)
{
    if (t->hf) {
        if (content && ordo__hf_token_id(t->hf, content, id))
            return ordo__ok(err);
        return ordo__error(err, ORDO_NOTFOUND, "token '%s' is not a token of the tokenizer.json",
                           content ? content : "");
    }
    const ordo__encoding *e = ordo__bpe_encoding(t->bpe);
    if (ordo__encoding_special(e, content, id))
        return ordo__ok(err);
    char names[512];
    ordo__encoding_specials(e, names, sizeof names);
    return ordo__error(err, ORDO_NOTFOUND,
                       "token '%s' is not a special token of %s (its special tokens: %s)",
                       content ? content : "", e->name, names);
}

uint32_t ordo_tokenizer_eot(const ordo_tokenizer *t)
{
    return t->hf ? UINT32_MAX : ordo__bpe_encoding(t->bpe)->eot;
}

uint32_t ordo_tokenizer_vocab_size(const ordo_tokenizer *t)
{
    return t->hf ? ordo__hf_vocab_size(t->hf) : ordo__bpe_encoding(t->bpe)->vocab_size;
}

/* The tokenizers opened through ordo__tokenizer_open_shared, the most
 * recently used first: each holds one reference here. */
#define SHARED_KEPT 4
typedef struct kept_tokenizer {
    ordo_tokenizer *tokenizer;
    char encoding[32]; /* "" for a tokenizer.json */
    unsigned char sha256[ORDO_DIGEST_SIZE];
} kept_tokenizer;
static struct {
    pthread_mutex_t mutex;
    kept_tokenizer kept[SHARED_KEPT];
} shared = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* The kept tokenizer of this file and kind with a reference taken, or
 * NULL; under the lock. */
static ordo_tokenizer *shared_find(const char *encoding, const unsigned char *sha256)
{
    for (int i = 0; i < SHARED_KEPT; i++)
        if (shared.kept[i].tokenizer && strcmp(shared.kept[i].encoding, encoding) == 0 &&
            memcmp(shared.kept[i].sha256, sha256, ORDO_DIGEST_SIZE) == 0) {
            ordo_tokenizer *t = shared.kept[i].tokenizer;
            atomic_fetch_add(&t->refs, 1);
            if (i > 0) { /* the most recently used first */
                kept_tokenizer hit = shared.kept[i];
                memmove(&shared.kept[1], &shared.kept[0], (size_t)i * sizeof shared.kept[0]);
                shared.kept[0] = hit;
            }
            return t;
        }
    return NULL;
}

/* Keeps a newly opened tokenizer (refs 1: the caller's), dropping the
 * oldest kept one's reference when all places are taken; under the lock. */
static void shared_keep(ordo_tokenizer *t, const char *encoding, const unsigned char *sha256)
{
    ordo_tokenizer *oldest = shared.kept[SHARED_KEPT - 1].tokenizer;
    memmove(&shared.kept[1], &shared.kept[0], (SHARED_KEPT - 1) * sizeof shared.kept[0]);
    atomic_store(&t->refs, 2);
    shared.kept[0].tokenizer = t;
    snprintf(shared.kept[0].encoding, sizeof shared.kept[0].encoding, "%s", encoding);
    memcpy(shared.kept[0].sha256, sha256, ORDO_DIGEST_SIZE);
    ordo_tokenizer_close(oldest);
}

/* A tokenizer of the caller's own: the encoding's ranks, or a tokenizer.json. */
static ordo_status open_own(const char *encoding, const char *path, ordo_tokenizer **out,
                            ordo_error *err)
{
    return encoding ? ordo_tokenizer_open(encoding, path, out, err)
                    : ordo_tokenizer_open_json(path, out, err);
}

/* Opens a tokenizer whose file has SHA-256 `sha256`, shared; see
 * tokenizer.h. */
ordo_status ordo__tokenizer_open_shared(const char *encoding, const char *path,
                                        const unsigned char *sha256, ordo_tokenizer **out,
                                        ordo_error *err)
{
    const char *kind = encoding ? encoding : "";
    if (strlen(kind) >= sizeof shared.kept[0].encoding)
        return open_own(encoding, path, out, err);
    pthread_mutex_lock(&shared.mutex);
    *out = shared_find(kind, sha256);
    pthread_mutex_unlock(&shared.mutex);
    if (*out)
        return ordo__ok(err);
    ordo_status status = open_own(encoding, path, out, err);
    if (status != ORDO_OK)
        return status;
    /* the file must still have the digest once read: one replaced meanwhile
     * is refused (ORDO_CONFLICT), never kept to serve later recipes pinning
     * that digest */
    unsigned char now[ORDO_DIGEST_SIZE];
    uint64_t size = 0;
    status = ordo__sha256_file(path, now, &size, err);
    if (status == ORDO_OK && memcmp(now, sha256, ORDO_DIGEST_SIZE) != 0) {
        char was[ORDO_DIGEST_HEX_SIZE], is[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(sha256, was);
        ordo_digest_to_hex(now, is);
        status = ordo__error(err, ORDO_CONFLICT,
                             "tokenizer file '%s' changed while it was opened (SHA-256 %s, "
                             "now %s)",
                             path, was, is);
    }
    if (status != ORDO_OK) {
        ordo_tokenizer_close(*out);
        *out = NULL;
        return status;
    }
    pthread_mutex_lock(&shared.mutex);
    ordo_tokenizer *other = shared_find(kind, sha256); /* opened meanwhile by another thread */
    if (other) {
        ordo_tokenizer_close(*out);
        *out = other;
    } else {
        shared_keep(*out, kind, sha256);
    }
    pthread_mutex_unlock(&shared.mutex);
    return ORDO_OK;
}
